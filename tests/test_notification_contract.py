"""The sink and the function agree on the notification: whatever the sink can emit, the function accepts
and reads back identically, and whatever the function accepts names a version table the sink could land."""

from __future__ import annotations

import json
import random

import pytest

from uniview.core.errors import UniviewError
from uniview.core.identifiers import validate_dataset, validate_table
from uniview.core.notification import MalformedMessageError, Notification, parse_notification, push_body
from uniview.core.schema import split_version_table
from uniview.sink.versioning import SourceColumn, compute_version, is_valid_version

ALPHABET = "abcxyzABC_019 -é数ü"
VERSION_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789"


def random_name(rng: random.Random, alphabet: str = ALPHABET, longest: int = 24) -> str:
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(1, longest)))


def sink_can_emit(dataset: str, table: str, version: str) -> bool:
    """What the sink checks before it lands a version table and announces it."""
    try:
        validate_dataset(dataset)
        validate_table(table)
        validate_table(f"{table}_v_{version}")
    except UniviewError:
        return False
    return is_valid_version(version) and split_version_table(f"{table}_v_{version}") == (table, version)


def candidates(seed: int, count: int):
    rng = random.Random(seed)
    for _ in range(count):
        dataset = random_name(rng, "abcXYZ_09-", 12)
        table = random_name(rng)
        if rng.random() < 0.5:
            version = compute_version(table, [SourceColumn("id", "int(11)")])  # the sink's own hash
        else:
            version = random_name(rng, VERSION_CHARS + "A-_", rng.choice((8, 16, 20, 70)))
        yield dataset, table, version


@pytest.mark.parametrize("seed", range(5))
def test_the_function_accepts_exactly_what_the_sink_can_emit(seed):
    agreed = 0
    for dataset, table, version in candidates(seed, 400):
        emitted = Notification(dataset, table, version)
        try:
            received = parse_notification(emitted.data())
        except MalformedMessageError:
            received = None
        assert (received is not None) == sink_can_emit(dataset, table, version), (dataset, table, version)
        if received is not None:
            assert received == emitted and received.data() == emitted.data()
            assert received.version_table == f"{table}_v_{version}"
            agreed += 1
    assert agreed > 50, "the corpus must hold many valid notifications"


def test_a_full_refresh_request_round_trips():
    assert parse_notification(Notification("cdc").data()) == Notification("cdc")
    assert json.loads(Notification("cdc").data()) == {"dataset": "cdc", "all": True}


def test_the_push_envelope_carries_the_data_unchanged():
    import base64

    data = Notification("cdc", "customer", "5b6ffe5fb").data()
    body = push_body(data, "m-1")
    assert base64.b64decode(body["message"]["data"]) == data and body["message"]["messageId"] == "m-1"


@pytest.mark.parametrize("version", ["0123456789abcdef0", "A1", "a-1", ""])
def test_one_version_syntax_everywhere(version):
    assert not is_valid_version(version)
    assert split_version_table(f"customer_v_{version}") != ("customer", version)
    with pytest.raises(MalformedMessageError):
        parse_notification(json.dumps({"dataset": "cdc", "table": {"name": "customer", "version": version}}).encode())
