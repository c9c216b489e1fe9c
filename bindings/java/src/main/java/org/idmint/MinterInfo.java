// SPDX-License-Identifier: Apache-2.0
package org.idmint;

/**
 * What a {@link Minter} holds ({@link Minter#info()}); idmint_handle_info in idmint.h says more.
 *
 * @param range true for a range namespace
 * @param region snowflake: the region of the lease
 * @param workerId snowflake: the leased worker id
 * @param generation snowflake: the lease's generation
 * @param fenceFound snowflake: E found at take (time units)
 * @param leaseUntil snowflake: the lease's own E now (time units)
 * @param lastTime snowflake: time units of the last ID minted
 * @param layout snowflake: the namespace's layout; null for a range handle
 * @param rangeLeft range: values reserved and not yet handed out
 * @param incarnation this handle's holder id: the lease's secret, so {@link #toString()} shows
 *     only its first 8 hex digits, as the authority's lists do
 * @param sequenceWaits snowflake: calls that waited for the next time unit
 * @param rangeBlock range: values the latest reservation asked for
 * @param rangeRate range: values handed out per second, as last sampled; 0: unknown
 * @param outageBudgetMs how long the handle can go on minting without its authority
 *     (Long.MAX_VALUE while a range handle's rate is unknown)
 * @param rangeReservations range: reservations since the handle opened
 */
public record MinterInfo(boolean range, int region, int workerId, long generation,
        long fenceFound, long leaseUntil, long lastTime, Layout layout, long rangeLeft,
        String incarnation, long sequenceWaits, long rangeBlock, long rangeRate,
        long outageBudgetMs, long rangeReservations) {
    /** How many longs Native.info returns, in this order (jni_minter.c). */
    static final int NUMBERS = 19;

    @Override
    public String toString() {
        String shown = incarnation.length() > 8 ? incarnation.substring(0, 8) + "..." : incarnation;
        return "MinterInfo[range=" + range + ", region=" + region + ", workerId=" + workerId
                + ", generation=" + generation + ", fenceFound=" + fenceFound + ", leaseUntil="
                + leaseUntil + ", lastTime=" + lastTime + ", layout=" + layout + ", rangeLeft="
                + rangeLeft + ", incarnation=" + shown + ", sequenceWaits=" + sequenceWaits
                + ", rangeBlock=" + rangeBlock + ", rangeRate=" + rangeRate + ", outageBudgetMs="
                + outageBudgetMs + ", rangeReservations=" + rangeReservations + "]";
    }

    static MinterInfo fromNative(long[] n, String incarnation) {
        boolean range = n[0] != 0;
        Layout layout = range ? null
                : new Layout((int) n[7], (int) n[8], (int) n[9], (int) n[10], (int) n[11], n[12]);
        return new MinterInfo(range, (int) n[1], (int) n[2], n[3], n[4], n[5], n[6], layout, n[13],
                incarnation, n[14], n[15], n[16], n[17] < 0 ? Long.MAX_VALUE : n[17],
                n[18]);
    }
}
