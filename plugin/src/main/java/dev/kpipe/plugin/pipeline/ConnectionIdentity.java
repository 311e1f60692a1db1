// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import org.apache.kafka.common.network.ClientInformation;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.security.auth.KafkaPrincipal;

/**
 * Who a pipelined connection belongs to, taken from the first request kpipe read on it: what the connection dump shows
 * and what a client's quota is keyed by ({@link ThrottledClients.Client}). It keeps only the fields, not the {@link
 * RequestContext} (whose header, header data and optionals would otherwise stay on the heap for the connection's life;
 * docs/benchmark.md "S3 at scale"): the listener and client information are the channel's own objects, and the
 * principal is the one the channel's authenticator gave that request (Kafka's shared {@code ANONYMOUS} on PLAINTEXT).
 * Immutable; any thread.
 *
 * @param listenerName the listener the connection came in on, or null
 * @param principal the authenticated principal, or null
 * @param clientId the client id of that first request ({@code RequestContext.clientId()})
 * @param clientInformation the client's software name and version (KIP-511), or null
 */
record ConnectionIdentity(
        ListenerName listenerName, KafkaPrincipal principal, String clientId, ClientInformation clientInformation) {

    /**
     * @param ctx a request's context
     * @return the identity of its connection
     */
    static ConnectionIdentity of(RequestContext ctx) {
        return new ConnectionIdentity(ctx.listenerName, ctx.principal, ctx.clientId(), ctx.clientInformation);
    }

    /** @return the quota entity of the connection's client: (principal, client id), as Kafka's quotas key it */
    ThrottledClients.Client client() {
        return new ThrottledClients.Client(principal, clientId);
    }
}
