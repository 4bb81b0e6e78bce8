"""No lost versions under concurrency, on the BigQuery emulator: 12 versions of one family appear
while 36 notifications (duplicates, random order) are handled by 8 concurrent workers."""

from __future__ import annotations

import queue
import random
import threading
import time

import pytest

from uniview.cloudfn.config import load_config
from uniview.cloudfn.events import cloud_event, notification
from uniview.cloudfn.handler import handle_cloud_event
from uniview.local.bigquery_emulator import (
    DEFAULT_PROJECT,
    emulator_environment,
    emulator_venv_path,
    find_emulator_venv,
)
from uniview.warehouse.bigquery import BigQueryWarehouse

pytestmark = pytest.mark.emulator

VERSIONS = 12
COPIES = 3
WORKERS = 8
MAX_DELIVERIES = 15


@pytest.fixture(scope="module")
def fresh_emulator(tmp_path_factory):
    """An emulator of its own: the emulator slows down as its catalog grows, and this test writes a lot."""
    if find_emulator_venv() is None:
        pytest.skip(
            f"BigQuery emulator not installed in {emulator_venv_path()}: run scripts/setup-bigquery-emulator.sh"
        )
    with emulator_environment(tmp_path_factory.mktemp("bigquery-emulator-concurrency")) as host:
        yield host


class Deliveries:
    """Pub/Sub's at-least-once delivery, in miniature: an event that raises is delivered again."""

    def __init__(self):
        self.queue: queue.Queue = queue.Queue()
        self.acked: list[str] = []
        self.failures: list[str] = []
        self.attempts: dict[str, int] = {}
        self.lock = threading.Lock()

    def worker(self, config, warehouse):
        while True:
            item = self.queue.get()
            if item is None:
                return
            event_id, event = item
            with self.lock:
                self.attempts[event_id] = self.attempts.get(event_id, 0) + 1
                attempt = self.attempts[event_id]
            try:
                handle_cloud_event(event, config=config, warehouse=warehouse)
            except Exception as error:  # redelivered, as Pub/Sub does when the function raises
                with self.lock:
                    self.failures.append(f"{event_id}: {type(error).__name__}: {error}")
                if attempt < MAX_DELIVERIES:
                    time.sleep(0.2 * attempt)
                    self.queue.put(item)
                continue
            with self.lock:
                self.acked.append(event_id)


def create_version(client, dataset, index):
    """events_v_vNN with one row, id NN, and a column of its own."""
    client.query(
        f"CREATE TABLE `{dataset}`.events_v_v{index:02d} AS "
        f"SELECT {index} AS id, CAST(NULL AS STRING) AS payload_{index:02d}"
    ).result()


def test_twelve_versions_thirty_six_events_eight_workers_lose_nothing(fresh_emulator):
    config = load_config({"UNIVIEW_WAREHOUSE": f"bigquery://{DEFAULT_PROJECT}"})
    rng = random.Random(20)
    deliveries = Deliveries()
    with BigQueryWarehouse(DEFAULT_PROJECT, retry_deadline=60) as warehouse:
        client = warehouse.client
        client.query("CREATE SCHEMA conc").result()
        workers = [threading.Thread(target=deliveries.worker, args=(config, warehouse)) for _ in range(WORKERS)]
        for thread in workers:
            thread.start()
        pending = []
        for index in range(VERSIONS):
            create_version(client, "conc", index)  # versions appear while refreshes run
            pending += [
                (
                    f"v{index:02d}-{copy}",
                    cloud_event(notification("conc", "events", f"v{index:02d}"), f"v{index:02d}-{copy}"),
                )
                for copy in range(COPIES)
            ]
            rng.shuffle(pending)
            release, pending = pending[: len(pending) // 2], pending[len(pending) // 2 :]
            for item in release:
                deliveries.queue.put(item)
        for item in pending:
            deliveries.queue.put(item)
        deadline = time.monotonic() + 240
        while len(deliveries.acked) < VERSIONS * COPIES and time.monotonic() < deadline:
            time.sleep(0.2)
        for _ in workers:
            deliveries.queue.put(None)
        for thread in workers:
            thread.join(timeout=60)
        rows = client.query("SELECT id FROM conc_unified.events_unified").result()
        ids = sorted(row["id"] for row in rows)
    assert sorted(deliveries.acked) == sorted(f"v{i:02d}-{c}" for i in range(VERSIONS) for c in range(COPIES)), (
        deliveries.failures
    )
    assert ids == list(range(VERSIONS))
