// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.harness;

import java.lang.reflect.Method;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.platform.commons.support.AnnotationSupport;

/**
 * The JUnit 5 extension behind {@link KafkaCluster}: starts a {@link Cluster} per annotated class (before all) or
 * method (before each), closes it afterwards whatever happened, injects it as a parameter, and after a failed test
 * prints where the node logs are. Callbacks run on JUnit's test thread. Where the run asks for broker JVMs on a JDK
 * that is not found ({@code kpipe.it.broker.java.version}), it disables the tests instead, saying why.
 */
public final class KafkaClusterExtension
        implements ExecutionCondition,
                BeforeAllCallback,
                AfterAllCallback,
                BeforeEachCallback,
                AfterEachCallback,
                ParameterResolver {

    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(KafkaClusterExtension.class);
    private static final String KEY = "cluster";

    /** Creates the extension; JUnit does this. */
    public KafkaClusterExtension() {}

    /**
     * Disables the test class, before any cluster starts, when {@code kpipe.it.broker.java.version} asks for a JDK this
     * machine does not have; the reason says where the lookup went ({@link JavaHomes}).
     */
    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        return HarnessSettings.load()
                .brokerJava()
                .filter(l -> l.home().isEmpty())
                .map(l -> ConditionEvaluationResult.disabled(l.notFound()))
                .orElseGet(() -> ConditionEvaluationResult.enabled("broker JVMs have their JDK"));
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        Class<?> testClass = context.getRequiredTestClass();
        Optional<KafkaCluster> ann = AnnotationSupport.findAnnotation(testClass, KafkaCluster.class);
        if (ann.isPresent()) {
            context.getStore(NS).put(KEY, open(ann.get(), testClass.getSimpleName()));
        }
    }

    @Override
    public void afterAll(ExtensionContext context) {
        closeIn(context);
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        Method m = context.getRequiredTestMethod();
        Optional<KafkaCluster> ann = AnnotationSupport.findAnnotation(m, KafkaCluster.class);
        if (ann.isPresent()) {
            context.getStore(NS)
                    .put(KEY, open(ann.get(), context.getRequiredTestClass().getSimpleName() + "-" + m.getName()));
        }
    }

    @Override
    public void afterEach(ExtensionContext context) {
        if (context.getExecutionException().isPresent()) {
            find(context)
                    .ifPresent(c -> System.err.println("kpipe-it: " + context.getDisplayName() + " failed; node logs: "
                            + c.dir() + "/node-*/server.log"));
        }
        closeIn(context);
    }

    @Override
    public boolean supportsParameter(ParameterContext pc, ExtensionContext ec) {
        return pc.getParameter().getType() == Cluster.class;
    }

    @Override
    public Object resolveParameter(ParameterContext pc, ExtensionContext ec) {
        return find(ec).orElseThrow(() ->
                new ParameterResolutionException("no @KafkaCluster on " + ec.getDisplayName() + " or its class"));
    }

    /** Nearest cluster: the method's own, else the class's (walking up the context hierarchy). */
    private static Optional<Cluster> find(ExtensionContext ec) {
        for (Optional<ExtensionContext> c = Optional.of(ec);
                c.isPresent();
                c = c.get().getParent()) {
            Cluster cluster = c.get().getStore(NS).get(KEY, Cluster.class);
            if (cluster != null) {
                return Optional.of(cluster);
            }
        }
        return Optional.empty();
    }

    private static void closeIn(ExtensionContext context) {
        Cluster c = context.getStore(NS).remove(KEY, Cluster.class);
        if (c != null) {
            List<String> violations = contractViolations(c);
            c.close();
            if (!violations.isEmpty()) {
                throw new AssertionError("the broker side broke the SPI's contract (kpipe's ContractCheck, "
                        + BrokerCommand.CONTRACT_CHECK + "):\n" + String.join("\n", violations));
            }
        }
    }

    /** @return the SPI contract violations the cluster's brokers logged, each prefixed with its node */
    private static List<String> contractViolations(Cluster c) {
        List<String> out = new java.util.ArrayList<>();
        if (!Boolean.getBoolean(BrokerCommand.CONTRACT_CHECK)) {
            return out;
        }
        for (KafkaNode n : c.nodes()) {
            try {
                for (String line : n.logLines()) {
                    if (line.contains("SPI contract violated")) {
                        out.add("node " + n.id() + ": " + line);
                    }
                }
            } catch (RuntimeException e) {
                // a node that never wrote its log has no violation to report
            }
        }
        return out;
    }

    private static Cluster open(KafkaCluster ann, String name) {
        ClusterSpec.Builder b = ClusterSpec.builder()
                .name(name)
                .nodes(ann.nodes())
                .installPlugin(ann.installPlugin())
                .kpipe(ann.kpipe())
                .heap(ann.heap())
                .kafkaVersion(ann.kafkaVersion())
                .saslScramListener(ann.saslScram())
                .tlsListeners(ann.tls())
                .zookeeper(ann.zookeeper())
                .javaagent(ann.javaagent())
                .kafkaOpts(ann.kafkaOpts());
        for (String kv : ann.brokerConfig()) {
            if (kv.indexOf('=') <= 0) {
                throw new IllegalArgumentException("brokerConfig entry must be key=value: " + kv);
            }
            b.brokerConfig(
                    kv.substring(0, kv.indexOf('=')).trim(),
                    kv.substring(kv.indexOf('=') + 1).trim());
        }
        for (String nkv : ann.nodeConfig()) {
            if (!nkv.matches("\\d+:[^=]+=.*")) {
                throw new IllegalArgumentException("nodeConfig entry must be nodeId:key=value: " + nkv);
            }
            b.config(nkv);
        }
        ClusterSpec spec = b.build();
        return ann.start() ? Cluster.start(spec) : Cluster.create(spec);
    }
}
