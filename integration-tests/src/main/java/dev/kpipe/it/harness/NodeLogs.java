// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.harness;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;

/** A {@link KafkaNode}'s log files: its log4j2 config, and reading logs from an offset and their tails (any thread). */
final class NodeLogs {
    private NodeLogs() {}

    /** @return the log4j2 config of a node's broker JVM: everything to {@code logFile}, appended across restarts */
    static String log4jConfig(int id, Path logFile) {
        return """
        <?xml version="1.0" encoding="UTF-8"?>
        <!-- Broker logging of node %d (kpipe harness): everything in server.log. -->
        <Configuration status="WARN">
          <Appenders>
            <File name="server" fileName="%s" append="true" immediateFlush="true">
              <PatternLayout pattern="[%%d] %%p %%m (%%c)%%n"/>
            </File>
          </Appenders>
          <Loggers>
            <Logger name="kafka.request.logger" level="WARN"/>
            <Logger name="org.apache.kafka.controller" level="INFO"/>
            <Root level="INFO"><AppenderRef ref="server"/></Root>
          </Loggers>
        </Configuration>
        """.formatted(id, logFile);
    }

    static long size(Path file) {
        try {
            return Files.exists(file) ? Files.size(file) : 0;
        } catch (IOException e) {
            return 0;
        }
    }

    static String read(Path file, long fromOffset) {
        if (!Files.exists(file)) {
            return "";
        }
        try {
            byte[] all = Files.readAllBytes(file);
            int from = (int) Math.min(Math.max(0, fromOffset), all.length);
            return new String(all, from, all.length - from, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static String tail(String text, int lines) {
        List<String> all = text.lines().collect(Collectors.toList());
        return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    }

    /**
     * The first lines of a log that say why a JVM died: ERROR and FATAL lines and the exception lines under them.
     *
     * @param text the log
     * @param lines at most this many lines
     * @return those lines, or "(none)"
     */
    static String firstErrors(String text, int lines) {
        List<String> errors = text.lines()
                .filter(l -> l.contains("] ERROR ")
                        || l.contains("] FATAL ")
                        || l.startsWith("Caused by:")
                        || l.matches("^[a-z][\\w.$]*(Exception|Error)(: .*)?$"))
                .limit(lines)
                .collect(Collectors.toList());
        return errors.isEmpty() ? "(none)" : String.join("\n", errors);
    }
}
