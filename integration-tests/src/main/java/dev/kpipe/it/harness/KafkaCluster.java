// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.harness;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Runs a real Kafka cluster for a JUnit 5 test class (started before all its tests, stopped after them) or, when put
 * on a test method, for that method alone. Test methods, lifecycle methods and constructors get it by declaring a
 * {@link Cluster} parameter; a method-level cluster wins over the class-level one.
 *
 * <pre>{@code
 * @KafkaCluster(nodes = 2, kpipe = true, brokerConfig = {"num.partitions=3"},
 *     nodeConfig = {"2:replica.fetch.wait.max.ms=100"})
 * class MyIT {
 *   @Test void works(Cluster cluster) { cluster.admin()...; cluster.node(2).jmx()...; }
 * }
 * }</pre>
 *
 * <p>The cluster is always stopped, also when tests fail; its logs stay in {@link Cluster#dir()}.
 */
@Documented
@Inherited
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.METHOD})
@ExtendWith(KafkaClusterExtension.class)
public @interface KafkaCluster {

    /** @return number of nodes; node 1 is broker+controller, nodes 2.. are brokers */
    int nodes() default 1;

    /** @return value of {@code kpipe.enable} (only written if {@link #installPlugin()}) */
    boolean kpipe() default true;

    /** @return whether the kpipe jar is dropped into libs/ and configured in {@code metric.reporters}; false = stock */
    boolean installPlugin() default true;

    /** @return cluster-wide broker config overrides, {@code key=value} */
    String[] brokerConfig() default {};

    /** @return per-node overrides, {@code nodeId:key=value} */
    String[] nodeConfig() default {};

    /** @return broker heap ({@code -Xmx}), e.g. {@code 1g}; empty for {@code kpipe.it.heap} (default 512m) */
    String heap() default "";

    /**
     * @return whether every node also gets a {@code SASL_PLAINTEXT} client listener with SCRAM-SHA-512 (see {@link
     *     ClusterSpec.Builder#saslScramListener}); default false
     */
    boolean saslScram() default false;

    /**
     * @return whether every node also gets an {@code SSL} client listener (and, with {@link #saslScram()}, a {@code
     *     SASL_SSL} one) with a test CA generated when the cluster is laid out (see {@link
     *     ClusterSpec.Builder#tlsListeners}); default false
     */
    boolean tls() default false;

    /**
     * @return the Kafka version the nodes run, e.g. {@code 3.9.1}: its distribution must be laid out under {@code
     *     kpipe.it.kafka.dists} (the build lays out its own version and those of the {@code kafka-dists} modules); empty
     *     for the harness default {@code kpipe.it.kafka.version} (which a failsafe execution may set, see the pom)
     */
    String kafkaVersion() default "";

    /**
     * @return whether the cluster runs in ZooKeeper mode (Kafka 3.8/3.9; see {@link ClusterSpec.Builder#zookeeper});
     *     default false, or {@code -Dkpipe.it.zookeeper=true} for every cluster
     */
    boolean zookeeper() default false;

    /**
     * @return whether every node's JVM also starts with {@code -javaagent:<libs/kpipe jar>}, as {@code KAFKA_OPTS}
     *     would pass it (see {@link ClusterSpec.Builder#javaagent}); default false
     */
    boolean javaagent() default false;

    /**
     * @return extra JVM options of every node, as in {@code KAFKA_OPTS}, e.g. {@code -XX:+DisableAttachMechanism} (see
     *     {@link ClusterSpec.Builder#kafkaOpts})
     */
    String[] kafkaOpts() default {};

    /**
     * @return whether the extension starts the cluster; false lays it out only, e.g. for {@link
     *     KafkaNode#startExpectingFailure}
     */
    boolean start() default true;
}
