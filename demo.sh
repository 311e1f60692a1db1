#!/usr/bin/env bash
# Builds kpipe and runs the demo: one acks=all producer over a slow-ack path (the follower acknowledges every 100 ms),
# stock Kafka 4.4.0 vs the same broker with kpipe, 3 alternating rounds x 15 s per side, then a table (~3 minutes).
#   ./demo.sh                                                               # the demo
#   ./demo.sh --scenario all --window-ms 100,250 --rounds 5 --duration-s 30 # the benchmark (./demo.sh --help)
#   SKIP_BUILD=1 ./demo.sh ...                                              # reuse the last build
# Ctrl-C stops the brokers. Results: integration-tests/target/bench/*.json
set -euo pipefail
cd "$(dirname "$0")"
# --help needs no build once there is one
help=false
for a in "$@"; do case "$a" in --help|-h) help=true ;; esac; done
if [ "${SKIP_BUILD:-0}" != 1 ] \
    && ! { $help && ls integration-tests/target/kpipe-integration-tests-*[0-9T].jar >/dev/null 2>&1; }; then
  mvn -B -q -Dstyle.color=never install -DskipTests
fi
[ $# -gt 0 ] || set -- demo
# Run from private copies of the bench jar and the kpipe jar, so that a rebuild of the tree during the run cannot pull
# classes from under the bench JVM or hand a half-written kpipe jar to a broker.
b=integration-tests/target/bench; mkdir -p $b/plugin
cp integration-tests/target/kpipe-integration-tests-*[0-9T].jar $b/.bench.jar.$$ && mv -f $b/.bench.jar.$$ $b/kpipe-bench.jar
plugin=$(ls plugin/target/kpipe-plugin-*[0-9T].jar | head -1)
cp "$plugin" $b/plugin/.tmp.$$ && mv -f $b/plugin/.tmp.$$ "$b/plugin/$(basename "$plugin")"
tty=false; [ -t 2 ] && tty=true
exec java ${BENCH_JAVA_OPTS:-} -Dkpipe.bench.tty=$tty -Dkpipe.it.plugin.jar="$b/plugin/$(basename "$plugin")" \
  -cp "$b/kpipe-bench.jar:integration-tests/target/kafka-4.4.0/libs/*" \
  dev.kpipe.it.bench.BenchMain "$@"
