/**
 * The network-layer SPI a Kafka broker would offer so that a plugin can pipeline requests on a connection: the events
 * of a connection's request/response cycle ({@link dev.kpipe.spi.NetworkEventListener}) and the actions a plugin takes
 * on the connections it owns ({@link dev.kpipe.spi.NetworkProcessor}). Written as a KIP would propose it; the proposal
 * and its rationale are in kpipe's {@code docs/kip.md}, a plugin author's guide with a complete example in
 * {@code docs/plugin-authors.md}.
 *
 * <h2>The model</h2>
 *
 * Stock Kafka's network processor mutes a connection after reading one request and unmutes it after writing that
 * request's response: one request per connection at a time. Through this SPI a plugin can take a connection's mute
 * state over ({@link dev.kpipe.spi.Admission#PIPELINED}) and read its next request as soon as the previous one is
 * <em>dispatched</em> (its order-defining step happened: {@link dev.kpipe.spi.NetworkEventListener#onRequestDispatched})
 * instead of answered, while it keeps the responses in the order the requests arrived
 * ({@link dev.kpipe.spi.NetworkEventListener#onResponseReady}). It gives the connection back with
 * {@link dev.kpipe.spi.NetworkProcessor#handBack}.
 *
 * <h2>Defaults</h2>
 *
 * Every event has a default that leaves the connection to the broker: {@code onRequestRead} answers
 * {@link dev.kpipe.spi.Admission#CLASSIC}, {@code onResponseReady} hands the response on, the others return false or
 * nothing. A plugin that only observes implements the events it wants and nothing else; the broker then behaves as
 * stock.
 *
 * <h2>Threads</h2>
 *
 * <ul>
 *   <li><b>Network thread</b>: the processor thread that owns a connection's selector
 *       ({@code data-plane-kafka-network-thread-<node>-<listener>-<n>}). Every event of a connection but the two
 *       dispatch events runs on its processor's network thread, and every action of {@link
 *       dev.kpipe.spi.NetworkProcessor} but {@code wakeup}, {@code responsesQueued} and the accessors must be called
 *       on it: the selector is not
 *       thread-safe. A plugin may keep per-connection state confined to that thread.</li>
 *   <li><b>Request handler thread</b> ({@code data-plane-kafka-request-handler-<n>}): {@code onRequestDispatched} and
 *       {@code onDispatchDeferred}, or for a deferred step whichever thread completes it (a coordinator's send
 *       thread). To act on the connection, hand the news to its network thread and call
 *       {@link dev.kpipe.spi.NetworkProcessor#wakeup}, unless {@link dev.kpipe.spi.NetworkProcessor#responsesQueued}
 *       says a round is due anyway.</li>
 *   <li>No method may block: each thread serves many connections. No method may throw: the broker catches and counts
 *       a throwable and proceeds as if the method had returned its default, which for a connection the plugin owns may
 *       leave it muted; a plugin keeps its own faults inside.</li>
 * </ul>
 *
 * <h2>Ordering</h2>
 *
 * <ul>
 *   <li>A connection's requests are reported by {@code onRequestRead} in the order they arrived; a plugin that keeps
 *       a connection muted until each request is dispatched gets its requests handled, and their order-defining steps
 *       done, in that order whatever the number of request handlers.</li>
 *   <li>{@code onRequestDispatched} comes at most once per request, after {@code onRequestRead}, and after
 *       {@code onDispatchDeferred} if that came. It may come before or after the request's response reached the
 *       network thread ({@code onResponseReady}): the broker answers only after the step, but the handler's signal
 *       can be late.</li>
 *   <li>Responses reach {@code onResponseReady} in the order the broker completes them, not the order of the
 *       requests; the broker writes them in the order the plugin hands them on, one at a time per connection, and
 *       reports each with {@code onResponseWritten}. Correlation ids are the client's: nothing in this SPI orders by
 *       them. Throttle control entries ({@link dev.kpipe.spi.ResponseKind#isControl()}) are not responses and are not
 *       ordered.</li>
 *   <li>{@code onConnectionClosed} comes once per connection; a response of a closed connection is completed with
 *       {@code onResponseWritten} (by the broker) or {@link dev.kpipe.spi.NetworkProcessor#discard} (by the plugin,
 *       for one it did not return from {@code onResponseReady}).</li>
 * </ul>
 *
 * <h2>Ownership of a connection</h2>
 *
 * The broker owns a connection until the plugin takes it over ({@code onRequestRead} answering {@code PIPELINED} or
 * {@code HELD}, {@code onUnmute} or {@code onReauthentication} answering true); while the plugin owns it, the broker
 * neither mutes nor unmutes it after a request or a response and reports its quota throttle windows (KIP-219) as
 * {@code onThrottleStarted}/{@code onThrottleEnded}. The plugin gives it back with {@code handBack} (or by answering
 * {@code CLASSIC} to a request read on it, or false to a re-authentication); a close ends ownership.
 *
 * <h2>What the broker's requests and responses are</h2>
 *
 * {@code Q} and {@code S} are the broker's own request and response objects, passed as they are: opaque, compared by
 * identity, read only through {@link dev.kpipe.spi.NetworkProcessor}. Types are kafka-clients' ({@code
 * RequestContext}, {@code AbstractRequest}, {@code ApiKeys}) or this package's; no broker class appears.
 *
 * <h2>Facts about the Kafka protocol a plugin author needs</h2>
 *
 * <ul>
 *   <li>Clients send other requests on a producing connection (METADATA, API_VERSIONS, telemetry); the Java consumer
 *       sends its group requests on a connection of their own to the coordinator.</li>
 *   <li>A produce with acks=0 has no response: the broker completes a no-op response ({@link
 *       dev.kpipe.spi.ResponseKind#NO_OP}) that still takes its turn.</li>
 *   <li>A quota throttle (KIP-219) answers at once and then keeps the connection muted for the throttle time; windows
 *       of one connection can overlap.</li>
 *   <li>SASL re-authentication (KIP-368) arrives as a {@code SASL_HANDSHAKE} on an authenticated connection; the
 *       broker's authenticator then writes to the socket itself, so nothing else may be written meanwhile.</li>
 *   <li>A transactional write is verified with the transaction coordinator first (KIP-890); the broker's write comes
 *       after {@code KafkaApis.handle} returned, on another thread: that is what deferred dispatch reports.</li>
 * </ul>
 */
package dev.kpipe.spi;
