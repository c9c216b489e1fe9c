// SPDX-License-Identifier: Apache-2.0
package org.idmint;

import java.time.Instant;
import java.util.Objects;
import java.util.UUID;

/**
 * What needs no handle: UUIDv7, taking an ID apart, the IDs of a time window, the library's
 * version. Every method is thread-safe.
 */
public final class Idmint {
    private Idmint() {}

    /** The largest count one {@link Minter#nextN(int)} or {@link #uuid7(int)} takes. */
    public static final int MAX_BATCH = 100_000_000;

    /** The library's version as "MAJOR.MINOR.PATCH". */
    public static String version() {
        int v = Native.version();
        return (v >> 16) + "." + ((v >> 8) & 0xff) + "." + (v & 0xff);
    }

    /**
     * A UUIDv7 (RFC 9562): 48-bit Unix ms, then a counter and random bits; strictly increasing
     * across the process, all threads.
     *
     * @throws IdmintException.Unavailable no randomness from the kernel
     */
    public static UUID uuid7() {
        long[] two = new long[2];
        Native.uuid7(two, 1);
        return new UUID(two[0], two[1]);
    }

    /**
     * n UUIDv7 (0 gives none), increasing through the array, about five times faster each than
     * single calls.
     *
     * @throws IdmintException.InvalidArgument n outside 0..MAX_BATCH
     */
    public static UUID[] uuid7(int n) {
        checkCount(n);
        long[] halves = new long[2 * n];
        Native.uuid7(halves, n);
        UUID[] out = new UUID[n];
        for (int i = 0; i < n; i++) {
            out[i] = new UUID(halves[2 * i], halves[2 * i + 1]);
        }
        return out;
    }

    /**
     * Takes a snowflake ID apart by a namespace's layout.
     *
     * @throws IdmintException.InvalidArgument an invalid layout, or an ID the layout cannot hold
     *     (0, negative, bits above T+R+W+S)
     * @throws NullPointerException a null layout
     */
    public static Decoded decode(Layout layout, long id) {
        Objects.requireNonNull(layout, "layout");
        long[] d = Native.decode(layout.timeBits(), layout.regionBits(), layout.workerBits(),
                layout.sequenceBits(), layout.unitMs(), layout.epochMs(), id);
        return new Decoded(d[0], Instant.ofEpochMilli(d[1]), (int) d[2], (int) d[3], d[4]);
    }

    /**
     * The lowest and highest ID of the layout whose time falls in [from, to): exact at the edges
     * of time units, a whole unit where an edge falls inside one. {@link Authority#bounds} also
     * keeps above a namespace's floor.
     *
     * @throws IdmintException.InvalidArgument an invalid layout, an empty window, from before the
     *     epoch or to past the end of the time bits
     * @throws NullPointerException a null argument
     */
    public static IdBounds bounds(Layout layout, Instant from, Instant to) {
        Objects.requireNonNull(layout, "layout");
        long[] b = Native.bounds(layout.timeBits(), layout.regionBits(), layout.workerBits(),
                layout.sequenceBits(), layout.unitMs(), layout.epochMs(),
                Objects.requireNonNull(from, "from").toEpochMilli(),
                Objects.requireNonNull(to, "to").toEpochMilli());
        return new IdBounds(b[0], b[1]);
    }

    static void checkCount(int n) {
        if (n < 0 || n > MAX_BATCH) {
            throw IdmintException.invalid("n " + n + " is outside 1.." + MAX_BATCH);
        }
    }
}
