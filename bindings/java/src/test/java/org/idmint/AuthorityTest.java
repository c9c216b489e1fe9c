// SPDX-License-Identifier: Apache-2.0
package org.idmint;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AuthorityTest {
    @TempDir Path dir;

    @Test
    void namespacesAreCreatedListedAndRefusedTwice() {
        try (Authority a = Authority.open(Fixtures.authority(dir), 0)) {
            a.createSnowflake("feed", Layout.defaults().withBits(39, 2, 10, 12).withUnitMs(10));
            a.createRange("orders", 1000, 0, 500, 100_000);
            Namespace feed = a.namespace("feed");
            assertFalse(feed.range());
            assertEquals("39/2/10/12", feed.layout().bits());
            assertEquals(10, feed.layout().unitMs());
            Namespace orders = a.namespace("orders");
            assertTrue(orders.range());
            assertEquals(1000, orders.nextValue());
            assertEquals(500, orders.block());
            assertEquals(100_000, orders.maxBlock());
            List<String> names = a.namespaces().stream().map(Namespace::name).toList();
            assertTrue(names.containsAll(List.of("feed", "orders")), names.toString());
            var e = assertThrows(IdmintException.Conflict.class,
                    () -> a.createRange("orders", 1, 0, 0, 0));
            assertEquals(-11, e.code());
            assertThrows(IdmintException.InvalidArgument.class,
                    () -> a.createSnowflake("bad", Layout.defaults().withBits(60, 0, 10, 12)));
            assertThrows(IdmintException.InvalidArgument.class,
                    () -> a.createRange("neg", -1, 0, 0, 0));
            assertThrows(IdmintException.NotFound.class, () -> a.namespace("nosuch"));
            assertTrue(a.audit(0, 100).stream().anyMatch(
                    r -> r.action().equals("ns.create") && r.namespace().equals("orders")));
        }
    }

    @Test
    void rangeMinterStartsAtTheNamespacesStart() {
        String url = Fixtures.authority(dir);
        try (Authority a = Authority.open(url, 0)) {
            a.createRange("orders", 5000, 0, 100, 0);
        }
        try (Minter m = Minter.open(url, "orders")) {
            assertEquals(5000, m.next());
        }
    }

    @Test
    void aDisabledNamespaceOpensNoMinter() {
        String url = Fixtures.authority(dir);
        try (Authority a = Authority.open(url, 0)) {
            a.createRange("orders", 1, 0, 100, 0);
            a.disable("orders");
            assertTrue(a.namespace("orders").disabled());
            assertThrows(IdmintException.Disabled.class, () -> Minter.open(url, "orders"));
            a.enable("orders");
        }
        try (Minter m = Minter.open(url, "orders")) {
            assertTrue(m.next() >= 1);
        }
    }

    @Test
    void aForcedReleaseStopsTheHolder() throws InterruptedException {
        String url = Fixtures.authority(dir);
        MinterOptions fast = new MinterOptions().leaseMs(2000).renewMs(100);
        try (Minter m = Minter.open(url, "default", fast); Authority a = Authority.open(url, 0)) {
            long id = m.next();
            MinterInfo info = m.info();
            List<Grant> grants = a.trace("default", id);
            assertEquals(1, grants.size(), grants.toString());
            assertEquals(info.workerId(), grants.get(0).workerId());
            assertFalse(grants.get(0).range());
            assertFalse(grants.get(0).text().isEmpty());
            a.forceRelease("default", 0, info.workerId());
            // The holder learns at its next renewal (every 100 ms); wait up to 20 s.
            for (int i = 0; i < 200 && m.leaseStatus() == 0; i++) {
                Thread.sleep(100);
            }
            assertEquals(-7, m.leaseStatus());
            assertThrows(IdmintException.LeaseLost.class, m::next);
            assertTrue(a.audit(0, 1000).stream()
                    .anyMatch(r -> r.action().equals("worker.force_release")));
        }
    }

    @Test
    void boundsKeepAboveTheNamespacesFloorAndRefuseRanges() {
        try (Authority a = Authority.open(Fixtures.authority(dir), 0)) {
            a.createRange("orders", 1, 0, 100, 0);
            Instant from = Instant.parse("2026-06-01T00:00:00Z");
            IdBounds b = a.bounds("default", from, from.plusSeconds(1));
            assertEquals(Idmint.bounds(Layout.defaults(), from, from.plusSeconds(1)), b);
            assertThrows(IdmintException.InvalidArgument.class,
                    () -> a.bounds("orders", from, from.plusSeconds(1)));
        }
    }

    @Test
    void backupWritesAMarkedCopyAndClosedAuthoritiesRefuse() {
        Authority a = Authority.open(Fixtures.authority(dir), 0);
        a.namespace("default");
        Path copy = dir.resolve("copy.db");
        a.backup(copy.toString());
        assertTrue(Files.exists(copy));
        a.close();
        a.close();
        var e = assertThrows(IllegalStateException.class, a::namespaces);
        assertEquals("authority is closed", e.getMessage());
        // A marked backup is refused until fenced.
        var restored = assertThrows(IdmintException.class,
                () -> Minter.open("sqlite:" + copy, "default"));
        assertTrue(restored.code() == -15 || restored.code() == -12, restored.getMessage());
        assertThrows(IdmintException.InvalidArgument.class, () -> Authority.open(null, 0));
        assertThrows(IdmintException.InvalidArgument.class,
                () -> Authority.open(Fixtures.authority(dir), -1));
        try (Authority again = Authority.open(Fixtures.authority(dir), 0)) {
            assertThrows(IdmintException.InvalidArgument.class, () -> again.audit(0, 0));
        }
        assertThrows(IdmintException.NotFound.class,
                () -> Authority.openExisting("sqlite:" + dir.resolve("none.db"), 0));
    }
}
