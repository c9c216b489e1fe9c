// SPDX-License-Identifier: Apache-2.0
package org.idmint;

import java.time.Instant;

/**
 * The bit layout of a snowflake namespace: T time bits, R region bits, W worker bits, S sequence
 * bits, the length of one time unit and the epoch (docs/design.md, "Snowflake IDs"). The library
 * judges a layout ({@link #validate()}); this record only carries it.
 *
 * @param timeBits T: time units since the epoch
 * @param regionBits R
 * @param workerBits W
 * @param sequenceBits S
 * @param unitMs milliseconds per time unit
 * @param epochMs Unix ms of time unit 0
 */
public record Layout(int timeBits, int regionBits, int workerBits, int sequenceBits, int unitMs,
        long epochMs) {

    /** The default layout: 41/0/10/12, 1 ms units, epoch 2026-01-01T00:00:00Z. */
    public static Layout defaults() {
        long[] l = Native.layoutDefault();
        return new Layout((int) l[0], (int) l[1], (int) l[2], (int) l[3], (int) l[4], l[5]);
    }

    /** This layout with other bit counts, T/R/W/S. */
    public Layout withBits(int t, int r, int w, int s) {
        return new Layout(t, r, w, s, unitMs, epochMs);
    }

    /** This layout with another unit length. */
    public Layout withUnitMs(int ms) {
        return new Layout(timeBits, regionBits, workerBits, sequenceBits, ms, epochMs);
    }

    /** This layout with another epoch. */
    public Layout withEpoch(Instant epoch) {
        return new Layout(timeBits, regionBits, workerBits, sequenceBits, unitMs,
                epoch.toEpochMilli());
    }

    /**
     * Checks the layout as the library does before it creates a namespace with it.
     *
     * @throws IdmintException.InvalidArgument naming the bad value
     */
    public void validate() {
        Native.layoutValidate(timeBits, regionBits, workerBits, sequenceBits, unitMs, epochMs);
    }

    /** "T/R/W/S", as the CLI writes it. */
    public String bits() {
        return timeBits + "/" + regionBits + "/" + workerBits + "/" + sequenceBits;
    }
}
