"""One local BigQuery API emulator for the whole session; each test works in its own datasets."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1]))

from uniview.local.bigquery_emulator import (
    DEFAULT_PROJECT,
    emulator_environment,
    emulator_venv_path,
    find_emulator_venv,
)


@pytest.fixture(scope="session")
def bq_emulator_host(tmp_path_factory):
    """ "127.0.0.1:PORT" of a running emulator; BIGQUERY_EMULATOR_HOST points at it for the session."""
    if find_emulator_venv() is None:
        pytest.skip(
            f"BigQuery emulator not installed in {emulator_venv_path()}: run scripts/setup-bigquery-emulator.sh"
        )
    with emulator_environment(tmp_path_factory.mktemp("bigquery-emulator")) as host:
        yield host


@pytest.fixture(scope="session")
def bq_client(bq_emulator_host):
    """A plain google-cloud-bigquery client on the emulator, for setting up tables and reading views."""
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import bigquery

    client = bigquery.Client(
        project=DEFAULT_PROJECT,
        credentials=AnonymousCredentials(),
        client_options={"api_endpoint": f"http://{bq_emulator_host}"},
    )
    yield client
    client.close()


@pytest.fixture
def dataset(bq_client):
    """A fresh, empty source dataset name (its `<name>_unified` target does not exist yet)."""
    name = f"cdc_{uuid.uuid4().hex[:10]}"
    bq_client.query(f"CREATE SCHEMA `{name}`").result()
    yield name
    # the emulator answers more slowly as its catalog grows: leave it as the test found it
    for leftover in (name, f"{name}_unified"):
        bq_client.query(f"DROP SCHEMA IF EXISTS `{leftover}` CASCADE").result()


@pytest.fixture
def run_sql(bq_client):
    """Run GoogleSQL statements on the emulator, one job each."""

    def run(*statements: str) -> None:
        for statement in statements:
            bq_client.query(statement).result()

    return run


@pytest.fixture
def warehouse(bq_emulator_host):
    from uniview.warehouse.bigquery import BigQueryWarehouse

    with BigQueryWarehouse(DEFAULT_PROJECT, retry_deadline=30) as opened:
        yield opened


@pytest.fixture
def limits_enforcer():
    from bigquery_limits import LimitEnforcer

    return LimitEnforcer()


@pytest.fixture
def limited_warehouse(bq_emulator_host, limits_enforcer):
    """A BigQuery warehouse on the emulator whose every job is held to BigQuery's limits."""
    from bigquery_limits import enforce_on_client

    from uniview.warehouse.bigquery import BigQueryWarehouse, make_client

    client = enforce_on_client(make_client(DEFAULT_PROJECT), limits_enforcer)
    with BigQueryWarehouse(DEFAULT_PROJECT, retry_deadline=30, client=client) as opened:
        yield opened
