"""How the local tools count Debezium change events on a real broker (uniview.local.kafka): the values in the
table topics `<prefix>.<schema>.<table>` of the given prefixes, tombstones and every other topic left out,
read up to the partitions' ends as they were when counting began."""

from __future__ import annotations

import threading
import time
import uuid

import pytest

from uniview.core.errors import UniviewError
from uniview.local.kafka import (
    count_change_events,
    prefix_messages,
    wait_for_change_events,
    wait_until_prefixes_settle,
)


def test_values_in_the_table_topics_of_the_prefixes_are_counted(kafka_bootstrap, producer):
    prefix, other = f"count{uuid.uuid4().hex[:8]}", f"other{uuid.uuid4().hex[:8]}"
    sent = [
        (f"{prefix}.shop.customer", b'{"op": "c"}'),
        (f"{prefix}.shop.customer", b'{"op": "d"}'),
        (f"{prefix}.shop.customer", None),  # the delete's tombstone
        (f"{prefix}.shop.orders", b'{"op": "c"}'),
        (f"{prefix}.shop2.orders", b'{"op": "u"}'),
        (prefix, b'{"ddl": "ALTER TABLE ..."}'),  # the schema-change topic
        (f"{prefix}.shop", b'{"op": "c"}'),  # not a table topic
        (f"{other}.shop.customer", b'{"op": "c"}'),  # another prefix
    ]
    for topic, value in sent:
        producer.send(topic, key=b"k", value=value)
    producer.flush()
    assert wait_for_change_events(kafka_bootstrap, [prefix], 4, timeout=60) == 4
    assert count_change_events(kafka_bootstrap, [prefix, other]) == 5
    assert count_change_events(kafka_bootstrap, [f"none{uuid.uuid4().hex[:8]}"]) == 0
    with pytest.raises(UniviewError, match="only 4 of 5 change events reached Kafka"):
        wait_for_change_events(kafka_bootstrap, [prefix], 5, timeout=1)


def test_every_message_of_the_prefixes_counts_while_they_settle(kafka_bootstrap, producer):
    """The schema-change topic and tombstones count: a step waits for them before its sinks read on."""
    prefix = f"settle{uuid.uuid4().hex[:8]}"
    assert wait_until_prefixes_settle(kafka_bootstrap, [prefix], quiet=0.5) == 0
    for topic, value in [
        (f"{prefix}.shop.customer", b'{"op": "d"}'),
        (f"{prefix}.shop.customer", None),  # the delete's tombstone
        (prefix, b'{"ddl": "ALTER TABLE ..."}'),  # the schema-change topic
        (f"settle{uuid.uuid4().hex[:8]}.shop.customer", b'{"op": "c"}'),  # another prefix
    ]:
        producer.send(topic, key=b"k", value=value)
    producer.flush()
    assert wait_until_prefixes_settle(kafka_bootstrap, [prefix], quiet=0.5) == 3
    assert prefix_messages(kafka_bootstrap, [prefix]) == 3


def test_a_topic_created_while_the_prefixes_settle_is_waited_for(kafka_bootstrap, producer):
    """A step's first DDL creates the schema-change topic: one that appears during the wait counts, and the wait
    goes on until it too is quiet."""
    prefix = f"late{uuid.uuid4().hex[:8]}"
    producer.send(f"{prefix}.shop.customer", key=b"k", value=b'{"op": "c"}')
    producer.flush()

    def later() -> None:
        time.sleep(0.6)
        producer.send(prefix, key=b"k", value=b'{"ddl": "ALTER TABLE ..."}')
        producer.flush()

    sender = threading.Thread(target=later)
    sender.start()
    try:
        assert wait_until_prefixes_settle(kafka_bootstrap, [prefix], quiet=1.5) == 2
    finally:
        sender.join()
