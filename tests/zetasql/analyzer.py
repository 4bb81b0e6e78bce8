"""Google's ZetaSQL analyzer (the GoogleSQL front end BigQuery is built on) as a test oracle.

scripts/setup-zetasql.sh installs its local service and Python stubs; the `zetasql` fixture
(tests/zetasql/conftest.py) runs the server for the whole test run.  Use:

    catalog = Catalog()
    catalog.add_table("cdc", "customer_v_1", [("id", parse_type("INT64"))])
    result = zetasql.analyze("SELECT id FROM `cdc`.`customer_v_1`", catalog)
    result.columns      # [("id", Scalar("INT64"))]; result.error is None, or the analyzer's message

Types cross in both directions between uniview's model (uniview.core.types) and ZetaSQL's TypeProto.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from uniview.core.types import Array, BQType, Field, Range, Scalar, Struct

CHECKOUT = Path(__file__).resolve().parents[2]
#: The key a test process of a parallel run reports its statement count under (xdist's worker output).
STATEMENTS_REPORTED = "zetasql_statements"
SETUP_SCRIPT = CHECKOUT / "scripts" / "setup-zetasql.sh"

#: uniview's scalar names -> ZetaSQL TypeKind names (BigQuery's FLOAT64 is ZetaSQL's DOUBLE).
_KINDS = {
    "INT64": "TYPE_INT64",
    "FLOAT64": "TYPE_DOUBLE",
    "NUMERIC": "TYPE_NUMERIC",
    "BIGNUMERIC": "TYPE_BIGNUMERIC",
    "BOOL": "TYPE_BOOL",
    "STRING": "TYPE_STRING",
    "BYTES": "TYPE_BYTES",
    "DATE": "TYPE_DATE",
    "DATETIME": "TYPE_DATETIME",
    "TIME": "TYPE_TIME",
    "TIMESTAMP": "TYPE_TIMESTAMP",
    "INTERVAL": "TYPE_INTERVAL",
    "JSON": "TYPE_JSON",
    "GEOGRAPHY": "TYPE_GEOGRAPHY",
}
_SCALARS = {kind: name for name, kind in _KINDS.items()}


def install() -> Path:
    """Run scripts/setup-zetasql.sh (idempotent); the cache folder, or RuntimeError with its message."""
    result = subprocess.run(
        ["bash", str(SETUP_SCRIPT)],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHON": sys.executable},
    )
    if result.returncode != 0:
        raise RuntimeError(result.stderr.strip().splitlines()[-1] if result.stderr.strip() else "setup failed")
    return Path(result.stdout.strip().splitlines()[-1])


class Stubs:
    """The generated protobuf and gRPC modules of the local service."""

    def __init__(self, python_dir: Path) -> None:
        if str(python_dir) not in sys.path:
            sys.path.insert(0, str(python_dir))
        self.service = importlib.import_module("local_service_pb2")
        self.grpc = importlib.import_module("local_service_pb2_grpc")
        self.type = importlib.import_module("zetasql.public.type_pb2")
        self.catalog = importlib.import_module("zetasql.proto.simple_catalog_pb2")
        self.table = importlib.import_module("zetasql.public.simple_table_pb2")
        self.options = importlib.import_module("zetasql.proto.options_pb2")
        self.public_options = importlib.import_module("zetasql.public.options_pb2")


def type_proto(stubs: Stubs, bq_type: BQType):
    """uniview type -> ZetaSQL TypeProto (type parameters dropped, as views drop them)."""
    proto = stubs.type.TypeProto()
    if isinstance(bq_type, Scalar):
        proto.type_kind = stubs.type.TypeKind.Value(_KINDS[bq_type.name])
    elif isinstance(bq_type, Array):
        proto.type_kind = stubs.type.TYPE_ARRAY
        proto.array_type.element_type.CopyFrom(type_proto(stubs, bq_type.element))
    elif isinstance(bq_type, Struct):
        proto.type_kind = stubs.type.TYPE_STRUCT
        for item in bq_type.fields:
            proto.struct_type.field.add(field_name=item.name, field_type=type_proto(stubs, item.type))
    elif isinstance(bq_type, Range):
        proto.type_kind = stubs.type.TYPE_RANGE
        proto.range_type.element_type.CopyFrom(type_proto(stubs, bq_type.element))
    else:
        raise TypeError(f"no ZetaSQL type for {bq_type!r}")
    return proto


def from_type_proto(stubs: Stubs, proto) -> BQType:
    """ZetaSQL TypeProto -> uniview type."""
    kind = stubs.type.TypeKind.Name(proto.type_kind)
    if kind in _SCALARS:
        return Scalar(_SCALARS[kind])
    if kind == "TYPE_ARRAY":
        return Array(from_type_proto(stubs, proto.array_type.element_type))
    if kind == "TYPE_STRUCT":
        return Struct(tuple(Field(f.field_name, from_type_proto(stubs, f.field_type)) for f in proto.struct_type.field))
    if kind == "TYPE_RANGE":
        return Range(from_type_proto(stubs, proto.range_type.element_type))
    raise TypeError(f"no uniview type for ZetaSQL {kind}")


@dataclass
class Catalog:
    """Datasets (nested catalogs) holding tables with typed columns."""

    datasets: dict[str, dict[str, list[tuple[str, BQType]]]] = field(default_factory=dict)

    def add_table(self, dataset: str, table: str, columns: Sequence[tuple[str, BQType]]) -> None:
        self.datasets.setdefault(dataset, {})[table] = list(columns)


@dataclass(frozen=True)
class Analysis:
    """The analyzer's answer: output columns with types, or its error message."""

    columns: list[tuple[str, BQType]]
    error: str | None

    @property
    def types(self) -> list[BQType]:
        return [t for _, t in self.columns]


class Analyzer:
    """A client of a running local service, with BigQuery's language settings."""

    def __init__(self, stubs: Stubs, channel) -> None:
        self.stubs = stubs
        self.client = stubs.grpc.ZetaSqlLocalServiceStub(channel)
        self.language = self._bigquery_language()
        self.statements = 0

    def _bigquery_language(self):
        """Every released feature on, in BigQuery's product mode (PRODUCT_EXTERNAL).

        - maximum_features: BigQuery ships GoogleSQL's released language features (JSON, RANGE,
          INTERVAL, BIGNUMERIC, SELECT * REPLACE/EXCEPT, SAFE. prefixes, CREATE VIEW options, ...);
          the analyzer then rejects only what GoogleSQL itself rejects.
        - PRODUCT_EXTERNAL: BigQuery's dialect (FLOAT64 not DOUBLE, no PROTO/ENUM-only functions).
        - FEATURE_INTERVAL_TYPE on top: this build leaves INTERVAL out of maximum_features, but BigQuery
          has the INTERVAL type (GA), `CAST(x AS INTERVAL)` included:
          https://cloud.google.com/bigquery/docs/reference/standard-sql/data-types#interval_type
        - Statement kinds: queries, CREATE VIEW and DROP VIEW, the statements uniview emits.
        """
        request = self.stubs.service.LanguageOptionsRequest(maximum_features=True)
        language = self.client.GetLanguageOptions(request)
        language.product_mode = self.stubs.public_options.PRODUCT_EXTERNAL
        interval = self.stubs.public_options.FEATURE_INTERVAL_TYPE
        if interval not in language.enabled_language_features:
            language.enabled_language_features.append(interval)
        kinds = importlib.import_module("zetasql.resolved_ast.resolved_node_kind_pb2")
        del language.supported_statement_kinds[:]
        language.supported_statement_kinds.extend(
            kinds.ResolvedNodeKind.Value(kind)
            for kind in ("RESOLVED_QUERY_STMT", "RESOLVED_CREATE_VIEW_STMT", "RESOLVED_DROP_STMT")
        )
        return language

    def _catalog_proto(self, catalog: Catalog):
        stubs = self.stubs
        root = stubs.catalog.SimpleCatalogProto(name="")
        root.builtin_function_options.language_options.CopyFrom(self.language)
        for dataset, tables in catalog.datasets.items():
            nested = root.catalog.add(name=dataset)
            for table, columns in tables.items():
                proto = nested.table.add(name=table, full_name=f"{dataset}.{table}")
                for name, bq_type in columns:
                    proto.column.add(name=name, type=type_proto(stubs, bq_type))
        return root

    def analyze(self, statement: str, catalog: Catalog) -> Analysis:
        """Analyze one statement (a query, CREATE VIEW or DROP VIEW); its output columns, or the error."""
        import grpc

        try:
            resolved = self.resolve(statement, catalog)
        except grpc.RpcError as error:
            return Analysis([], error.details())
        return Analysis(self._output_columns(resolved), None)

    def resolve(self, statement: str, catalog: Catalog):
        """The analyzer's resolved AST of one statement (an AnyResolvedStatementProto); grpc.RpcError if rejected."""
        stubs = self.stubs
        options = stubs.options.AnalyzerOptionsProto(language_options=self.language, default_timezone="UTC")
        request = stubs.service.AnalyzeRequest(
            options=options, simple_catalog=self._catalog_proto(catalog), sql_statement=statement
        )
        self.statements += 1
        return self.client.Analyze(request).resolved_statement

    def _output_columns(self, statement) -> list[tuple[str, BQType]]:
        node = getattr(statement, statement.WhichOneof("node"))
        while node.DESCRIPTOR.name not in {
            "ResolvedQueryStmtProto",
            "ResolvedCreateViewStmtProto",
            "ResolvedDropStmtProto",
        }:
            node = getattr(node, node.WhichOneof("node"))
        if node.DESCRIPTOR.name == "ResolvedDropStmtProto":
            return []
        columns = (
            node.output_column_list
            if node.DESCRIPTOR.name == "ResolvedQueryStmtProto"
            else node.parent.output_column_list
        )
        return [(c.name, from_type_proto(self.stubs, c.column.type)) for c in columns]
