"""Where the sink reads its records: NDJSON files, or Kafka topics.

Both become the same frame of lines, one row per record: `value` (the record's text; NULL for a Kafka
tombstone), `key` (the Kafka message key as text; NULL for files) and `source_file` (the file path, or
`kafka://TOPIC/PARTITION/OFFSET`), so everything after reading is the same for both, and every record
keeps where it came from.

    --input kafka://BROKER[,BROKER...]/TOPIC[,TOPIC...]     named topics
    --input 'kafka://BROKER[,BROKER...]/?pattern=REGEX'     every topic whose whole name matches REGEX (Java regex)

`--kafka-option KEY=VALUE` passes an option to Spark's Kafka source unchanged: Kafka client settings
carry the `kafka.` prefix (`kafka.security.protocol=SASL_SSL`), source settings do not
(`maxOffsetsPerTrigger=100000`).  A Kafka input starts at the earliest offset unless told otherwise
and fails, rather than skipping, when offsets it has not read were deleted (`failOnDataLoss`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from uniview.core.errors import ConfigError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

KAFKA_SCHEME = "kafka://"
_BROKER = re.compile(r"[A-Za-z0-9.\-\[\]:]+:[0-9]{1,5}")
#: Kafka's own rule for topic names.
_TOPIC = re.compile(r"[A-Za-z0-9._\-]{1,249}")
#: Options uniview sets itself; a user who passes them would break the source's contract.
_RESERVED_OPTIONS = frozenset(
    {
        "kafka.bootstrap.servers",
        "subscribe",
        "subscribePattern",
        "assign",
        "kafka.group.id",
        "kafka.enable.auto.commit",
        "kafka.key.deserializer",
        "kafka.value.deserializer",
    }
)
DEFAULT_OPTIONS = {"startingOffsets": "earliest", "failOnDataLoss": "true", "includeHeaders": "false"}


def is_kafka(input_location: str) -> bool:
    return input_location.startswith(KAFKA_SCHEME)


@dataclass(frozen=True)
class KafkaInput:
    """A parsed `kafka://` input: the brokers, and either topic names or a topic pattern."""

    bootstrap_servers: str
    topics: tuple[str, ...] = ()
    pattern: str | None = None

    @classmethod
    def parse(cls, location: str) -> KafkaInput:
        parts = urlsplit(location)
        brokers = parts.netloc.split(",") if parts.netloc else []
        if not brokers or not all(_BROKER.fullmatch(b) for b in brokers):
            raise ConfigError(
                f"invalid Kafka input {location!r}: expected kafka://HOST:PORT[,HOST:PORT]/TOPIC[,TOPIC] "
                "or kafka://HOST:PORT/?pattern=REGEX"
            )
        path = parts.path.strip("/")
        has_pattern = parts.query.startswith("pattern=")
        if (parts.query and not has_pattern) or (has_pattern and path) or (not parts.query and not path):
            raise ConfigError(
                f"invalid Kafka input {location!r}: name topics in the path or a pattern in ?pattern=REGEX, not both"
            )
        if has_pattern:  # percent-escapes are decoded; '+' stays a regex '+', never a space
            pattern = unquote(parts.query[len("pattern=") :])
            _check_pattern(pattern)
            return cls(",".join(brokers), pattern=pattern)
        topics = tuple(path.split(","))
        bad = [t for t in topics if not _TOPIC.fullmatch(t) or t in {".", ".."}]
        if bad:
            raise ConfigError(
                f"invalid Kafka topic name(s) {', '.join(map(repr, bad))}: Kafka allows letters, "
                "digits, '.', '_' and '-', at most 249 characters"
            )
        return cls(",".join(brokers), topics=topics)

    def reader_options(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """The options of Spark's Kafka source for this input, the user's `extra` options on top."""
        extra = dict(extra or {})
        clashing = sorted(set(extra) & _RESERVED_OPTIONS)
        if clashing:
            raise ConfigError(f"--kafka-option {', '.join(clashing)} is set by uniview from --input")
        subscription = (
            {"subscribePattern": whole_name(self.pattern)} if self.pattern else {"subscribe": ",".join(self.topics)}
        )
        return {**DEFAULT_OPTIONS, **extra, "kafka.bootstrap.servers": self.bootstrap_servers, **subscription}


def whole_name(pattern: str) -> str:
    """`pattern` matching a topic's whole name only: Spark's Kafka source searches each name for the pattern, so
    `maria` alone would subscribe to `maria.schema-history` too (the connector's schema history, whose records
    would land as DDL with no log position)."""
    return f"^(?:{pattern})$"


def _check_pattern(pattern: str) -> None:
    if not pattern:
        raise ConfigError("the Kafka topic pattern is empty")
    try:
        re.compile(pattern)
    except re.error as error:
        raise ConfigError(f"invalid Kafka topic pattern {pattern!r}: {error}") from None


def kafka_lines(frame: DataFrame) -> DataFrame:
    """Spark's Kafka rows -> the sink's lines (value, key, source_file = kafka://topic/partition/offset)."""
    from pyspark.sql import functions as F

    origin = F.concat(
        F.lit(KAFKA_SCHEME),
        F.col("topic"),
        F.lit("/"),
        F.col("partition").cast("string"),
        F.lit("/"),
        F.col("offset").cast("string"),
    )
    return frame.select(
        F.col("value").cast("string").alias("value"),
        F.col("key").cast("string").alias("key"),
        origin.alias("source_file"),
    )
