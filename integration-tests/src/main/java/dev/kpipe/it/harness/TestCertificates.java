// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.harness;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A throw-away TLS setup for one test cluster, generated at run time with the JDK's own {@code keytool} (run from
 * {@code java.home}; no key material is committed): a self-signed test CA, a broker key pair whose certificate the CA
 * signed for {@code 127.0.0.1} and {@code localhost} (subject alternative names, so clients keep Kafka's default
 * hostname verification), a broker key store (PKCS12: the broker key, its certificate chain) and a client trust store
 * (PKCS12: the CA certificate only). Everything is valid for 2 days. Immutable once generated.
 *
 * @param dir the folder holding the files
 * @param keyStore the broker key store ({@code ssl.keystore.location}, type PKCS12)
 * @param trustStore the client trust store ({@code ssl.truststore.location}, type PKCS12)
 * @param password the password of both stores and of the broker key
 */
public record TestCertificates(Path dir, Path keyStore, Path trustStore, String password) {

    /** The store type of both files. */
    public static final String STORE_TYPE = "PKCS12";

    /**
     * Generates a CA, a broker key and certificate signed by it, the broker key store and the client trust store in
     * {@code dir} (created if needed). Runs {@code keytool} eight times: about 2 to 5 s.
     *
     * @param dir the folder to write to
     * @return the generated files
     * @throws IllegalStateException if {@code keytool} is missing or fails (the message has its output)
     */
    public static TestCertificates generate(Path dir) {
        String password = "kpipe-test-" + Long.toHexString(System.nanoTime());
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("creating " + dir, e);
        }
        Path ca = dir.resolve("ca.p12");
        Path caCert = dir.resolve("ca.crt");
        Path keyStore = dir.resolve("broker.keystore.p12");
        Path csr = dir.resolve("broker.csr");
        Path brokerCert = dir.resolve("broker.crt");
        Path trustStore = dir.resolve("client.truststore.p12");
        String[] ec = {"-keyalg", "EC", "-groupname", "secp256r1"};
        keytool(
                dir,
                password,
                "-genkeypair",
                "-alias",
                "ca",
                ec[0],
                ec[1],
                ec[2],
                ec[3],
                "-dname",
                "CN=kpipe test CA",
                "-ext",
                "bc:c",
                "-validity",
                "2",
                "-keystore",
                ca.toString());
        keytool(
                dir,
                password,
                "-exportcert",
                "-rfc",
                "-alias",
                "ca",
                "-keystore",
                ca.toString(),
                "-file",
                caCert.toString());
        keytool(
                dir,
                password,
                "-genkeypair",
                "-alias",
                "broker",
                ec[0],
                ec[1],
                ec[2],
                ec[3],
                "-dname",
                "CN=localhost",
                "-validity",
                "2",
                "-keystore",
                keyStore.toString());
        keytool(
                dir,
                password,
                "-certreq",
                "-alias",
                "broker",
                "-keystore",
                keyStore.toString(),
                "-file",
                csr.toString());
        keytool(
                dir,
                password,
                "-gencert",
                "-rfc",
                "-alias",
                "ca",
                "-keystore",
                ca.toString(),
                "-infile",
                csr.toString(),
                "-outfile",
                brokerCert.toString(),
                "-ext",
                "SAN=IP:127.0.0.1,DNS:localhost",
                "-ext",
                "KU=digitalSignature",
                "-ext",
                "EKU=serverAuth",
                "-validity",
                "2");
        importCert(dir, password, "ca", caCert, keyStore);
        importCert(dir, password, "broker", brokerCert, keyStore);
        importCert(dir, password, "ca", caCert, trustStore);
        return new TestCertificates(dir, keyStore, trustStore, password);
    }

    /** Imports a certificate file into a PKCS12 store under an alias ({@code keytool -importcert -noprompt}). */
    private static void importCert(Path dir, String password, String alias, Path cert, Path store) {
        keytool(
                dir,
                password,
                "-importcert",
                "-noprompt",
                "-alias",
                alias,
                "-file",
                cert.toString(),
                "-keystore",
                store.toString());
    }

    private static void keytool(Path dir, String password, String... args) {
        Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
        List<String> cmd = new ArrayList<>();
        cmd.add(keytool.toString());
        cmd.addAll(List.of(args));
        cmd.addAll(List.of("-storetype", STORE_TYPE, "-storepass", password));
        if (args[0].equals("-genkeypair")) {
            cmd.addAll(List.of("-keypass", password));
        }
        try {
            Process p = new ProcessBuilder(cmd)
                    .directory(dir.toFile())
                    .redirectErrorStream(true)
                    .start();
            p.getOutputStream().close();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("keytool " + args[0] + " did not finish within 60 s");
            }
            if (p.exitValue() != 0) {
                throw new IllegalStateException("keytool " + String.join(" ", args) + " failed (exit " + p.exitValue()
                        + "): " + new String(out, StandardCharsets.UTF_8).trim());
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + keytool + " (a JDK is needed for TLS tests)", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running keytool", e);
        }
    }
}
