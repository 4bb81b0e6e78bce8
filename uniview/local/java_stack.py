"""The Java parts of the local CDC stack (Kafka, Kafka Connect with Debezium, spark-sql-kafka), as
scripts/setup-kafka-stack.sh resolves them from Maven Central into a cache.

`stack_jars()` runs that script (idempotent; returns at once when the jars are cached) and returns the
cache folder; `spark_kafka_jars()` lists the few jars Spark needs on top of its own for the Kafka source.
"""

from __future__ import annotations

import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

from uniview.core.errors import UniviewError

_CHECKOUT = Path(__file__).resolve().parents[2]
SETUP_SCRIPT = _CHECKOUT / "scripts" / "setup-kafka-stack.sh"
#: Spark ships its own Hadoop, Scala, lz4 and snappy; the Kafka source needs only these on top.
_SPARK_KAFKA_JARS = ("spark-sql-kafka-0-10_", "spark-token-provider-kafka-0-10_", "kafka-clients-", "commons-pool2-")


@lru_cache(maxsize=1)
def stack_jars() -> Path:
    """The cache folder holding `broker/` and `spark/` jar folders; installs them on first use."""
    if not SETUP_SCRIPT.is_file():
        raise UniviewError(f"{SETUP_SCRIPT} is missing: the local Kafka stack runs from a uniview checkout")
    if not shutil.which("java"):
        raise UniviewError("the local Kafka stack needs java (OpenJDK 17) on PATH")
    result = subprocess.run(["bash", str(SETUP_SCRIPT)], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise UniviewError(f"installing the Kafka stack failed: {result.stderr.strip()[-2000:]}")
    return Path(result.stdout.strip().splitlines()[-1])


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
