// SPDX-License-Identifier: Apache-2.0
package org.idmint;

import java.time.Instant;

/**
 * One record of the authority's audit log ({@link Authority#audit(long, int)}).
 *
 * @param seq grows with every record
 * @param at when it was recorded
 * @param actor who did it
 * @param action "ns.create", "worker.take", "worker.force_release", ...
 * @param namespace the namespace
 * @param detail human-readable detail
 */
public record AuditEntry(long seq, Instant at, String actor, String action, String namespace,
        String detail) {
    static AuditEntry fromNative(String actor, String action, String ns, String detail, long[] n) {
        return new AuditEntry(n[0], Instant.ofEpochMilli(n[1]), actor, action, ns, detail);
    }
}
