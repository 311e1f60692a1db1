// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.harness;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * Operations on all {@link KafkaNode}s of a {@link Cluster} at once: formatting storage, starting, waiting for
 * readiness, stopping. Called by the cluster's controlling thread; each blocks it until every node is done (or, for
 * {@link #awaitReady}, one failed). Waiting and stopping use one thread per node, named {@code
 * kpipe-it-<what>-node-<id>}; timeouts are per node.
 */
final class NodeGroup {
    private NodeGroup() {}

    /** @return the ids of the nodes whose JVM is running, in ascending order (a new mutable set) */
    static Set<Integer> runningIds(List<KafkaNode> nodes) {
        return nodes.stream()
                .filter(KafkaNode::isRunning)
                .map(KafkaNode::id)
                .collect(Collectors.toCollection(TreeSet::new));
    }

    /**
     * Formats the storage of the nodes: one after the other in this JVM if it can ({@link StorageFormatter}), else one
     * tool JVM per node, in parallel.
     *
     * @param toFormat nodes whose storage is not formatted
     * @param kafkaVersion the version the cluster runs
     * @throws IllegalStateException if a format fails or times out
     */
    static void format(List<KafkaNode> toFormat, String kafkaVersion) {
        if (StorageFormatter.canFormatInProcess(kafkaVersion)) {
            toFormat.forEach(n -> n.storage().format());
        } else { // one tool JVM per node, in parallel
            List<Process> formats =
                    toFormat.stream().map(n -> n.storage().launchFormat()).collect(Collectors.toList());
            for (int i = 0; i < toFormat.size(); i++) {
                toFormat.get(i).storage().awaitFormat(formats.get(i));
            }
        }
    }

    /**
     * Launches every node that is not running, without waiting for it; in KRaft mode formats the storage of those not
     * yet formatted first (see {@link #format}).
     *
     * @param nodes the cluster's nodes
     * @param kraft false in ZooKeeper mode (no storage to format)
     * @param kafkaVersion the version the cluster runs
     */
    static void startAll(List<KafkaNode> nodes, boolean kraft, String kafkaVersion) {
        List<KafkaNode> toFormat = !kraft
                ? List.of()
                : nodes.stream().filter(n -> !n.storage().isFormatted()).collect(Collectors.toList());
        format(toFormat, kafkaVersion);
        for (KafkaNode n : nodes) {
            if (!n.isRunning()) {
                n.startProcess();
            }
        }
    }

    /**
     * Stops the brokers gracefully in parallel, then the controller node (node 1), then the ZooKeeper server; if this
     * thread is interrupted while the brokers stop, kills every node instead (and leaves ZooKeeper running).
     *
     * @param nodes the cluster's nodes, node 1 first
     * @param zooKeeper the ZooKeeper server, or {@code null}
     * @param timeout how long each may take to stop gracefully before it is killed
     */
    static void stopAll(List<KafkaNode> nodes, ZooKeeperServer zooKeeper, Duration timeout) {
        if (!inParallel(nodes.subList(1, nodes.size()), n -> n.stop(timeout), "stop")) {
            nodes.forEach(KafkaNode::kill);
            return;
        }
        nodes.get(0).stop(timeout);
        if (zooKeeper != null) {
            zooKeeper.stop(timeout);
        }
    }

    /**
     * For the JVM shutdown hook: terminates the brokers in parallel, then node 1, then ZooKeeper, taking no node lock
     * ({@link KafkaNode#terminateForExit}).
     *
     * @param nodes the cluster's nodes, node 1 first
     * @param zooKeeper the ZooKeeper server, or {@code null}
     * @param timeout how long each may take to exit after SIGTERM before SIGKILL
     */
    static void terminateAll(List<KafkaNode> nodes, ZooKeeperServer zooKeeper, Duration timeout) {
        inParallel(nodes.subList(1, nodes.size()), n -> n.terminateForExit(timeout), "exit");
        nodes.get(0).terminateForExit(timeout);
        if (zooKeeper != null) {
            zooKeeper.stop(timeout);
        }
    }

    /**
     * Waits until each node in {@code expected} answers and sees every node in {@code expected} as a registered broker;
     * the first node that fails (e.g. exits during start-up) ends the wait of the others at once.
     *
     * @param nodes the cluster's nodes
     * @param expected the ids of the nodes to wait for, and that each must see
     * @param timeout how long each node may take
     * @param owner the cluster, for the message on interrupt
     * @throws IllegalStateException the first node's failure, the others' suppressed
     */
    static void awaitReady(List<KafkaNode> nodes, Set<Integer> expected, Duration timeout, Object owner) {
        List<Thread> waiters = new ArrayList<>();
        List<RuntimeException> failures = Collections.synchronizedList(new ArrayList<>());
        for (KafkaNode n : nodes) {
            if (expected.contains(n.id())) {
                Thread t = new Thread(
                        () -> {
                            try {
                                n.awaitReady(expected, timeout);
                            } catch (RuntimeException e) {
                                failures.add(e);
                            }
                        },
                        "kpipe-it-await-node-" + n.id());
                t.start();
                waiters.add(t);
            }
        }
        try {
            // The first node that fails (e.g. exits during start-up) ends the wait of the others at once, instead of
            // them waiting out the whole timeout for a broker that will never register.
            for (Thread t : waiters) {
                while (t.isAlive() && failures.isEmpty()) {
                    t.join(100);
                }
            }
            if (!failures.isEmpty()) {
                RuntimeException first = failures.get(0);
                waiters.forEach(Thread::interrupt);
                for (Thread t : waiters) {
                    t.join();
                }
                failures.remove(first);
                failures.forEach(first::addSuppressed);
                throw first;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for " + owner, e);
        }
        if (!failures.isEmpty()) {
            RuntimeException first = failures.get(0);
            failures.subList(1, failures.size()).forEach(first::addSuppressed);
            throw first;
        }
    }

    /**
     * Runs {@code action} on every node in parallel and waits for all of them.
     *
     * @param nodes the nodes
     * @param action what to do to each (e.g. stop it)
     * @param what names the threads, {@code kpipe-it-<what>-node-<id>}
     * @return false if this thread was interrupted while waiting (its interrupt flag is set again; some may still run)
     */
    private static boolean inParallel(List<KafkaNode> nodes, Consumer<KafkaNode> action, String what) {
        List<Thread> threads = new ArrayList<>();
        for (KafkaNode n : nodes) {
            Thread t = new Thread(() -> action.accept(n), "kpipe-it-" + what + "-node-" + n.id());
            t.start();
            threads.add(t);
        }
        for (Thread t : threads) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return true;
    }
}
