// SPDX-License-Identifier: Apache-2.0
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.LongSupplier;
import org.idmint.Authority;
import org.idmint.Idmint;
import org.idmint.Layout;
import org.idmint.Minter;
import org.idmint.MinterOptions;

/**
 * The Java binding's benchmark: IDs per second of single calls and of batches of 1,000, beside
 * UUID.randomUUID() measured in the same run, the cases alternating BENCH_ROUNDS times (default
 * 5) for BENCH_MS each (default 1000); the median of the rounds is reported, with its ratio to
 * UUID.randomUUID(). Not a test: the "targets" lines say met or NOT MET, and the exit code is 0
 * unless a call fails. Usage (bench/bench_java.sh builds the class path): java Bench.java
 */
public final class Bench {
    private static volatile long sink;

    /** Calls op until ms have passed; returns IDs per second (op returns how many it made). */
    private static double rate(LongSupplier op, long ms) {
        long end = System.nanoTime() + ms * 1_000_000L;
        long n = 0;
        long start = System.nanoTime();
        long now;
        do {
            for (int i = 0; i < 64; i++) {
                n += op.getAsLong();
            }
            now = System.nanoTime();
        } while (now < end);
        return n * 1e9 / (now - start);
    }

    public static void main(String[] args) throws Exception {
        int rounds = Integer.parseInt(System.getenv().getOrDefault("BENCH_ROUNDS", "5"));
        long ms = Long.parseLong(System.getenv().getOrDefault("BENCH_MS", "1000"));
        Path dir = Files.createTempDirectory("idmint-java-bench");
        String url = "sqlite:" + dir.resolve("bench.db");
        try (Authority a = Authority.open(url, 0)) {
            a.createSnowflake("flake", Layout.defaults());
            a.createSnowflake("wide", Layout.defaults().withBits(41, 0, 0, 22));
            a.createRange("range", 1, 0, 1_000_000, 1_000_000);
        }
        MinterOptions block = new MinterOptions().rangeBlock(1_000_000);
        try (Minter flake = Minter.open(url, "flake");
                Minter wide = Minter.open(url, "wide");
                Minter range = Minter.open(url, "range", block)) {
            long[] batch = new long[1000];
            Map<String, LongSupplier> cases = new LinkedHashMap<>();
            cases.put("UUID.randomUUID()", () -> {
                sink += UUID.randomUUID().getLeastSignificantBits();
                return 1;
            });
            cases.put("Idmint.uuid7()", () -> {
                sink += Idmint.uuid7().getLeastSignificantBits();
                return 1;
            });
            cases.put("next() snowflake 41/0/10/12", () -> {
                sink += flake.next();
                return 1;
            });
            cases.put("next() snowflake 41/0/0/22", () -> {
                sink += wide.next();
                return 1;
            });
            cases.put("next() range, block 1M", () -> {
                sink += range.next();
                return 1;
            });
            cases.put("fill(long[1000]) snowflake 41/0/0/22", () -> {
                wide.fill(batch);
                sink += batch[999];
                return 1000;
            });
            cases.put("fill(long[1000]) range, block 1M", () -> {
                range.fill(batch);
                sink += batch[999];
                return 1000;
            });
            cases.put("nextN(1000) range, block 1M", () -> {
                sink += range.nextN(1000)[999];
                return 1000;
            });
            Map<String, List<Double>> results = new LinkedHashMap<>();
            for (Map.Entry<String, LongSupplier> c : cases.entrySet()) {
                rate(c.getValue(), Math.min(ms, 300)); // the JIT's warm-up
                results.put(c.getKey(), new ArrayList<>());
            }
            for (int r = 0; r < rounds; r++) {
                for (Map.Entry<String, LongSupplier> c : cases.entrySet()) {
                    results.get(c.getKey()).add(rate(c.getValue(), ms));
                }
            }
            System.out.printf("Java %s, libidmint %s, %d rounds of %d ms, medians%n",
                    Runtime.version(), Idmint.version(), rounds, ms);
            double uuid = median(results.get("UUID.randomUUID()"));
            Map<String, Double> med = new LinkedHashMap<>();
            for (Map.Entry<String, List<Double>> e : results.entrySet()) {
                double m = median(e.getValue());
                med.put(e.getKey(), m);
                System.out.printf("  %-40s %12.2fM IDs/s  %7.2fx UUID.randomUUID()%n", e.getKey(),
                        m / 1e6, m / uuid);
            }
            System.out.println("targets:");
            double single = med.get("next() range, block 1M");
            System.out.printf("  single calls >= 3x UUID.randomUUID(): range next() %.2fx %s%n",
                    single / uuid, single >= 3 * uuid ? "met" : "NOT MET");
            double flakeSingle = med.get("next() snowflake 41/0/10/12");
            System.out.printf("  (snowflake 41/0/10/12 next() %.2fx: one worker id holds 4.096M/s)%n",
                    flakeSingle / uuid);
            double batches = med.get("fill(long[1000]) range, block 1M");
            System.out.printf("  batches of 1000 from a range, block 1M >= 100M IDs/s: %.1fM %s%n",
                    batches / 1e6, batches >= 100e6 ? "met" : "NOT MET");
        } finally {
            try (var files = Files.list(dir)) {
                for (Path p : files.toList()) {
                    Files.delete(p);
                }
            }
            Files.delete(dir);
        }
    }

    private static double median(List<Double> xs) {
        double[] a = xs.stream().mapToDouble(Double::doubleValue).toArray();
        Arrays.sort(a);
        return a[a.length / 2];
    }
}
