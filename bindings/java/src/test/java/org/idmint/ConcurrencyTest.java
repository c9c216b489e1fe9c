// SPDX-License-Identifier: Apache-2.0
package org.idmint;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.reflect.Method;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConcurrencyTest {
    @TempDir Path dir;

    private static final int THREADS = 8;
    private static final int PER_THREAD = 40_000;

    /** Every thread mints into its own array; all IDs distinct, each thread's increasing. */
    private static void mintFromThreads(Minter m, Function<Runnable, Thread> start,
            boolean increasing) throws InterruptedException {
        long[][] got = new long[THREADS][PER_THREAD];
        List<Thread> threads = new ArrayList<>();
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        for (int t = 0; t < THREADS; t++) {
            long[] mine = got[t];
            threads.add(start.apply(() -> {
                try {
                    for (int i = 0; i < PER_THREAD; i += 100) {
                        if (i % 200 == 0) {
                            m.fill(mine, i, 100);
                        } else {
                            for (int k = i; k < i + 100; k++) {
                                mine[k] = m.next();
                            }
                        }
                    }
                } catch (Throwable e) {
                    errors.add(e);
                }
            }));
        }
        for (Thread t : threads) {
            t.join();
        }
        assertTrue(errors.isEmpty(), errors.toString());
        long[] all = Arrays.stream(got).flatMapToLong(Arrays::stream).toArray();
        assertEquals((long) THREADS * PER_THREAD, Arrays.stream(all).distinct().count(),
                "no ID twice");
        if (increasing) {
            for (long[] mine : got) {
                for (int i = 1; i < mine.length; i++) {
                    assertTrue(mine[i] > mine[i - 1], "a thread's IDs increase");
                }
            }
        }
    }

    @Test
    void platformThreadsShareOneSnowflakeMinter() throws InterruptedException {
        try (Minter m = Minter.open(Fixtures.authority(dir), "default")) {
            mintFromThreads(m, ConcurrencyTest::platformThread, true);
        }
    }

    @Test
    void platformThreadsShareOneRangeMinter() throws InterruptedException {
        String url = Fixtures.withRange(dir, "r", 1000);
        try (Minter m = Minter.open(url, "r")) {
            mintFromThreads(m, ConcurrencyTest::platformThread, true);
        }
    }

    private static Thread platformThread(Runnable r) {
        Thread t = new Thread(r);
        t.start();
        return t;
    }

    /** Virtual threads came in Java 21: run where the JVM has them, skipped on 17. */
    @Test
    void virtualThreadsShareOneMinter() throws Exception {
        Method ofVirtual;
        try {
            ofVirtual = Thread.class.getMethod("ofVirtual");
        } catch (NoSuchMethodException e) {
            ofVirtual = null;
        }
        assumeTrue(ofVirtual != null, "this JVM (" + Runtime.version() + ") has no virtual threads");
        Object builder = ofVirtual.invoke(null);
        Method start = builder.getClass().getMethod("start", Runnable.class);
        start.setAccessible(true);
        try (Minter m = Minter.open(Fixtures.authority(dir), "default")) {
            mintFromThreads(m, r -> {
                try {
                    return (Thread) start.invoke(builder, r);
                } catch (ReflectiveOperationException e) {
                    throw new IllegalStateException(e);
                }
            }, true);
        }
    }

    /** close() while threads mint: each call either mints or throws IllegalStateException. */
    @Test
    void closeUnderLoadNeitherCrashesNorRepeats() throws InterruptedException {
        Minter m = Minter.open(Fixtures.authority(dir), "default");
        CountDownLatch started = new CountDownLatch(THREADS);
        AtomicInteger closedSeen = new AtomicInteger();
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        ConcurrentLinkedQueue<long[]> minted = new ConcurrentLinkedQueue<>();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            threads.add(platformThread(() -> {
                long[] mine = new long[1_000_000];
                int n = 0;
                started.countDown();
                try {
                    while (n < mine.length) {
                        mine[n++] = m.next();
                    }
                } catch (IllegalStateException e) {
                    closedSeen.incrementAndGet();
                    n--;
                } catch (Throwable e) {
                    errors.add(e);
                }
                minted.add(Arrays.copyOf(mine, n));
            }));
        }
        started.await();
        Thread.sleep(50);
        m.close();
        for (Thread t : threads) {
            t.join();
        }
        assertTrue(errors.isEmpty(), errors.toString());
        assertTrue(closedSeen.get() > 0, "some thread saw the close");
        long[] all = minted.stream().flatMapToLong(Arrays::stream).toArray();
        assertEquals(all.length, Arrays.stream(all).distinct().count());
        // The lease went back: a new minter may take the same worker id, above every ID minted.
        try (Minter again = Minter.open(Fixtures.authority(dir), "default")) {
            long max = Arrays.stream(all).max().orElse(0);
            assertTrue(again.next() > max || again.info().workerId() != Idmint.decode(
                    Layout.defaults(), max).worker());
        }
    }
}
