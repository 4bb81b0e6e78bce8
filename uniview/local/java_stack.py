"""The Java parts of the local CDC stack (Kafka, Kafka Connect with Debezium, spark-sql-kafka), resolved
from Maven Central into the user's cache:

    ~/.cache/uniview/kafka-stack/<pins>/broker/  Apache Kafka (KRaft broker), Kafka Connect, Debezium's
                                                 PostgreSQL and MySQL connectors (one Debezium release for
                                                 both; the MySQL one reads MariaDB too), slf4j-simple for logs
    ~/.cache/uniview/kafka-stack/<pins>/spark/   spark-sql-kafka-0-10 for the Spark version uniview pins

($UNIVIEW_CACHE overrides ~/.cache/uniview.)  This module owns the versions: scripts/setup-kafka-stack.sh
runs it (`python -m uniview.local.java_stack` prints the cache folder).  `stack_jars()` resolves the jars
on first use (idempotent; returns at once when they are cached) and returns the cache folder;
`spark_kafka_jars()` lists the few jars Spark needs on top of its own for the Kafka source.
"""

from __future__ import annotations

import os
import sys
from functools import lru_cache
from pathlib import Path

from uniview.core.errors import UniviewError
from uniview.local.maven import Artifact, resolve_jars

KAFKA_VERSION = "3.9.1"
DEBEZIUM_VERSION = "3.0.8.Final"
#: spark-sql-kafka for Spark 3.5 (3.5.7 is the newest 3.5 release on Maven Central; patch releases are compatible)
SPARK_KAFKA_VERSION = "3.5.7"
SCALA_BINARY = "2.12"
SLF4J_VERSION = "1.7.36"

#: Each folder of the cache and the artifacts whose runtime closure it holds.
JAR_SETS: dict[str, tuple[Artifact, ...]] = {
    "broker": (
        Artifact("org.apache.kafka", "kafka_2.13", KAFKA_VERSION),
        Artifact("org.apache.kafka", "connect-runtime", KAFKA_VERSION),
        Artifact("org.apache.kafka", "connect-json", KAFKA_VERSION),
        Artifact("io.debezium", "debezium-connector-postgres", DEBEZIUM_VERSION),
        Artifact("io.debezium", "debezium-connector-mysql", DEBEZIUM_VERSION),
        Artifact("org.slf4j", "slf4j-simple", SLF4J_VERSION),
    ),
    "spark": (Artifact("org.apache.spark", f"spark-sql-kafka-0-10_{SCALA_BINARY}", SPARK_KAFKA_VERSION),),
}
#: Spark ships its own Hadoop, Scala, lz4 and snappy; the Kafka source needs only these on top.
_SPARK_KAFKA_JARS = ("spark-sql-kafka-0-10_", "spark-token-provider-kafka-0-10_", "kafka-clients-", "commons-pool2-")


def cache_root() -> Path:
    """$UNIVIEW_CACHE, or ~/.cache/uniview."""
    configured = os.environ.get("UNIVIEW_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "uniview"


def stack_folder() -> Path:
    """The cache folder of these pins: its name holds every pin and the connectors, so a cache made before
    a connector was added, or with other versions, is not reused."""
    pins = f"kafka-{KAFKA_VERSION}_debezium-{DEBEZIUM_VERSION}-postgres-mysql_spark-kafka-{SPARK_KAFKA_VERSION}"
    return cache_root() / "kafka-stack" / pins


@lru_cache(maxsize=1)
def stack_jars() -> Path:
    """The cache folder holding the `broker/` and `spark/` jar folders; resolves them on first use."""
    folder = stack_folder()
    for name, artifacts in JAR_SETS.items():
        resolve_jars(folder / name, artifacts)
    return folder


def broker_classpath() -> str:
    """The classpath of the Kafka broker and Kafka Connect with Debezium's PostgreSQL and MySQL connectors."""
    return str(stack_jars() / "broker" / "*")


def spark_kafka_jars() -> list[str]:
    """The jars `spark.jars` needs for Spark's Kafka source (spark-sql-kafka-0-10 and its clients)."""
    folder = stack_jars() / "spark"
    jars = sorted(str(jar) for jar in folder.glob("*.jar") if jar.name.startswith(_SPARK_KAFKA_JARS))
    if len(jars) != len(_SPARK_KAFKA_JARS):
        raise UniviewError(f"the Spark Kafka jars in {folder} are incomplete: {jars}")
    return jars


def main() -> int:
    """Resolve the stack and print its cache folder on the last line (what scripts/setup-kafka-stack.sh prints)."""
    try:
        print(stack_jars())
    except UniviewError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
