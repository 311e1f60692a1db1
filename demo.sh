#!/usr/bin/env bash
# Builds kpipe (showing progress; the first run downloads Maven's plugins and the Kafka jars: ~5 minutes) and runs
# the demo: one acks=all producer over a slow-ack path (the follower acknowledges every 100 ms), stock Kafka 4.4.0 vs
# the same broker with kpipe, 3 alternating rounds x 15 s per side, then a table (~3 minutes).
#   ./demo.sh                                                               # the demo
#   ./demo.sh --scenario all --window-ms 100,250 --rounds 5 --duration-s 30 # the benchmark (./demo.sh --help)
#   ./demo.sh --scenario sweep                                              # S1 at W = 10..500 ms and a chart (~9 min)
#   SKIP_BUILD=1 ./demo.sh ...                                              # reuse the last build
# Ctrl-C stops the brokers. Results: integration-tests/target/bench/*.json (and *-s1-sweep.png for the sweep)
set -euo pipefail
cd "$(dirname "$0")"
# --help needs no build once there is one
help=false
for a in "$@"; do case "$a" in --help|-h) help=true ;; esac; done
# build_progress TTY: reads Maven's batch output and prints one line per module and how much Maven downloaded (a first
# run fills an empty local Maven repository; on a terminal it is one line kept up to date). Before the first module
# Maven reads the poms (and downloads what they import): that is shown as the parent module, kpipe.
build_progress() {
  awk -v tty="$1" '
    BEGIN { module = "[0] kpipe (reading the poms)" }
    function show(msg) {
      if (tty == "true") { printf "\r\033[K  %s", msg } else { print "  " msg }
      fflush()
    }
    function fetched() { return files ? sprintf(" (%d files downloaded, %.0f MB)", files, bytes / 1e6) : "" }
    /^\[INFO\] Downloaded from / {
      files++
      s = $0; sub(/.*\(/, "", s); split(s, a, " ")
      bytes += a[1] * (a[2] == "GB" ? 1e9 : a[2] == "MB" ? 1e6 : a[2] == "kB" ? 1e3 : 1)
      if (tty == "true" || files % 200 == 0) show(module fetched())
      next
    }
    /^\[INFO\] Building .* \[[0-9]+\/[0-9]+\]$/ {
      s = $0; sub(/^\[INFO\] Building /, "", s)
      n = s; sub(/ +\[[0-9]+\/[0-9]+\]$/, "", n); sub(/ [0-9][^ ]*$/, "", n)
      i = s; sub(/.*\[/, "[", i)
      module = i " " n
      show(module fetched())
    }
    END { if (tty == "true") printf "\n"; if (files) printf "  Maven downloaded %d files, %.0f MB\n", files, bytes / 1e6 }
  '
}
# maven_repository: the local Maven repository the build uses: -Dmaven.repo.local in MAVEN_OPTS, else
# <localRepository> of ~/.m2/settings.xml, else ~/.m2/repository (Maven's own order, without starting Maven).
maven_repository() {
  local repo="" opt
  for opt in ${MAVEN_OPTS:-}; do
    case "$opt" in -Dmaven.repo.local=*) repo="${opt#-Dmaven.repo.local=}" ;; esac
  done
  if [ -z "$repo" ] && [ -f "$HOME/.m2/settings.xml" ]; then
    repo="$(sed -n 's:.*<localRepository>[[:space:]]*\([^<]*[^<[:space:]]\)[[:space:]]*</localRepository>.*:\1:p' \
      "$HOME/.m2/settings.xml" | head -n 1)"
    repo="${repo//\$\{user.home\}/$HOME}"
  fi
  echo "${repo:-$HOME/.m2/repository}"
}
if [ "${SKIP_BUILD:-0}" != 1 ] \
    && ! { $help && ls integration-tests/target/kpipe-integration-tests-*[0-9T].jar >/dev/null 2>&1; }; then
  # package, not install: the runner uses the build's own target/ folders, so no kpipe artifact goes into the local
  # Maven repository (only what Maven downloads). (No colour
  # codes: -Dstyle.color=never, and .mvn/jvm.config stops Maven 3.8's console library writing ESC[0m resets.)
  # Maven's own output goes to a log; the terminal gets the progress.
  build_log="$(mktemp "${TMPDIR:-/tmp}/kpipe-demo-build.XXXXXX")"
  tty=false; [ -t 2 ] && tty=true
  started=$SECONDS
  echo "Building kpipe with mvn package. The first run downloads about 450 MB into $(maven_repository) (Maven's plugins, kpipe's" \
    "dependencies, the Kafka jars): about 5 minutes; later builds about a minute. Maven's log: $build_log" >&2
  if ! mvn -B -Dstyle.color=never package -DskipTests 2>&1 | tee "$build_log" | build_progress "$tty" >&2; then
    echo "The build failed; Maven's log: $build_log. Its errors:" >&2
    grep -E '^\[ERROR\]' "$build_log" | head -n 30 >&2
    exit 1
  fi
  mv -f "$build_log" integration-tests/target/demo-build.log
  echo "Built in $((SECONDS - started)) s (Maven's log: integration-tests/target/demo-build.log)" >&2
fi
[ $# -gt 0 ] || set -- demo
# Run from private copies of the bench jar and the kpipe jar, so that a rebuild of the tree during the run cannot pull
# classes from under the bench JVM or hand a half-written kpipe jar to a broker.
b=integration-tests/target/bench; mkdir -p $b/plugin $b/libs
cp integration-tests/target/kpipe-integration-tests-*[0-9T].jar $b/.bench.jar.$$ && mv -f $b/.bench.jar.$$ $b/kpipe-bench.jar
for j in integration-tests/target/bench-libs/*.jar; do # the runner's chart library (a build before it: no chart)
  [ -e "$j" ] || continue
  cp "$j" $b/libs/.tmp.$$ && mv -f $b/libs/.tmp.$$ "$b/libs/$(basename "$j")"
done
plugin=$(ls plugin/target/kpipe-plugin-*[0-9T].jar | head -1)
cp "$plugin" $b/plugin/.tmp.$$ && mv -f $b/plugin/.tmp.$$ "$b/plugin/$(basename "$plugin")"
# --kpipe-observer request-timing: the example observer's jar, copied as the kpipe jar is
observer_opt=""
for j in examples/request-timing/target/kpipe-example-request-timing-*[0-9T].jar; do
  [ -e "$j" ] || continue
  mkdir -p $b/observer && cp "$j" $b/observer/.tmp.$$ && mv -f $b/observer/.tmp.$$ "$b/observer/$(basename "$j")"
  observer_opt="-Dkpipe.bench.observer.jar=$b/observer/$(basename "$j")"
done
tty=false; [ -t 2 ] && tty=true
# S10 holds thousands of sockets in this JVM and in its broker (a child process, which inherits the limit): open files
# up to the hard limit (HotSpot on Linux raises its own soft limit too; this does not depend on it)
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
exec java ${BENCH_JAVA_OPTS:-} $observer_opt -Djava.awt.headless=true -Dkpipe.bench.tty=$tty -Dkpipe.it.plugin.jar="$b/plugin/$(basename "$plugin")" \
  -cp "$b/kpipe-bench.jar:$b/libs/*:integration-tests/target/kafka-4.4.0/libs/*" \
  dev.kpipe.it.bench.BenchMain "$@"
