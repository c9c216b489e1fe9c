// SPDX-License-Identifier: Apache-2.0
package org.idmint;

import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;

/**
 * A minting process for DurabilityTest: mints batches from a snowflake and a range namespace in
 * turn and appends each batch to its file (8-byte little-endian IDs) as soon as it is minted,
 * until it has written the count it was given, then closes cleanly. A kill -9 may come at any
 * point: what is in the files was minted, what was minted and not written is a gap.
 *
 * <p>Usage: MintChild AUTHORITY SNOWFLAKE_NS RANGE_NS OUT_PREFIX COUNT
 */
public final class MintChild {
    private MintChild() {}

    public static void main(String[] args) throws IOException {
        String url = args[0];
        long count = Long.parseLong(args[4]);
        try (Minter flake = Minter.open(url, args[1]);
                Minter range = Minter.open(url, args[2]);
                FileChannel flakeOut = new FileOutputStream(args[3] + ".flake", true).getChannel();
                FileChannel rangeOut = new FileOutputStream(args[3] + ".range", true).getChannel()) {
            long[] ids = new long[1000];
            ByteBuffer buf = ByteBuffer.allocate(8 * ids.length).order(ByteOrder.LITTLE_ENDIAN);
            System.out.println("minting");
            System.out.flush();
            for (long done = 0; done < count; done += ids.length) {
                flake.fill(ids);
                write(flakeOut, buf, ids);
                range.fill(ids);
                write(rangeOut, buf, ids);
            }
        }
    }

    private static void write(FileChannel out, ByteBuffer buf, long[] ids) throws IOException {
        buf.clear();
        buf.asLongBuffer().put(ids);
        buf.limit(8 * ids.length);
        while (buf.hasRemaining()) {
            out.write(buf);
        }
    }
}
