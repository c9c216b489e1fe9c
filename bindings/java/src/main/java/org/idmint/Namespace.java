// SPDX-License-Identifier: Apache-2.0
package org.idmint;

import java.time.Instant;

/**
 * A namespace as the authority keeps it ({@link Authority#namespace(String)}).
 *
 * @param name the name, [a-z0-9][a-z0-9_.-]{0,62}
 * @param range true for a range namespace, false for snowflake
 * @param disabled true when disabled
 * @param created when it was created
 * @param layout snowflake: its layout; null for a range namespace
 * @param nextValue range: the next value to reserve
 * @param maxValue range: the last value that may be issued
 * @param block range: the default block
 * @param maxBlock range: the largest block one reservation may take
 * @param floor no ID at or below this is ever issued (0: none)
 * @param origin the namespace this one was migrated from; "" if none
 */
public record Namespace(String name, boolean range, boolean disabled, Instant created,
        Layout layout, long nextValue, long maxValue, int block, int maxBlock, long floor,
        String origin) {
    static Namespace fromNative(String name, String origin, long[] n) {
        boolean range = n[0] == 2;
        Layout layout = range ? null
                : new Layout((int) n[3], (int) n[4], (int) n[5], (int) n[6], (int) n[7], n[8]);
        return new Namespace(name, range, n[1] != 0, Instant.ofEpochMilli(n[2]), layout, n[9],
                n[10], (int) n[11], (int) n[12], n[13], origin);
    }
}
