// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.openjdk.jol.info.GraphLayout;

/**
 * "S3 at scale": the heap kpipe keeps per idle pipelined connection, measured with JOL's {@link GraphLayout} (the
 * object graph reachable from the coordinator and the processor's kpipe state). Each step adds connections to one
 * processor and measures the graph again; the growth divided by the connections added, less what Kafka keeps for a
 * connection anyway (its id, address and client information, which kpipe only refers to), is kpipe's cost per
 * connection. A step's connections were upgraded by 1 produce request, or by 5 pipelined at once (5 slots kept for
 * reuse), and are idle: every response written, reading, holding a reservation of the byte budget.
 *
 * <p>Run: {@code java -Djdk.attach.allowAttachSelf -Djol.magicFieldOffset=true -cp
 * benchmarks/target/benchmarks.jar dev.kpipe.benchmarks.HeapPerConnection [count]} (JOL needs both flags on JDK 17:
 * the coordinator's graph has lambdas, whose fields {@code Unsafe} will not locate) (default
 * 1000 connections per step). Prints the bytes per connection and the classes they are in.
 */
public final class HeapPerConnection {

    private HeapPerConnection() {}

    /**
     * @param args the connections per step (optional)
     * @throws Exception if the fixture cannot be built
     */
    public static void main(String[] args) throws Exception {
        int count = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
        ScaleFixture f = new ScaleFixture(true, 100L << 20);
        f.add(count, 1, f.idle); // warm: tables and lists already grown once
        GraphLayout before = layout(f);
        for (int depth : new int[] {1, 5}) {
            List<ScaleFixture.Conn> added = f.add(count, depth, f.idle);
            GraphLayout after = layout(f);
            List<Object> kafkas = new ArrayList<>();
            for (ScaleFixture.Conn c : added) {
                kafkas.add(c.id);
                kafkas.add(c.address);
                kafkas.add(c.client);
            }
            GraphLayout kafka = GraphLayout.parseInstance(kafkas.toArray());
            long kafkaBytes = kafka.totalSize()
                    - GraphLayout.parseInstance((Object) new Object[kafkas.size()])
                            .totalSize();
            long grown = after.totalSize() - before.totalSize();
            System.out.printf(
                    "%d connections upgraded by %d request(s) at once, idle: graph +%,d B; Kafka's own per-connection"
                            + " objects %,d B; kpipe %.1f B per connection%n",
                    count, depth, grown, kafkaBytes, (grown - kafkaBytes) / (double) count);
            System.out.println(diff(before, after, count));
            before = after;
        }
        System.out.println("budget used " + f.budget.used() + " B, waiting " + f.budget.waiting());
    }

    private static GraphLayout layout(ScaleFixture f) {
        System.gc();
        return GraphLayout.parseInstance(f.coordinator, f.processor);
    }

    /** @return per class: instances and bytes added per connection, largest first */
    private static String diff(GraphLayout before, GraphLayout after, int count) {
        Map<String, long[]> rows = new TreeMap<>();
        for (Class<?> c : after.getClasses()) {
            long n = after.getClassCounts().count(c) - before.getClassCounts().count(c);
            long b = after.getClassSizes().count(c) - before.getClassSizes().count(c);
            if (n != 0 || b != 0) {
                rows.put(c.getName(), new long[] {n, b});
            }
        }
        for (Class<?> c : before.getClasses()) {
            if (!after.getClasses().contains(c)) {
                rows.put(c.getName(), new long[] {
                    -before.getClassCounts().count(c), -before.getClassSizes().count(c)
                });
            }
        }
        StringBuilder out = new StringBuilder(String.format("  %10s %10s  %s%n", "objects/c", "bytes/c", "class"));
        rows.entrySet().stream()
                .sorted((a, b) -> Long.compare(b.getValue()[1], a.getValue()[1]))
                .forEach(e -> out.append(String.format(
                        "  %10.2f %10.1f  %s%n",
                        e.getValue()[0] / (double) count, e.getValue()[1] / (double) count, e.getKey())));
        return out.toString();
    }
}
