// SPDX-License-Identifier: Apache-2.0
package org.idmint;

/**
 * One worker-id lease of a snowflake namespace, as {@link Authority#workers(String)} lists it.
 *
 * @param region the region of the worker id
 * @param workerId the worker id
 * @param holder the holder's fingerprint (the first 8 hex digits of its id); "" when released
 * @param generation grows with every take
 * @param leaseUntil E, the lease's end in the namespace's time units
 */
public record Worker(int region, int workerId, String holder, long generation, long leaseUntil) {
    static Worker fromNative(String holder, long[] n) {
        return new Worker((int) n[0], (int) n[1], holder, n[2], n[3]);
    }
}
