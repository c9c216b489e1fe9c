// SPDX-License-Identifier: Apache-2.0
package org.idmint;

import java.time.Instant;

/**
 * A grant that covers an ID ({@link Authority#trace(String, long)}): the worker lease or range
 * under which it was minted, and who held it.
 *
 * @param range true for a range reservation, false for a worker lease
 * @param region snowflake: the region of the worker id
 * @param workerId snowflake: the worker id
 * @param generation snowflake: the worker id's generation under this grant
 * @param first snowflake: E found at take (time units); range: its first value
 * @param last exclusive: snowflake: the last E stored for it; range: its end
 * @param holder the holder's fingerprint
 * @param host the host name the holder gave
 * @param pid the process id the holder gave
 * @param program the program name the holder gave
 * @param token the token name it came with over HTTP; "" when local
 * @param granted when it was taken or reserved
 * @param updated its last renewal or release
 * @param text the library's one-line description of it
 */
public record Grant(boolean range, int region, int workerId, long generation, long first,
        long last, String holder, String host, long pid, String program, String token,
        Instant granted, Instant updated, String text) {
    static Grant fromNative(String[] s, long[] n) {
        return new Grant(n[0] == 2, (int) n[1], (int) n[2], n[3], n[4], n[5], s[0], s[1], n[6], s[2],
                s[3], Instant.ofEpochMilli(n[7]), Instant.ofEpochMilli(n[8]), s[4]);
    }
}
