// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/** The version of the Kafka broker kpipe runs in, read from kafka-clients' version resource. */
public final class KafkaVersion {
    private KafkaVersion() {}

    /**
     * Thread: any.
     *
     * @param loader the broker's class loader
     * @return the Kafka version, e.g. {@code 4.4.0}, or {@code unknown}
     */
    public static String of(ClassLoader loader) {
        try (InputStream in = loader.getResourceAsStream("kafka/kafka-version.properties")) {
            if (in == null) {
                return "unknown";
            }
            Properties p = new Properties();
            p.load(in);
            return p.getProperty("version", "unknown").trim();
        } catch (IOException e) {
            return "unknown";
        }
    }
}
