"""The sink on BigQuery (real connector, emulator) beside consolidation: rows of a folded version land
under its successor, also when the fold commits between the batch's registry read and its promotion
(the promotion transaction's guard fails it whole, and the part runs again redirected)."""

from __future__ import annotations

import uuid
from collections import Counter
from datetime import timedelta

from sink_support import record, write_ndjson

from uniview.ops.consolidate import ConsolidationRequest, consolidate
from uniview.ops.refresh import RefreshRequest, refresh
from uniview.sink import landing_bigquery
from uniview.sink.job import SinkOptions, run
from uniview.warehouse.bigquery import BigQueryWarehouse

SCHEMAS = [[("id", "int(11)"), ("name", "varchar(20)"), (f"c{k}", "int(11)")] for k in range(3)]


def land(spark, options, directory, dataset: str, ids: range, schemas=range(3)):
    rows = [record("customer", {"id": n, "name": f"n{n}", f"c{k}": k}, SCHEMAS[k]) for n in ids for k in schemas]
    write_ndjson(directory / "a.json", rows)
    return run(
        spark,
        SinkOptions(
            input=str(directory), warehouse="bigquery://test-project", dataset=dataset, bigquery_options=options
        ),
    )


def view_ids(client, dataset: str) -> Counter:
    return Counter(
        (row[0], row[1]) for row in client.query(f"SELECT id, name FROM `{dataset}_unified.customer_unified`").result()
    )


def test_rows_of_folded_versions_land_under_successors_even_when_the_fold_races_the_batch(
    spark, connector_stack, tmp_path, monkeypatch
):
    client, options = connector_stack
    dataset = f"folds_{uuid.uuid4().hex[:8]}"
    land(spark, options, tmp_path / "a", dataset, range(0, 2))
    with BigQueryWarehouse("test-project") as warehouse:
        (folded,) = consolidate(
            warehouse, ConsolidationRequest(dataset, ("customer",), timedelta(0), 2, apply=True, settle=timedelta(0))
        )
    assert folded.applied and len(folded.retired) == 2 and folded.moved_rows == 4
    retired = sorted(folded.retired)

    later = land(spark, options, tmp_path / "b", dataset, range(2, 4))
    assert later.counts.total_written == 6
    assert not set(later.counts.written) & {f"{dataset}.{table}" for table in retired}
    successors = sorted(f"{n.table}_v_{n.version}" for n in later.sent or later.counts.created)

    stale = {"first": True}
    original = landing_bigquery._redirect

    def read_before_the_fold(batch, folded):  # the registry as it was before the fold committed
        if stale.pop("first", False):
            return batch
        return original(batch, folded)

    monkeypatch.setattr(landing_bigquery, "_redirect", read_before_the_fold)
    raced = land(spark, options, tmp_path / "c", dataset, range(4, 6), schemas=range(2))
    monkeypatch.undo()
    assert raced.counts.total_written == 4 and not stale  # the stale read happened, and the guard caught it

    for table in retired:
        assert next(iter(client.query(f"SELECT COUNT(*) FROM `{dataset}.{table}`").result()))[0] == 0
    with BigQueryWarehouse("test-project") as warehouse:
        (outcome,) = refresh(warehouse, RefreshRequest(dataset=dataset, tables=("customer",)))
    assert not outcome.failed and not set(retired) & set(outcome.versions)
    expected = Counter({(n, f"n{n}"): 3 for n in range(4)}) + Counter({(n, f"n{n}"): 2 for n in range(4, 6)})
    assert view_ids(client, dataset) == expected  # every row once (one row per id and schema)
    assert len(successors) == 2 and set(successors) <= set(outcome.versions)
