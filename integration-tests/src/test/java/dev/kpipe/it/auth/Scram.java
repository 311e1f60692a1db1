package dev.kpipe.it.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.KafkaNode;
import dev.kpipe.it.wire.RawKafkaConnection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.security.auth.callback.Callback;
import javax.security.auth.callback.NameCallback;
import javax.security.auth.callback.PasswordCallback;
import javax.security.auth.callback.UnsupportedCallbackException;
import org.apache.kafka.clients.admin.Admin;
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

/** SCRAM-SHA-512 for the authentication tests: users, and the client side of the exchange on a raw connection. */
final class Scram {

    private Scram() {
    }

    /**
     * Creates a SCRAM-SHA-512 user and waits (at most 30 s per listener) until every given listener accepts it:
     * credentials reach the brokers through the metadata log.
     *
     * @param cluster the cluster
     * @param user the user
     * @param password its password
     * @param clientConfigs one client config per listener to wait for, e.g. {@link Cluster#saslClientConfig}
     * @throws Exception if the user cannot be created or never authenticates
     */
    static void createUser(Cluster cluster, String user, String password, List<Map<String, Object>> clientConfigs)
        throws Exception {
        cluster.admin().alterUserScramCredentials(List.of(new UserScramCredentialUpsertion(user,
            new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096), password))).all().get(30, TimeUnit.SECONDS);
        for (Map<String, Object> props : clientConfigs) {
            props.put("default.api.timeout.ms", 5000);
            props.put("request.timeout.ms", 3000);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (true) {
                try (Admin admin = Admin.create(props)) {
                    admin.describeCluster().nodes().get(5, TimeUnit.SECONDS);
                    break;
                } catch (Exception e) {
                    if (System.nanoTime() > deadline) {
                        throw new AssertionError("SCRAM user " + user + " cannot authenticate on "
                            + props.get("security.protocol"), e);
                    }
                    TimeUnit.MILLISECONDS.sleep(200); // back-off between attempts
                }
            }
        }
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
    static long authenticate(RawKafkaConnection conn, String user, String password, int correlationId)
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
            conn.send(correlationId, new SaslAuthenticateRequest.Builder(
                new SaslAuthenticateRequestData().setAuthBytes(token)).build((short) 2));
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
