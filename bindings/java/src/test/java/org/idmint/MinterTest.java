// SPDX-License-Identifier: Apache-2.0
package org.idmint;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MinterTest {
    @TempDir Path dir;

    @Test
    void snowflakeIdsIncreaseAndDecodeToTheirLease() {
        try (Minter m = Minter.open(Fixtures.authority(dir), "default")) {
            long a = m.next();
            long b = m.next();
            long[] batch = m.nextN(5000);
            assertTrue(a > 0 && b > a && batch[0] > b, "IDs increase: " + a + " " + b);
            for (int i = 1; i < batch.length; i++) {
                assertTrue(batch[i] > batch[i - 1], "batch increases at " + i);
            }
            MinterInfo info = m.info();
            assertFalse(info.range());
            assertEquals("41/0/10/12", info.layout().bits());
            assertEquals(32, info.incarnation().length());
            assertFalse(info.toString().contains(info.incarnation()), "the secret stays out of logs");
            assertTrue(info.toString().contains(info.incarnation().substring(0, 8)));
            Decoded d = Idmint.decode(info.layout(), batch[batch.length - 1]);
            assertEquals(info.workerId(), d.worker());
            assertEquals(0, d.region());
            Duration age = Duration.between(d.time(), Instant.now()).abs();
            assertTrue(age.toMinutes() < 5, "the ID's time is now: " + d.time());
            assertEquals(0, m.leaseStatus());
        }
    }

    @Test
    void fillWritesOnlyItsSlice() {
        String url = Fixtures.withRange(dir, "orders", 1000);
        try (Minter m = Minter.open(url, "orders")) {
            long[] dst = new long[10];
            Arrays.fill(dst, -7);
            m.fill(dst, 3, 4);
            assertEquals(-7, dst[2]);
            assertEquals(-7, dst[7]);
            for (int i = 3; i < 7; i++) {
                assertTrue(dst[i] > 0, "slot " + i + " holds an ID");
            }
            assertTrue(m.info().range());
            assertNull(m.info().layout());
            assertThrows(IndexOutOfBoundsException.class, () -> m.fill(dst, 8, 4));
            assertThrows(NullPointerException.class, () -> m.fill(null));
        }
    }

    @Test
    void badCountsRaiseInvalidArgumentWithTheMessage() {
        try (Minter m = Minter.open(Fixtures.authority(dir), "default")) {
            var neg = assertThrows(IdmintException.InvalidArgument.class, () -> m.nextN(-1));
            assertEquals(-1, neg.code());
            assertEquals("EINVAL", neg.name());
            assertEquals("n -1 is outside 1.." + Idmint.MAX_BATCH, neg.detail());
            assertEquals("invalid argument: n -1 is outside 1..100000000", neg.getMessage());
            var big = assertThrows(IdmintException.InvalidArgument.class,
                    () -> m.nextN(Idmint.MAX_BATCH + 1));
            assertTrue(big.detail().contains("100000001"), big.getMessage());
            // Zero is the library's to judge: its own words come through.
            var zero = assertThrows(IdmintException.InvalidArgument.class, () -> m.nextN(0));
            assertTrue(zero.detail().contains("n >= 1"), zero.getMessage());
            assertEquals(Native.strerror(-1), zero.text());
        }
    }

    @Test
    void nullsAndBadNamesAreRefusedBeforeAnythingIsCreated() {
        var noAuthority = assertThrows(IdmintException.InvalidArgument.class,
                () -> Minter.open(null, "default"));
        assertTrue(noAuthority.getMessage().contains("authority is null"));
        assertThrows(IdmintException.InvalidArgument.class,
                () -> Minter.open(Fixtures.authority(dir), null));
        var badName = assertThrows(IdmintException.InvalidArgument.class,
                () -> Minter.open(Fixtures.authority(dir), "Bad Name!"));
        assertFalse(badName.detail().isEmpty(), "the library says what is wrong");
        var badUrl = assertThrows(IdmintException.InvalidArgument.class,
                () -> Minter.open("nosuch:/x", "default"));
        assertFalse(badUrl.detail().isEmpty());
        assertThrows(IdmintException.InvalidArgument.class, () -> new MinterOptions().leaseMs(-5));
    }

    @Test
    void missingNamespaceIsNotFound() {
        var e = assertThrows(IdmintException.NotFound.class,
                () -> Minter.open(Fixtures.authority(dir), "nosuch"));
        assertEquals(-3, e.code());
        assertTrue(e.getMessage().contains("nosuch"), e.getMessage());
        try (Authority a = Authority.open(Fixtures.authority(dir), 0)) {
            assertTrue(a.namespaces().stream().noneMatch(ns -> ns.name().equals("nosuch")),
                    "opening created nothing");
        }
    }

    @Test
    void closedMinterThrowsIllegalState() {
        Minter m = Minter.open(Fixtures.authority(dir), "default");
        m.next();
        m.close();
        m.close(); // idempotent
        var e = assertThrows(IllegalStateException.class, m::next);
        assertEquals("minter is closed", e.getMessage());
        assertThrows(IllegalStateException.class, () -> m.nextN(3));
        assertThrows(IllegalStateException.class, m::info);
        assertThrows(IllegalStateException.class, m::leaseStatus);
    }

    @Test
    void closeReleasesTheLease() {
        String url = Fixtures.authority(dir);
        int worker;
        try (Minter m = Minter.open(url, "default")) {
            worker = m.info().workerId();
            try (Authority a = Authority.open(url, 0)) {
                assertTrue(a.workers("default").stream()
                        .anyMatch(w -> w.workerId() == worker && !w.holder().isEmpty()));
            }
        }
        try (Authority a = Authority.open(url, 0)) {
            assertTrue(a.workers("default").stream()
                    .noneMatch(w -> w.workerId() == worker && !w.holder().isEmpty()),
                    "released at close");
        }
    }

    @Test
    void twoMintersOfOneNamespaceNeverShareAnId() {
        String url = Fixtures.withRange(dir, "r", 100);
        try (Minter a = Minter.open(url, "r"); Minter b = Minter.open(url, "r");
                Minter c = Minter.open(url, "default"); Minter d = Minter.open(url, "default")) {
            assertNotEquals(c.info().workerId(), d.info().workerId());
            long[] all = new long[8000];
            for (int i = 0; i < 2000; i++) {
                all[4 * i] = a.next();
                all[4 * i + 1] = b.next();
                all[4 * i + 2] = c.next();
                all[4 * i + 3] = d.next();
            }
            long[] range = new long[4000];
            long[] snow = new long[4000];
            for (int i = 0; i < 2000; i++) {
                range[2 * i] = all[4 * i];
                range[2 * i + 1] = all[4 * i + 1];
                snow[2 * i] = all[4 * i + 2];
                snow[2 * i + 1] = all[4 * i + 3];
            }
            assertEquals(4000, Arrays.stream(range).distinct().count());
            assertEquals(4000, Arrays.stream(snow).distinct().count());
            assertArrayEquals(new long[0], Arrays.stream(range).filter(v -> v <= 0).toArray());
        }
    }
}
