// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.harness;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What kpipe did in one node JVM, read from what kpipe's loggers ({@code dev.kpipe.*}) wrote to the node's log at INFO
 * and above since its last start. kpipe logs one of: {@code kpipe <version> started: ...} (its hooks are installed),
 * {@code kpipe <version> disabled (kpipe.enable=false): ...}, or an ERROR saying why it cannot run (an unsupported
 * broker, a JVM that forbids attach without the agent); a WARN names settings it ignores (docs/operations.md, log
 * lines). The jar in {@code libs/} and the settings alone do not say which: a broker that cannot be hooked runs stock.
 *
 * @param state what kpipe did
 * @param line the log message that says so, without timestamp and logger ({@code ""} for {@link State#NO_LINE})
 * @param warnings kpipe's WARN messages
 */
record KpipeStatus(State state, String line, List<String> warnings) {
    /** What kpipe did in a node JVM. */
    enum State {
        /** {@code kpipe <version> started}: installed, pipelining. */
        RUNNING,
        /** {@code kpipe <version> disabled}: in {@code libs/}, {@code kpipe.enable=false}. */
        DISABLED,
        /** An ERROR from kpipe and no start line: the broker runs stock. */
        NOT_RUNNING,
        /** No line from kpipe (kpipe not in {@code libs/} or not in {@code metric.reporters}). */
        NO_LINE
    }

    /** A one-line record of the harness's broker log layout {@code [%d] %p %m (%c)%n} written by a kpipe logger. */
    private static final Pattern KPIPE_RECORD =
            Pattern.compile("^\\[[^\\]]+\\] (INFO|WARN|ERROR|FATAL) (.*) \\((dev\\.kpipe\\.[\\w.$]+)\\)$");

    private static final Pattern STARTED = Pattern.compile("^kpipe \\S+ started\\b");
    private static final Pattern DISABLED = Pattern.compile("^kpipe \\S+ disabled\\b");

    /**
     * @param log a node's log since its last start ({@link KafkaNode#logSinceStart()})
     * @return what kpipe did, by the first start, disabled or ERROR line (in that order of precedence)
     */
    static KpipeStatus of(String log) {
        String started = null;
        String disabled = null;
        String error = null;
        List<String> warnings = new ArrayList<>();
        for (String line : (Iterable<String>) log.lines()::iterator) {
            Matcher m = KPIPE_RECORD.matcher(line);
            if (!m.matches()) {
                continue;
            }
            String level = m.group(1);
            String message = m.group(2);
            if (level.equals("INFO")
                    && started == null
                    && STARTED.matcher(message).find()) {
                started = message;
            } else if (level.equals("INFO")
                    && disabled == null
                    && DISABLED.matcher(message).find()) {
                disabled = message;
            } else if (level.equals("WARN")) {
                warnings.add(message);
            } else if (!level.equals("INFO") && error == null) {
                error = message;
            }
        }
        if (started != null) {
            return new KpipeStatus(State.RUNNING, started, warnings);
        }
        if (disabled != null) {
            return new KpipeStatus(State.DISABLED, disabled, warnings);
        }
        if (error != null) {
            return new KpipeStatus(State.NOT_RUNNING, error, warnings);
        }
        return new KpipeStatus(State.NO_LINE, "", warnings);
    }

    /** @return the line, shortened before its {@code settings {...}} part (the start line lists every setting) */
    String shortLine() {
        int settings = line.indexOf(", settings {");
        return settings < 0 ? line : line.substring(0, settings);
    }
}
