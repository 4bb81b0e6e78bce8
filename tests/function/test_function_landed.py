"""The `landed` message of the notification contract: written by the sink, read by the function."""

from __future__ import annotations

import json

import pytest

from uniview.core.notification import (
    MAX_DATA_BYTES,
    LandedBatch,
    MalformedMessageError,
    Notification,
    parse_notification,
)

BATCH = LandedBatch("gs://b/ckpt", 7, "2026-01-02T03:04:05.000001+00:00", "2026-01-02T03:04:06+00:00")


def test_a_landed_message_reads_back_as_written_and_as_a_ledger_record():
    (notification,) = Notification.of_batch(["cdc", "acme"], "customer", BATCH)
    assert notification.datasets == ("acme", "cdc") and notification.dataset == "acme"
    assert parse_notification(notification.data()) == notification
    assert parse_notification(notification.data()).landed == notification.landed
    assert Notification.from_record(json.loads(json.dumps(notification.as_record()))) == notification


def test_messages_written_before_landed_existed_read_as_before():
    old = Notification("cdc", "customer", "5b6ffe5fb")
    assert parse_notification(old.data()) == old and parse_notification(old.data()).landed is None
    assert Notification.from_record({"dataset": "cdc", "table": "customer", "version": "5b6ffe5fb"}) == old
    assert parse_notification(b'{"dataset": "cdc", "all": true}').datasets == ("cdc",)


def test_one_message_per_family_per_batch_however_many_tenants_fit():
    tenants = [f"tenant_{number:04d}" for number in range(300)]
    messages = Notification.of_batch(tenants, "customer", BATCH)
    assert len(messages) == 1 and len(messages[0].data()) <= MAX_DATA_BYTES
    many = [f"tenant_with_a_long_name_{number:05d}" for number in range(1000)]
    split = Notification.of_batch(many, "customer", BATCH)  # only past 10 KB: a few messages, never one per tenant
    assert 1 < len(split) <= 8 and all(len(m.data()) <= MAX_DATA_BYTES for m in split)
    assert sorted(d for m in split for d in parse_notification(m.data()).datasets) == sorted(many)


@pytest.mark.parametrize(
    ("landed", "reason"),
    [
        ({"name": "customer", "stream": "s"}, "wrong_type"),  # no batch
        ({"name": "customer", "stream": "s", "batch": -1}, "wrong_type"),
        ({"name": "customer", "stream": "s", "batch": True}, "wrong_type"),
        ({"name": "customer", "stream": "", "batch": 1}, "wrong_type"),
        ({"name": "customer", "stream": "s", "batch": 1, "from": "yesterday"}, "wrong_type"),
        ({"name": "customer", "stream": "s", "batch": 1, "from": "2026-01-02T03:04:05"}, "wrong_type"),
        ({"name": "customer", "stream": "s", "batch": 1, "datasets": []}, "wrong_type"),
        ({"name": "customer", "stream": "s", "batch": 1, "datasets": ["bad-name"]}, "invalid_name"),
        ({"name": "cust`omer", "stream": "s", "batch": 1}, "invalid_name"),
    ],
)
def test_malformed_landed_messages_are_rejected_with_a_reason(landed, reason):
    with pytest.raises(MalformedMessageError) as raised:
        parse_notification(json.dumps({"dataset": "cdc", "landed": landed}).encode())
    assert raised.value.reason == reason


def test_table_and_landed_together_are_ambiguous():
    body = {
        "dataset": "cdc",
        "table": {"name": "c", "version": "a1"},
        "landed": {"name": "c", "stream": "s", "batch": 1},
    }
    with pytest.raises(MalformedMessageError) as raised:
        parse_notification(json.dumps(body).encode())
    assert raised.value.reason == "ambiguous"
