// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.core;

import dev.kpipe.interceptor.HookPoint;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * What one Kafka line's broker members are called, where lines differ: the data a {@link KafkaBinding} is made from.
 * The hook list ({@link HookList}) reads its types from here; each line's module gives its own row (see
 * {@code docs/kafka-versions.md}, "What differs between lines"). Immutable.
 *
 * @param versionLine the line(s) served, e.g. {@code 4.4} or {@code 3.8-3.9}
 * @param requests the line's request and response classes and the members its {@link RequestModel} uses
 * @param requestLocal the second parameter of {@code KafkaApis.handle}: {@code kafka.server.RequestLocal} up to 3.9,
 *     {@code org.apache.kafka.server.common.RequestLocal} from 4.0
 * @param metadataCache the type of {@code KafkaApis.metadataCache()}, whose {@code getTopicName(Uuid)} the binding
 *     calls: the Scala trait {@code kafka.server.MetadataCache} up to 4.0, {@code
 *     org.apache.kafka.metadata.MetadataCache} from 4.1
 * @param purgatory the type of the produce purgatory, whose {@code numDelayed()} the binding calls: the Scala
 *     {@code kafka.server.DelayedOperationPurgatory} up to 3.9, the Java
 *     {@code org.apache.kafka.server.purgatory.DelayedOperationPurgatory} from 4.0
 * @param verification the line's transaction verification members (KIP-890)
 */
public record KafkaLine(
        String versionLine,
        Requests requests,
        String requestLocal,
        String metadataCache,
        String purgatory,
        TransactionVerification verification) {

    /** {@code org.apache.kafka.common.Uuid} (kafka-clients), the topic id type. */
    static final String UUID = "org.apache.kafka.common.Uuid";

    /**
     * A line's request model as data.
     *
     * @param request the binary name of the request class
     * @param response the binary name of the response base type
     * @param members the members and classes the model uses
     * @param callbackCompletion the request's {@code callbackRequestCompleteTimeNanos} setter: the Scala
     *     {@code callbackRequestCompleteTimeNanos_$eq(scala.Option)} up to 4.3, the Java
     *     {@code callbackRequestCompleteTimeNanos(java.util.OptionalLong)} in 4.4
     * @param model creates the model; called on activation, after the hook points were checked
     */
    public record Requests(
            String request,
            String response,
            List<HookPoint> members,
            HookPoint callbackCompletion,
            Supplier<RequestModel> model) {

        /** Copies {@code members}. */
        public Requests {
            members = List.copyOf(members);
        }
    }

    /**
     * A line's transaction verification (KIP-890): the manager's entry point and the {@code ReplicaManager} method
     * that starts the verification of one partition for a caller with its own callback. Their parameter lists are the
     * same on every line but for the types named here.
     *
     * @param manager the binary name of {@code AddPartitionsToTxnManager}
     * @param entry the entry point's name: {@code verifyTransaction} (3.8–3.9), {@code addOrVerifyTransaction} (4.0+)
     * @param partitions the type of the entry point's partitions: {@code scala.collection.Seq} up to 4.0,
     *     {@code java.util.Collection} from 4.1
     * @param callback the type of the entry point's callback: {@code scala.Function1} up to 4.0, the manager's
     *     {@code AppendCallback} from 4.1
     * @param supportedOperation the binary name of {@code TransactionSupportedOperation}
     * @param partition the {@code ReplicaManager} method's name: {@code maybeStartTransactionVerificationForPartition}
     *     (3.8–3.9), {@code maybeSendPartitionToTransactionCoordinator} (4.0+)
     */
    public record TransactionVerification(
            String manager,
            String entry,
            String partitions,
            String callback,
            String supportedOperation,
            String partition) {

        /** Kafka 3.8 and 3.9: the Scala manager, {@code verifyTransaction}. */
        public static final TransactionVerification SCALA_3_8 = new TransactionVerification(
                "kafka.server.AddPartitionsToTxnManager",
                "verifyTransaction",
                "scala.collection.Seq",
                "scala.Function1",
                "kafka.server.TransactionSupportedOperation",
                "maybeStartTransactionVerificationForPartition");

        /** Kafka 4.0: the Scala manager, renamed {@code addOrVerifyTransaction}. */
        public static final TransactionVerification SCALA_4_0 = new TransactionVerification(
                SCALA_3_8.manager,
                "addOrVerifyTransaction",
                SCALA_3_8.partitions,
                SCALA_3_8.callback,
                SCALA_3_8.supportedOperation,
                "maybeSendPartitionToTransactionCoordinator");

        /** Kafka 4.1 and later: the Java manager in the {@code server} module. */
        public static final TransactionVerification JAVA_4_1 = new TransactionVerification(
                "org.apache.kafka.server.transaction.AddPartitionsToTxnManager",
                SCALA_4_0.entry,
                "java.util.Collection",
                "org.apache.kafka.server.transaction.AddPartitionsToTxnManager$AppendCallback",
                "org.apache.kafka.server.transaction.AddPartitionsToTxnManager$TransactionSupportedOperation",
                SCALA_4_0.partition);

        /** @return the entry point, e.g. {@code addOrVerifyTransaction(String, long, short, Seq, Function1, op)} */
        public HookPoint entryPoint() {
            return HookPoint.method(
                    manager, entry, String.class.getName(), "long", "short", partitions, callback, supportedOperation);
        }

        /**
         * @return {@code ReplicaManager}'s partition verification, public; its callback (argument 5) is the one
         *     {@code generalizedCallback$1} invokes
         */
        public HookPoint partitionVerification() {
            return HookPoint.method(
                    HookList.REPLICA_MANAGER,
                    partition,
                    "org.apache.kafka.common.TopicPartition",
                    String.class.getName(),
                    "long",
                    "short",
                    "int",
                    "scala.Function1",
                    supportedOperation);
        }
    }

    /**
     * @return the hook points of the line's own members: its request model's, its metadata cache's
     *     {@code getTopicName(Uuid)} and its purgatory's {@code numDelayed()}
     */
    List<HookPoint> ownMembers() {
        List<HookPoint> points = new ArrayList<>(requests.members());
        points.add(HookPoint.method(metadataCache, "getTopicName", UUID));
        points.add(HookPoint.method(purgatory, "numDelayed"));
        return points;
    }
}
