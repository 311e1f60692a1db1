// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/** Reads what the kpipe plugin wrote into a broker's log. */
public final class KpipeLog {
    /** The plugin's one INFO line per installation: "kpipe <version> started: ...". */
    private static final Pattern STARTED = Pattern.compile("\\bkpipe \\S+ started\\b");

    private static final Pattern LISTENERS = Pattern.compile("\\blisteners=\\[([^\\]]*)\\]");
    /** First line of a record in the harness's broker log layout {@code [%d] %p %m (%c)%n}. */
    private static final Pattern RECORD_START =
            Pattern.compile("^\\[\\d{4}-\\d\\d-\\d\\d [^\\]]*\\] (TRACE|DEBUG|INFO|WARN|ERROR|FATAL) ");
    /** The logger name closing a record's message: " (org.apache.kafka.X)" at the end of a line. */
    private static final Pattern LOGGER = Pattern.compile(" \\(([A-Za-z_$][\\w.$]*)\\)$");

    /** The package (and logger name prefix) of every kpipe class, shaded libraries included. */
    public static final String KPIPE_LOGGER_PREFIX = "dev.kpipe.";

    private KpipeLog() {}

    /**
     * One log record of a broker log: its level, the logger that wrote it, and its whole text (continuation lines and
     * stack trace included).
     */
    public record LogRecord(String level, String logger, String text) {
        /** @return whether a kpipe class wrote it */
        public boolean fromKpipe() {
            return logger.startsWith(KPIPE_LOGGER_PREFIX);
        }

        /** @return whether it is WARN or above */
        public boolean warnOrAbove() {
            return level.equals("WARN") || level.equals("ERROR") || level.equals("FATAL");
        }

        /** @return whether a kpipe class wrote it or its text names kpipe (e.g. Kafka complaining about a kpipe key) */
        public boolean aboutKpipe() {
            return fromKpipe() || text.toLowerCase(Locale.ROOT).contains("kpipe");
        }
    }

    /** @return the log lines announcing that kpipe started */
    public static List<String> startedLines(String log) {
        return log.lines().filter(l -> STARTED.matcher(l).find()).collect(Collectors.toList());
    }

    /** @return the inside of the {@code listeners=[...]} part of a line, if it has one */
    public static Optional<String> listeners(String line) {
        Matcher m = LISTENERS.matcher(line);
        return m.find() ? Optional.of(m.group(1)) : Optional.empty();
    }

    /**
     * Splits a broker log written with the harness's layout ({@code [%d] %p %m (%c)%n}) into records: a record starts
     * at a line with a timestamp and level; its logger is the first {@code (name)} closing one of its lines (the
     * message may span lines, a stack trace follows it). Text before the first record is ignored.
     *
     * @param log the log text
     * @return the records in log order
     */
    public static List<LogRecord> records(String log) {
        List<LogRecord> out = new ArrayList<>();
        String level = null;
        String logger = null;
        StringBuilder text = new StringBuilder();
        for (String line : (Iterable<String>) log.lines()::iterator) {
            Matcher start = RECORD_START.matcher(line);
            if (start.find()) {
                if (level != null) {
                    out.add(new LogRecord(level, logger == null ? "" : logger, text.toString()));
                }
                level = start.group(1);
                logger = null;
                text.setLength(0);
            } else if (level == null) {
                continue;
            } else {
                text.append('\n');
            }
            text.append(line);
            if (logger == null) {
                Matcher m = LOGGER.matcher(line);
                if (m.find()) {
                    logger = m.group(1);
                }
            }
        }
        if (level != null) {
            out.add(new LogRecord(level, logger == null ? "" : logger, text.toString()));
        }
        return out;
    }
}
