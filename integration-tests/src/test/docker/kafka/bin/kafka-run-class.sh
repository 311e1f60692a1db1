#!/bin/bash
# kafka-run-class.sh of kpipe's local Kafka image (the Maven jars carry no bin/): runs a Java class with every jar of
# /opt/kafka/libs on the class path and the JVM options of Kafka's own script, read from the same variables:
# KAFKA_HEAP_OPTS (default -Xmx256M), KAFKA_JVM_PERFORMANCE_OPTS (default G1 as Kafka's), KAFKA_JMX_OPTS with JMX_PORT
# (only where JMX_PORT is set: the broker's run script sets it, a `docker exec` of a tool does not), KAFKA_LOG4J_OPTS
# (default the tools' log4j2 config), KAFKA_OPTS.
# Usage: kafka-run-class.sh [-name NAME] CLASS [ARGS...]
set -euo pipefail
base_dir=/opt/kafka
if [ "${1:-}" = "-name" ]; then shift 2; fi
if [ $# -lt 1 ]; then echo "USAGE: $0 [-name NAME] CLASS [ARGS...]" >&2; exit 1; fi
jmx=()
if [ -n "${JMX_PORT:-}" ]; then
  # shellcheck disable=SC2206 # a list of options, split on spaces as Kafka's script does
  jmx=(${KAFKA_JMX_OPTS:--Dcom.sun.management.jmxremote -Dcom.sun.management.jmxremote.authenticate=false -Dcom.sun.management.jmxremote.ssl=false -Dcom.sun.management.jmxremote.port=$JMX_PORT})
fi
# shellcheck disable=SC2206
heap=(${KAFKA_HEAP_OPTS:--Xmx256M})
# shellcheck disable=SC2206
perf=(${KAFKA_JVM_PERFORMANCE_OPTS:--server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -Djava.awt.headless=true})
# shellcheck disable=SC2206
log4j=(${KAFKA_LOG4J_OPTS:--Dlog4j2.configurationFile=$base_dir/config/tools-log4j2.yaml})
# shellcheck disable=SC2206
opts=(${KAFKA_OPTS:-})
exec java "${heap[@]}" "${perf[@]}" "${jmx[@]}" "${log4j[@]}" "${opts[@]}" -cp "$base_dir/libs/*" "$@"
