#!/usr/bin/env bash
# Resolve, from Maven Central, the Java parts of the local CDC stack and cache them:
#   ~/.cache/uniview/kafka-stack/<pins>/broker/  Apache Kafka (KRaft broker), Kafka Connect, Debezium's
#                                                PostgreSQL and MySQL connectors (one Debezium release for
#                                                both; the MySQL one reads MariaDB too), slf4j-simple for logs
#   ~/.cache/uniview/kafka-stack/<pins>/spark/   spark-sql-kafka-0-10 for the Spark version uniview pins
# ($UNIVIEW_CACHE overrides ~/.cache/uniview).  Idempotent and safe to run twice at once: each set is
# resolved into a temporary folder and moved into place whole.  Prints the cache folder on its last line.
set -euo pipefail

KAFKA_VERSION=3.9.1
DEBEZIUM_VERSION=3.0.8.Final
# spark-sql-kafka for Spark 3.5 (3.5.7 is the newest 3.5 release on Maven Central; patch releases are compatible)
SPARK_KAFKA_VERSION=3.5.7
SCALA_BINARY=2.12
# the folder names every pin and the connectors, so a cache made before a connector was added is not reused
CACHE="${UNIVIEW_CACHE:-$HOME/.cache/uniview}/kafka-stack/kafka-${KAFKA_VERSION}_debezium-${DEBEZIUM_VERSION}-postgres-mysql_spark-kafka-${SPARK_KAFKA_VERSION}"

if ! command -v mvn >/dev/null 2>&1 || ! command -v java >/dev/null 2>&1; then
  echo "error: the Kafka test stack needs java and mvn (Maven) to resolve its jars from Maven Central" >&2
  exit 1
fi

dependency() { printf '<dependency><groupId>%s</groupId><artifactId>%s</artifactId><version>%s</version></dependency>\n' "$@"; }

resolve() {  # resolve NAME SCOPE DEPENDENCY-XML: copy the jars and their runtime closure into $CACHE/NAME
  local name=$1 scope=$2 dependencies=$3
  if [ -f "$CACHE/$name/.complete" ]; then return 0; fi
  local work
  work=$(mktemp -d "${TMPDIR:-/tmp}/uniview-jars.XXXXXX")
  cat > "$work/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
<groupId>uniview.local</groupId><artifactId>$name</artifactId><version>1</version>
<dependencies>$dependencies</dependencies></project>
POM
  if ! mvn -q -B -f "$work/pom.xml" dependency:copy-dependencies -DincludeScope="$scope" \
       -DoutputDirectory="$work/jars" > "$work/mvn.log" 2>&1; then
    echo "error: resolving the $name jars from Maven Central failed; see $work/mvn.log" >&2
    tail -n 20 "$work/mvn.log" >&2
    exit 1
  fi
  touch "$work/jars/.complete"
  mkdir -p "$CACHE"
  if ! mv -T "$work/jars" "$CACHE/$name" 2>/dev/null; then
    [ -f "$CACHE/$name/.complete" ] || { echo "error: could not place the $name jars in $CACHE" >&2; exit 1; }
  fi
  rm -rf "$work"
}

resolve broker runtime "$(dependency org.apache.kafka kafka_2.13 "$KAFKA_VERSION")
$(dependency org.apache.kafka connect-runtime "$KAFKA_VERSION")
$(dependency org.apache.kafka connect-json "$KAFKA_VERSION")
$(dependency io.debezium debezium-connector-postgres "$DEBEZIUM_VERSION")
$(dependency io.debezium debezium-connector-mysql "$DEBEZIUM_VERSION")
$(dependency org.slf4j slf4j-simple 1.7.36)"

resolve spark runtime "$(dependency org.apache.spark "spark-sql-kafka-0-10_$SCALA_BINARY" "$SPARK_KAFKA_VERSION")"

echo "$CACHE"
