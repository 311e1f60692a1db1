#!/bin/bash
# kafka-storage.sh of kpipe's local Kafka image: Kafka's storage tool (format, info, random-uuid).
set -euo pipefail
exec /opt/kafka/bin/kafka-run-class.sh kafka.tools.StorageTool "$@"
