// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/** kpipe's version, from the jar's {@code kpipe-version.properties} (filtered by the build). */
final class KpipeVersion {

    private KpipeVersion() {}

    /** @return kpipe's version, e.g. {@code 0.1.0}, or {@code unknown}; thread: any */
    static String get() {
        try (InputStream in = KpipeVersion.class.getResourceAsStream("kpipe-version.properties")) {
            Properties p = new Properties();
            if (in != null) {
                p.load(in);
            }
            return p.getProperty("version", "unknown");
        } catch (IOException e) {
            return "unknown";
        }
    }
}
