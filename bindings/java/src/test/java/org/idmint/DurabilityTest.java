// SPDX-License-Identifier: Apache-2.0
package org.idmint;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Four JVMs mint from one SQLite authority, a snowflake and a range namespace each, and are
 * killed with SIGKILL (Process.destroyForcibly) mid-run and started again, three times; a fourth
 * round ends cleanly. Every ID any of them wrote is then checked: none twice in a namespace, and
 * each process's IDs increasing.
 */
class DurabilityTest {
    @TempDir Path dir;

    private static final int JVMS = 4;
    private static final int KILL_ROUNDS = 3;
    /** IDs per namespace a JVM writes before it is killed, and in the clean round. */
    private static final long PER_ROUND = 80_000;

    private Process start(String url, Path prefix, long count) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command().orElse("java"));
        cmd.add("-cp");
        // The launcher's own class path is its jar; ci.sh names the binding's and the tests'.
        cmd.add(System.getProperty("idmint.test.classpath", System.getProperty("java.class.path")));
        String jni = System.getProperty("idmint.jni");
        if (jni != null) {
            cmd.add("-Didmint.jni=" + jni);
        }
        cmd.addAll(List.of(MintChild.class.getName(), url, "flake", "orders", prefix.toString(),
                Long.toString(count)));
        return new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(dir.resolve(prefix.getFileName() + ".log").toFile()).start();
    }

    private static long written(Path prefix) throws IOException {
        Path f = Path.of(prefix + ".range");
        return Files.exists(f) ? Files.size(f) / 8 : 0;
    }

    private static long[] read(Path file) throws IOException {
        byte[] bytes = Files.readAllBytes(file);
        // A kill can cut the last write short: only whole IDs count.
        ByteBuffer b = ByteBuffer.wrap(bytes, 0, bytes.length / 8 * 8).order(ByteOrder.LITTLE_ENDIAN);
        long[] ids = new long[bytes.length / 8];
        b.asLongBuffer().get(ids);
        return ids;
    }

    @Test
    void killedAndRestartedJvmsNeverRepeatAnId() throws Exception {
        String url = Fixtures.authority(dir);
        try (Authority a = Authority.open(url, 0)) {
            a.createSnowflake("flake", Layout.defaults());
            a.createRange("orders", 1, 0, 1000, 1_000_000);
        }
        List<Path> outputs = new ArrayList<>();
        for (int round = 0; round <= KILL_ROUNDS; round++) {
            boolean clean = round == KILL_ROUNDS;
            List<Process> procs = new ArrayList<>();
            List<Path> prefixes = new ArrayList<>();
            for (int j = 0; j < JVMS; j++) {
                Path prefix = dir.resolve("r" + round + "j" + j);
                prefixes.add(prefix);
                procs.add(start(url, prefix, clean ? PER_ROUND : Long.MAX_VALUE));
            }
            outputs.addAll(prefixes);
            if (clean) {
                for (Process p : procs) {
                    assertTrue(p.waitFor(120, TimeUnit.SECONDS), "a clean JVM finished");
                    assertEquals(0, p.exitValue(), "clean exit; see its .log");
                }
                continue;
            }
            // Kill each JVM once it has written PER_ROUND, at a moment of its own.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            for (int j = 0; j < JVMS; j++) {
                while (written(prefixes.get(j)) < PER_ROUND + 997L * j) {
                    assertTrue(procs.get(j).isAlive(), "JVM " + j + " of round " + round
                            + " died; see " + prefixes.get(j) + ".log");
                    assertTrue(System.nanoTime() < deadline, "round " + round + " made no progress");
                    Thread.sleep(20);
                }
                procs.get(j).destroyForcibly(); // SIGKILL
            }
            for (Process p : procs) {
                assertTrue(p.waitFor(30, TimeUnit.SECONDS));
                assertEquals(137, p.exitValue(), "killed by SIGKILL");
            }
        }
        long total = 0;
        for (String ns : List.of("flake", "range")) {
            List<long[]> per = new ArrayList<>();
            for (Path prefix : outputs) {
                long[] ids = read(Path.of(prefix + "." + ns));
                for (int i = 1; i < ids.length; i++) {
                    assertTrue(ids[i] > ids[i - 1], prefix + "." + ns + " increases at " + i);
                }
                per.add(ids);
            }
            long[] all = per.stream().flatMapToLong(Arrays::stream).toArray();
            Arrays.sort(all);
            for (int i = 1; i < all.length; i++) {
                assertTrue(all[i] != all[i - 1], ns + ": " + all[i] + " minted twice");
            }
            assertTrue(all.length > 0 && all[0] > 0);
            total += all.length;
            System.out.printf("durability: %s: %d IDs from %d JVM runs, 0 duplicates%n", ns,
                    all.length, outputs.size());
        }
        assertTrue(total >= 1_000_000, "at least 1M IDs, got " + total);
    }
}
