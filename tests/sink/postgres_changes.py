"""PostgreSQL changes as Debezium's connector sends them (JSON converter with schemas, the primary key in the message
key), landed through the sink into DuckDB, and `<table>_current` read back as a view and as a table.

A change lists its columns in the table's order, which is the order the connector's schema gives them: a column
dropped and added again comes last."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "current"))
from sink_support import query
from test_ddl_renames import kcat

from uniview.cli.main import main
from uniview.warehouse.url import duckdb_url

#: Debezium's type of each column (int32 unless listed: string).
INT = "int32"
MODES = ("view", "table")


def envelope_schema(name: str, fields: list[dict]) -> dict:
    """A Debezium event's schema: `before` and `after`, structs of the row's `fields` named `name`, `op`, `ts_ms`."""
    value_schema = {"type": "struct", "optional": True, "name": name, "fields": fields}
    return {
        "type": "struct",
        "fields": [
            {**value_schema, "field": "before"},
            {**value_schema, "field": "after"},
            {"field": "op", "type": "string"},
            {"field": "ts_ms", "type": "int64", "optional": True},
        ],
    }


def change(
    lsn: int,
    op: str,
    row: dict[str, object],
    ints: Sequence[str] = ("id",),
    defaults: dict[str, object] | None = None,
    database: str = "shop1",
) -> tuple[str, dict]:
    """(the event, its message key) of one change of `public.customer`: `row` in the table's column order."""
    fields = []
    for name in row:
        field: dict[str, object] = {"field": name, "type": INT if name in ints else "string", "optional": name != "id"}
        if defaults and name in defaults:
            field["default"] = defaults[name]
        fields.append(field)
    schema = envelope_schema(f"{database}.public.customer.Value", fields)
    source = {
        "version": "3.0.8.Final",
        "connector": "postgresql",
        "name": database,
        "db": database,
        "schema": "public",
        "table": "customer",
        "snapshot": "false",
        "lsn": lsn,
        "ts_ms": 1_795_481_268_000 + lsn,
    }
    payload = {"before": None, "after": row, "op": op, "source": source, "ts_ms": 1_795_481_269_000 + lsn}
    key = {"schema": {"type": "struct", "fields": [{"field": "id", "type": INT}]}, "payload": {"id": row["id"]}}
    return json.dumps({"schema": schema, "payload": payload}), key


def land(spark, directory: Path, changes: Sequence[tuple[str, dict | None]]) -> Path:
    """Land `changes` ((event, key) in log order) through the sink into `directory`/w.duckdb, dataset cdc."""
    from uniview.sink.job import SinkOptions, run

    lines = [kcat(offset, event, key) for offset, (event, key) in enumerate(changes)]
    (directory / "in").mkdir(parents=True)
    (directory / "in" / "events.json").write_text("\n".join(lines) + "\n")
    warehouse = directory / "w.duckdb"
    options = SinkOptions(
        input=str(directory / "in"), warehouse=duckdb_url(warehouse), dataset="cdc", format="debezium"
    )
    result = run(spark, options)
    assert (result.counts.total_written, sum(result.counts.quarantined.values())) == (len(changes), 0)
    return warehouse


def refresh(warehouse: Path, mode: str, *extra: str) -> None:
    """`uniview refresh --all --current <mode>` into dataset cdc_<mode>."""
    arguments = ["refresh", "--warehouse", duckdb_url(warehouse), "--dataset", "cdc", "--all"]
    arguments += ["--target-dataset", f"cdc_{mode}", "--current", mode, *extra]
    result = CliRunner().invoke(main, arguments)
    assert result.exit_code == 0, result.output


def current(warehouse: Path, mode: str, columns: str, family: str = "customer") -> list[tuple]:
    """The rows of `<family>_current` (refreshed in `mode`): `columns` as text, sorted."""
    selected = ", ".join(f"CAST({c.strip()} AS VARCHAR)" for c in columns.split(","))
    return query(warehouse, f"SELECT {selected} FROM cdc_{mode}.{family}_current ORDER BY ALL")
