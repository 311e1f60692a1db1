// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.KafkaNode;
import dev.kpipe.it.wire.RawKafkaConnection;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.security.auth.callback.Callback;
import javax.security.auth.callback.NameCallback;
import javax.security.auth.callback.PasswordCallback;
import javax.security.auth.callback.UnsupportedCallbackException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.common.message.SaslAuthenticateRequestData;
import org.apache.kafka.common.message.SaslHandshakeRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.SaslAuthenticateRequest;
import org.apache.kafka.common.requests.SaslAuthenticateResponse;
import org.apache.kafka.common.requests.SaslHandshakeRequest;
import org.apache.kafka.common.requests.SaslHandshakeResponse;
import org.apache.kafka.common.security.scram.internals.ScramSaslClient;

/**
 * SCRAM-SHA-512 for the tests that authenticate: users, waiting until the brokers know them, and the client side of
 * the exchange on a raw connection. The credentials are Kafka's own ({@code Admin.alterUserScramCredentials}, KIP-554),
 * the exchange is kafka-clients' {@link ScramSaslClient}.
 */
public final class Scram {

    private Scram() {}

    /**
     * Creates a SCRAM-SHA-512 user and waits (at most 30 s per listener) until every given listener accepts it:
     * credentials reach the brokers through the metadata log.
     *
     * @param cluster the cluster
     * @param user the user
     * @param password its password
     * @param clientConfigs one client config per listener to wait for, e.g. {@link Cluster#saslClientConfig}
     * @throws Exception if the user cannot be created
     * @throws AssertionError if it never authenticates on a listener
     */
    public static void createUser(
            Cluster cluster, String user, String password, List<Map<String, Object>> clientConfigs) throws Exception {
        upsertUser(cluster, user, password);
        for (Map<String, Object> props : clientConfigs) {
            awaitAccepted(
                    props,
                    Duration.ofSeconds(30),
                    "SCRAM user " + user + " authenticates on " + props.get("security.protocol"),
                    admin -> admin.describeCluster().nodes().get(5, TimeUnit.SECONDS));
        }
    }

    /**
     * Creates (or updates) the SCRAM-SHA-512 credentials of a user, 4096 iterations, with the cluster's Admin client.
     * Returns once the controller accepted them: the brokers learn them a little later, see {@link #awaitAccepted}.
     *
     * @throws Exception if the controller refuses them or does not answer within 30 s
     */
    public static void upsertUser(Cluster cluster, String user, String password) throws Exception {
        cluster.admin()
                .alterUserScramCredentials(List.of(new UserScramCredentialUpsertion(
                        user, new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096), password)))
                .all()
                .get(30, TimeUnit.SECONDS);
    }

    /**
     * Retries {@code call} with a new Admin client of {@code clientConfig} (5 s API timeout) every 200 ms until it
     * succeeds: what an administrator changed (credentials, ACLs) reaches the brokers through the metadata log.
     *
     * @param clientConfig the client config of the user, e.g. {@link Cluster#saslClientConfig}; copied
     * @param what the condition, for the failure message
     * @throws AssertionError if {@code call} still fails after {@code timeout}, with its last failure as the cause
     */
    public static void awaitAccepted(Map<String, Object> clientConfig, Duration timeout, String what, AdminCall call)
            throws InterruptedException {
        Map<String, Object> props = new HashMap<>(clientConfig);
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 5000);
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 3000);
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            try (Admin admin = Admin.create(props)) {
                call.run(admin);
                return;
            } catch (Exception e) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("not within " + timeout.toSeconds() + " s: " + what, e);
                }
            }
            TimeUnit.MILLISECONDS.sleep(200); // back-off between attempts
        }
    }

    /** An Admin call that throws what fails it. */
    @FunctionalInterface
    public interface AdminCall {
        /** @throws Exception whatever makes the call fail; {@link #awaitAccepted} tries again */
        void run(Admin admin) throws Exception;
    }

    /** @return a {@code SASL_HANDSHAKE} v1 for SCRAM-SHA-512 */
    static SaslHandshakeRequest handshake() {
        return new SaslHandshakeRequest.Builder(new SaslHandshakeRequestData().setMechanism(KafkaNode.SASL_MECHANISM))
                .build((short) 1);
    }

    /**
     * Authenticates a raw connection: {@code SASL_HANDSHAKE} v1, then {@link #exchange}.
     *
     * @return the session lifetime the broker granted, in ms (0: no re-authentication)
     */
    public static long authenticate(RawKafkaConnection conn, String user, String password, int correlationId)
            throws Exception {
        conn.send(correlationId, handshake());
        RawKafkaConnection.Received r = conn.receive(ApiKeys.SASL_HANDSHAKE, (short) 1);
        assertEquals(correlationId, r.correlationId());
        assertEquals(Errors.NONE, ((SaslHandshakeResponse) r.response()).error());
        return exchange(conn, user, password, correlationId + 1);
    }

    /**
     * The SCRAM-SHA-512 token exchange in {@code SASL_AUTHENTICATE} v2 requests (kafka-clients' own SCRAM client),
     * after a successful handshake.
     *
     * @return the session lifetime the broker granted, in ms
     */
    static long exchange(RawKafkaConnection conn, String user, String password, int correlationId) throws Exception {
        ScramSaslClient scram = new ScramSaslClient(
                org.apache.kafka.common.security.scram.internals.ScramMechanism.SCRAM_SHA_512, callbacks -> {
                    for (Callback c : callbacks) {
                        if (c instanceof NameCallback n) {
                            n.setName(user);
                        } else if (c instanceof PasswordCallback pw) {
                            pw.setPassword(password.toCharArray());
                        } else {
                            throw new UnsupportedCallbackException(c);
                        }
                    }
                });
        byte[] token = scram.evaluateChallenge(new byte[0]);
        while (true) {
            conn.send(
                    correlationId,
                    new SaslAuthenticateRequest.Builder(new SaslAuthenticateRequestData().setAuthBytes(token))
                            .build((short) 2));
            RawKafkaConnection.Received r = conn.receive(ApiKeys.SASL_AUTHENTICATE, (short) 2);
            assertEquals(correlationId++, r.correlationId());
            SaslAuthenticateResponse response = (SaslAuthenticateResponse) r.response();
            assertEquals(Errors.NONE, response.error(), response.errorMessage());
            token = scram.evaluateChallenge(response.saslAuthBytes());
            if (scram.isComplete()) {
                return response.sessionLifetimeMs();
            }
        }
    }
}
