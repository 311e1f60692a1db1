#!/bin/bash
# kafka-server-start.sh of kpipe's local Kafka image: the broker (kafka.Kafka) with the broker's log4j2 config and,
# as Kafka's script, a 1 GiB heap unless KAFKA_HEAP_OPTS says otherwise.
# Usage: kafka-server-start.sh server.properties [--override key=value ...]
set -euo pipefail
if [ $# -lt 1 ]; then echo "USAGE: $0 server.properties [--override property=value]*" >&2; exit 1; fi
export KAFKA_LOG4J_OPTS="${KAFKA_LOG4J_OPTS:--Dlog4j2.configurationFile=/opt/kafka/config/log4j2.yaml}"
export KAFKA_HEAP_OPTS="${KAFKA_HEAP_OPTS:--Xmx1G -Xms1G}"
exec /opt/kafka/bin/kafka-run-class.sh -name kafkaServer kafka.Kafka "$@"
