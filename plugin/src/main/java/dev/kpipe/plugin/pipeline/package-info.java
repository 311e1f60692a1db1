/**
 * The pipelining core: one {@link dev.kpipe.plugin.pipeline.ConnectionPipeline} per connection kpipe owns, its
 * {@link dev.kpipe.plugin.pipeline.ConnectionState} (the table of legal moves is on
 * {@link dev.kpipe.plugin.pipeline.ConnectionState#next}), one {@link dev.kpipe.plugin.pipeline.ProcessorPipelines}
 * per network processor, and the
 * {@link dev.kpipe.plugin.pipeline.PipelineCoordinator}, which dispatches the broker's network events to the classes
 * that own each concern: {@link dev.kpipe.plugin.pipeline.ResponseSequencer} (arrival order, one send per
 * connection), {@link dev.kpipe.backpressure.Reservations} (the byte budget for the next read),
 * {@link dev.kpipe.plugin.pipeline.Drains} (drain and hand-back), {@link dev.kpipe.plugin.pipeline.QuietPeriod} (the
 * re-authentication quiet period), {@link dev.kpipe.plugin.pipeline.Rounds} (a processor round: the evaluation of
 * each connection's mute reasons), {@link dev.kpipe.plugin.pipeline.StorageSignal} (storage-side saturation),
 * {@link dev.kpipe.plugin.pipeline.DynamicSettings} (settings altered at runtime),
 * {@link dev.kpipe.plugin.pipeline.Ownership} (take-over, hand-back, close) and
 * {@link dev.kpipe.plugin.pipeline.Throttles} (KIP-219 throttle windows). The clock is passed in
 * ({@link dev.kpipe.backpressure.Ticker}).
 *
 * <p>Who owns what: a connection's state and its parts (requests in flight, dispatch phase, throttle windows,
 * reservation, channel mute and schedule, held request, storage-side wait) are written by its
 * {@code ConnectionPipeline} only, a processor's queues and round state by its {@code ProcessorPipelines} only. The
 * classes above say what happened ({@code requestRead}, {@code dispatchEnded}, {@code responseReady},
 * {@code responseWritten}, {@code throttleStarted}, ...) and the owner moves its fields; a connection tells its
 * processor through {@link dev.kpipe.plugin.pipeline.ProcessorQueues}. {@code PipelineStructureTest} checks it.
 *
 * <h2>The life of a produce request</h2>
 *
 * One acks=all produce on a connection that is already pipelined, top to bottom. The broker's methods are Kafka
 * 4.4's ({@code kafka.network.SocketServer}'s {@code Processor}, {@code RequestChannel}, {@code KafkaApis}); the hooks
 * are the {@code dev.kpipe.interceptor.core.Hooks} Byte Buddy advice calls, which call the
 * {@link dev.kpipe.spi.NetworkEventListener} methods.
 *
 * <table>
 *   <caption>The life of a produce request</caption>
 *   <tr><th>Broker method (thread)</th><th>Hook</th><th>kpipe method</th><th>What changes</th></tr>
 *   <tr><td>{@code Processor.processCompletedReceives}, then {@code RequestChannel.sendRequest} (network)</td>
 *       <td>{@code Hooks.requestReceived}</td><td>{@code PipelineCoordinator.onRequestRead}</td>
 *       <td>classified PIPELINED; {@code conn.requestRead}: the reservation is settled by the request's size
 *       ({@code Reservations.settle}); a {@code Slot} is added to its {@code InflightRequests} (it holds the request's
 *       budget permit); its {@code DispatchPhase} starts; the binding records that kpipe owns the connection; the
 *       channel stays muted (reading a request mutes it). State: PIPELINED, unchanged.</td></tr>
 *   <tr><td>{@code KafkaApis.handle} returns (request handler)</td><td>{@code KafkaApisAdvice}</td>
 *       <td>{@code onRequestDispatched}</td>
 *       <td>the local append happened in arrival order; {@code conn.dispatchEnded}: the dispatch phase ended, the
 *       connection is signalled to its processor ({@code ProcessorPipelines.signalled}) and the processor woken. If the
 *       response reached the network thread first (acks=1: sent inside {@code handle}), its dequeue (below) already
 *       ended the phase, and nobody is woken.</td></tr>
 *   <tr><td>{@code Processor.processNewResponses} (network)</td><td>{@code Hooks.round}</td>
 *       <td>{@code onProcessorRound}, then {@code Rounds.evaluate}</td>
 *       <td>{@code ProcessorPipelines.roundStarted} queues the signalled connections; mute reasons checked
 *       ({@code conn.muteReasons}: dispatch, throttle, per-connection limits, undrained; storage pressure); a
 *       reservation for the next read taken ({@code conn.reserveNextRead}); the channel unmuted: the next request can
 *       be read.</td></tr>
 *   <tr><td>{@code Processor.dequeueResponse} (network), once the produce is acknowledged</td>
 *       <td>{@code Hooks} dequeue advice</td><td>{@code onResponseReady} ({@code ResponseSequencer.dequeued})</td>
 *       <td>{@code conn.responseReady}: the response goes into its slot; if its slot is the head and no send is
 *       outstanding, the broker sends it now (the send is outstanding); otherwise it is held ({@code held-responses}).
 *       A response of the request still in the dispatch phase ends that phase, and the connection is evaluated at this
 *       round's exit.</td></tr>
 *   <tr><td>{@code Processor.processCompletedSends} / {@code updateRequestMetrics} (network)</td>
 *       <td>{@code Hooks} completed advice</td><td>{@code onResponseWritten} ({@code ResponseSequencer.completed})
 *       </td>
 *       <td>{@code conn.responseWritten}: the oldest request leaves, its permit goes back to the budget
 *       ({@code Slot.releasePermit}); the next held response, if any, is released to its processor
 *       ({@code responseReleased}); the connection is evaluated again.</td></tr>
 *   <tr><td>{@code Processor.handleChannelMuteEvent} and {@code tryUnmuteChannel} (network)</td>
 *       <td>{@code Hooks} mute-event and try-unmute advice</td><td>{@code onThrottleStarted}, {@code onThrottleEnded}</td>
 *       <td>the binding keeps Kafka's mute state machine out of a connection kpipe owns (REQUEST_RECEIVED, RESPONSE_SENT
 *       and Kafka's unmute are skipped: kpipe decides in {@code evaluate}); THROTTLE_STARTED / ENDED (KIP-219) reach
 *       kpipe as throttle windows ({@code conn.throttleStarted}, {@code throttleEnded}), a wait reason.</td></tr>
 * </table>
 *
 * A transactional produce whose partitions the broker verifies with the transaction coordinator first (KIP-890: the
 * first produce to each partition in each transaction), and a TXN_OFFSET_COMMIT, which the broker verifies the same
 * way, differ in the second row only: {@code KafkaApis.handle} returns with the write (the append, the offsets) not
 * done, so the interceptor calls {@code onDispatchDeferred} instead ({@link
 * dev.kpipe.plugin.pipeline.DeferredDispatch}, {@code conn.dispatchDeferred}: the dispatch phase deferred, {@code
 * deferred-dispatch-total} counted, the connection stays muted); once the post-verification {@code CallbackRequest} has
 * run on a request handler (the request's {@code callbackRequestCompleteTimeNanos} is set) it calls {@code
 * onRequestDispatched}, and the rows go on as above. So a connection never has two verifications outstanding.
 *
 * An exclusive request (a FETCH) read on the same connection instead moves it to DRAINING_EXCLUSIVE (it is held),
 * and once every earlier response is written {@code Drains} hands it back to Kafka (HANDED_BACK) as if Kafka had just
 * read it. A close ({@code Processor.close}, {@code processDisconnected}: {@code onConnectionClosed}) moves any state
 * to CLOSED and releases every slot's permit once.
 *
 * <p>Threads: everything runs on the connection's network thread except {@code onRequestDispatched} (a request
 * handler), the budget's {@code admitted()} callback (the releasing thread) and the connection dump (a JMX thread);
 * each hands its news to the network thread through its processor's signal queue ({@code SignalQueue}).
 */
package dev.kpipe.plugin.pipeline;
