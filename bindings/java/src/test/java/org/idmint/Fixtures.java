// SPDX-License-Identifier: Apache-2.0
package org.idmint;

import java.nio.file.Path;

/** What the tests share: a private authority in a test's temporary folder. */
final class Fixtures {
    private Fixtures() {}

    static String authority(Path dir) {
        return "sqlite:" + dir.resolve("idmint.db");
    }

    /** Creates a range namespace with the given block on a new authority; returns its URL. */
    static String withRange(Path dir, String ns, int block) {
        String url = authority(dir);
        try (Authority a = Authority.open(url, 0)) {
            a.createRange(ns, 1, 0, block, Math.max(block, 1_000_000));
        }
        return url;
    }
}
