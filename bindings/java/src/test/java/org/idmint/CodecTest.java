// SPDX-License-Identifier: Apache-2.0
package org.idmint;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class CodecTest {
    private static int compareUnsigned(UUID a, UUID b) {
        int c = Long.compareUnsigned(a.getMostSignificantBits(), b.getMostSignificantBits());
        return c != 0 ? c : Long.compareUnsigned(a.getLeastSignificantBits(),
                b.getLeastSignificantBits());
    }

    @Test
    void uuid7IsVersion7AndIncreases() {
        long before = System.currentTimeMillis();
        UUID a = Idmint.uuid7();
        UUID[] batch = Idmint.uuid7(1000);
        UUID z = Idmint.uuid7();
        assertEquals(7, a.version());
        assertEquals(2, a.variant());
        long ms = a.getMostSignificantBits() >>> 16;
        assertTrue(ms >= before - 1000 && ms <= System.currentTimeMillis() + 1000, "time " + ms);
        UUID prev = a;
        for (UUID u : batch) {
            assertEquals(7, u.version());
            assertTrue(compareUnsigned(u, prev) > 0, u + " after " + prev);
            prev = u;
        }
        assertTrue(compareUnsigned(z, prev) > 0);
        assertEquals(0, Idmint.uuid7(0).length);
        assertThrows(IdmintException.InvalidArgument.class, () -> Idmint.uuid7(-1));
        // The text form is the library's (idmint_uuid_format): lowercase, 36 characters.
        assertEquals(36, a.toString().length());
    }

    @Test
    void decodeTakesApartWhatTheLayoutPutTogether() {
        Layout l = Layout.defaults();
        assertEquals("41/0/10/12", l.bits());
        assertEquals(1, l.unitMs());
        assertEquals(Instant.parse("2026-01-01T00:00:00Z").toEpochMilli(), l.epochMs());
        long units = 123_456_789L;
        long id = (units << 22) | (517L << 12) | 4000L;
        Decoded d = Idmint.decode(l, id);
        assertEquals(units, d.timeUnits());
        assertEquals(517, d.worker());
        assertEquals(4000, d.sequence());
        assertEquals(0, d.region());
        assertEquals(Instant.ofEpochMilli(l.epochMs() + units), d.time());

        Layout regions = l.withBits(39, 2, 10, 12).withUnitMs(10);
        long rid = (5L << 24) | (3L << 22) | (9L << 12) | 1L;
        Decoded r = Idmint.decode(regions, rid);
        assertEquals(3, r.region());
        assertEquals(9, r.worker());
        assertEquals(Instant.ofEpochMilli(l.epochMs() + 50), r.time());
    }

    @Test
    void decodeRefusesWhatNoLayoutHolds() {
        Layout l = Layout.defaults();
        assertThrows(IdmintException.InvalidArgument.class, () -> Idmint.decode(l, 0));
        assertThrows(IdmintException.InvalidArgument.class, () -> Idmint.decode(l, -5));
        Layout small = l.withBits(20, 0, 4, 4);
        var e = assertThrows(IdmintException.InvalidArgument.class,
                () -> Idmint.decode(small, 1L << 40));
        assertTrue(!e.detail().isEmpty(), "the library says why");
        assertThrows(IdmintException.InvalidArgument.class,
                () -> Idmint.decode(l.withBits(300, 0, 10, 12), 1));
        assertThrows(NullPointerException.class, () -> Idmint.decode(null, 1));
    }

    @Test
    void layoutValidationIsTheLibrarys() {
        Layout.defaults().validate();
        var e = assertThrows(IdmintException.InvalidArgument.class,
                () -> Layout.defaults().withBits(41, 0, 20, 12).validate());
        assertTrue(e.detail().length() > 0, e.getMessage());
        assertThrows(IdmintException.InvalidArgument.class,
                () -> Layout.defaults().withUnitMs(0).validate());
    }

    @Test
    void boundsHoldEveryIdOfTheirWindow() {
        Layout l = Layout.defaults();
        Instant from = Instant.parse("2026-06-01T00:00:00Z");
        Instant to = from.plusSeconds(60);
        IdBounds b = Idmint.bounds(l, from, to);
        long unitsFrom = from.toEpochMilli() - l.epochMs();
        assertEquals(unitsFrom << 22, b.lo());
        assertEquals(((unitsFrom + 60_000) << 22) - 1, b.hi());
        assertEquals(from, Idmint.decode(l, b.lo()).time());
        assertThrows(IdmintException.InvalidArgument.class, () -> Idmint.bounds(l, to, from));
        assertThrows(IdmintException.InvalidArgument.class,
                () -> Idmint.bounds(l, Instant.parse("2020-01-01T00:00:00Z"), to));
    }

    @Test
    void versionIsTheLibrarysAndTheBuilds() {
        String expected = System.getProperty("idmint.expectedVersion");
        assertTrue(Idmint.version().matches("\\d+\\.\\d+\\.\\d+"), Idmint.version());
        if (expected != null) {
            assertEquals(expected, Idmint.version());
        }
    }

    @Test
    void everyCodeHasItsOwnClass() {
        for (int code = -1; code >= -15; code--) {
            IdmintException e = IdmintException.of(code, "d");
            assertEquals(code, e.code());
            assertTrue(e.getClass() != IdmintException.class, "code " + code);
            assertEquals(e.text() + ": d", e.getMessage());
            assertTrue(e.name().startsWith("E") && !e.name().equals("E?"));
        }
        assertEquals(IdmintException.LeaseLost.class, IdmintException.of(-7, "").getClass());
        assertEquals(IdmintException.Restored.class, IdmintException.of(-15, "").getClass());
        assertEquals("E?", IdmintException.of(-99, "").name());
    }
}
