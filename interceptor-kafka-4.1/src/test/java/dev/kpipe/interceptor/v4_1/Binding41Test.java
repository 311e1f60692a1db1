// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.v4_1;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.interceptor.HookPoint;
import dev.kpipe.interceptor.core.KafkaBinding;
import dev.kpipe.interceptor.testkit.BindingContractTest;
import dev.kpipe.interceptor.v3_8.Binding38;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The 4.1-4.3 binding against the Kafka 4.1.2 jars this module compiles and tests with: the contract, and its line's own. */
class Binding41Test extends BindingContractTest {

    @Override
    protected KafkaBinding binding() {
        return new Binding41();
    }

    @Override
    protected List<String> versions() {
        return List.of("4.1.0", "4.1.2", "4.2.1", "4.3.1");
    }

    @Override
    protected String versionLine() {
        return "4.1-4.3";
    }

    @Override
    protected String transactionManagerClass() {
        return "org.apache.kafka.server.transaction.AddPartitionsToTxnManager";
    }

    @Override
    protected String requestClass() {
        return "kafka.network.RequestChannel$Request";
    }

    /** The 3.8 binding on a 4.1 broker would be refused before anything is installed. */
    @Test
    void the38BindingsHookPointsAreMissingInKafka41() {
        List<String> missing = HookPoint.missing(getClass().getClassLoader(), new Binding38().hookPoints());
        assertTrue(
                missing.contains(
                        "kafka.server.KafkaApis.handle(kafka.network.RequestChannel$Request, kafka.server.RequestLocal)"),
                missing::toString);
        assertTrue(
                missing.contains("kafka.server.MetadataCache.getTopicName(org.apache.kafka.common.Uuid)"),
                missing::toString);
    }
}
