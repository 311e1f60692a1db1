package dev.kpipe.it;

import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/** Reads what the kpipe plugin wrote into a broker's log. */
final class KpipeLog {
  /** The plugin's one INFO line per installation: "kpipe <version> started: ...". */
  private static final Pattern STARTED = Pattern.compile("\\bkpipe \\S+ started\\b");
  private static final Pattern LISTENERS = Pattern.compile("\\blisteners=\\[([^\\]]*)\\]");

  private KpipeLog() {}

  /** @return the log lines announcing that kpipe started */
  static List<String> startedLines(String log) {
    return log.lines().filter(l -> STARTED.matcher(l).find()).collect(Collectors.toList());
  }

  /** @return the inside of the {@code listeners=[...]} part of a line, if it has one */
  static Optional<String> listeners(String line) {
    Matcher m = LISTENERS.matcher(line);
    return m.find() ? Optional.of(m.group(1)) : Optional.empty();
  }
}
