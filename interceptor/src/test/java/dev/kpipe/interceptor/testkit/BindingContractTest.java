// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.interceptor.HookPoint;
import dev.kpipe.interceptor.Interceptor;
import dev.kpipe.interceptor.core.KafkaBinding;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.apache.kafka.common.protocol.ApiKeys;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * What every Kafka line's binding must satisfy, checked against the Kafka jars its module compiles and tests with (so
 * each line's test class runs these against that line): its versions pick it, every hook point exists, its accessors
 * link, the hook list is checked and installed from one list, and the deferred-dispatch hooks of each API exist and
 * transform exactly the classes they name. A binding module extends this class and names its line; checks that only
 * one line needs (a class that moved) stay in the subclass.
 */
public abstract class BindingContractTest {

    /** @return a new binding of the line under test */
    protected abstract KafkaBinding binding();

    /** @return Kafka versions that must get this binding, e.g. {@code 4.4.0} */
    protected abstract List<String> versions();

    /** @return the binding's version line, e.g. {@code 4.4} */
    protected abstract String versionLine();

    /** @return the binary name of the line's {@code AddPartitionsToTxnManager} */
    protected abstract String transactionManagerClass();

    /** @return the binary name of the line's request class (whose completion setter is advised) */
    protected abstract String requestClass();

    private static final List<String> ALWAYS = List.of(
            "kafka.network.Processor",
            "kafka.network.RequestChannel",
            "kafka.server.KafkaApis",
            "org.apache.kafka.common.network.KafkaChannel");

    @TestFactory
    Stream<DynamicTest> itsVersionsGetThisBinding() {
        return versions().stream()
                .map(v -> DynamicTest.dynamicTest(v, () -> {
                    Interceptor.Binding b = Interceptor.bindingFor(v);
                    assertInstanceOf(binding().getClass(), b);
                    assertEquals(versionLine(), b.versionLine());
                }));
    }

    @Test
    void everyHookPointExists() {
        assertEquals(
                List.of(),
                HookPoint.missing(getClass().getClassLoader(), binding().hookPoints()));
    }

    @Test
    void theBindingsAccessorsOfBrokerInternalsLink() throws Exception {
        binding().link(); // throws UnsupportedBrokerException if a private member's type differs
    }

    @Test
    void theHookListIsCheckedAndInstalledFromOneList() {
        KafkaBinding b = binding();
        List<String> checked = b.hookPoints().stream().map(HookPoint::toString).toList();
        assertTrue(
                b.advisedMethods().stream()
                        .allMatch(m -> checked.contains(m.method().toString())),
                checked::toString);
    }

    /**
     * KIP-890: the hooks that tell when a verified transactional write happened, per API: PRODUCE through a {@code
     * CallbackRequest} (3 points), TXN_OFFSET_COMMIT through a {@code CallbackRequest} (classic coordinator) and the
     * verification callback of the coordinator runtime (2 more).
     */
    @Test
    void everyDeferredDispatchHookPointExists() {
        KafkaBinding b = binding();
        assertEquals(
                Set.of(ApiKeys.PRODUCE, ApiKeys.TXN_OFFSET_COMMIT),
                b.deferredDispatchHookPoints().keySet());
        assertEquals(3, b.deferredDispatchHookPoints().get(ApiKeys.PRODUCE).size());
        assertEquals(
                5, b.deferredDispatchHookPoints().get(ApiKeys.TXN_OFFSET_COMMIT).size());
        b.deferredDispatchHookPoints()
                .forEach((api, points) ->
                        assertEquals(List.of(), HookPoint.missing(getClass().getClassLoader(), points), api::name));
        assertEquals(EnumSet.of(ApiKeys.PRODUCE, ApiKeys.TXN_OFFSET_COMMIT), b.deferredDispatch());
    }

    @Test
    void theDeferredDispatchHooksTransformTheirClassesOnlyForTheApisThatHaveThem() {
        KafkaBinding b = binding();
        List<String> produce = new ArrayList<>(ALWAYS);
        produce.addAll(List.of(transactionManagerClass(), "kafka.server.KafkaRequestHandler$", requestClass()));
        List<String> both = new ArrayList<>(produce);
        both.add("kafka.server.ReplicaManager");
        assertEquals(both, b.transformedClasses());
        b.deferredDispatch(EnumSet.of(ApiKeys.PRODUCE));
        assertEquals(produce, b.transformedClasses());
        b.deferredDispatch(EnumSet.noneOf(ApiKeys.class));
        assertEquals(ALWAYS, b.transformedClasses());
    }
}
