// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.classify;

/**
 * Where a pipelined API's order-defining step happens, and so when its connection may read the next request: the end
 * of the request's dispatch phase. Two requests of one connection are dispatched in arrival order because the second
 * is not even read before the first's step happened.
 */
public enum DispatchPoint {
    /**
     * Inside {@code KafkaApis.handle}: the request is dispatched when handle returns, or when its response reaches
     * the network thread first (the broker answers a request only after handling it). For a produce the step is the
     * append to the leader log; for an offset commit, the append to the offsets log (the classic group coordinator,
     * under the group lock) or the enqueue of the write into the coordinator runtime's queue for the offsets partition
     * (KIP-848's coordinator, which applies the writes of one partition in order).
     */
    HANDLE_RETURN,
    /**
     * As {@link #HANDLE_RETURN}, except for a transactional request whose transaction the broker verifies with the
     * transaction coordinator first (KIP-890: the first write to each partition in each transaction): then the step
     * runs after handle returned, once the verification answered, on another thread, and the broker's binding reports
     * it ({@code onDispatchDeferred}, then {@code onRequestDispatched}). The binding must report it for the API
     * ({@code BrokerCapabilities.deferredDispatch}); where it cannot, the transactional requests of the API are exclusive.
     */
    AFTER_VERIFICATION
}
