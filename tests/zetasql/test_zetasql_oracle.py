"""The analyzer as an oracle: it rejects what BigQuery rejects, with BigQuery's wording, and where it
disagrees with BigQuery's documentation the documentation wins (recorded here)."""

from __future__ import annotations

from analyzer import Catalog

from uniview.core.types import parse_type


def catalog():
    c = Catalog()
    c.add_table("cdc", "t", [("id", parse_type("INT64")), ("s", parse_type("STRUCT<a INT64>"))])
    c.add_table("cdc", "u", [("id", parse_type("STRING"))])
    return c


def test_a_struct_cast_to_string_is_rejected(zetasql):
    result = zetasql.analyze("SELECT CAST(s AS STRING) AS s FROM `cdc`.`t`", catalog())
    assert result.error == "Invalid cast from STRUCT<a INT64> to STRING"


def test_a_union_all_type_mismatch_is_rejected(zetasql):
    result = zetasql.analyze("SELECT id FROM `cdc`.`t` UNION ALL SELECT id FROM `cdc`.`u`", catalog())
    assert result.error == "Column 1 in UNION ALL has incompatible types: INT64, STRING"


def test_a_function_bigquery_does_not_have_is_rejected(zetasql):
    result = zetasql.analyze("SELECT TRY_CAST(id AS STRING) AS x FROM `cdc`.`t`", catalog())
    assert result.error is not None and "TRY_CAST" in result.error


def test_interval_type_is_enabled_as_in_bigquery(zetasql):
    """maximum_features of this analyzer build leaves the INTERVAL type off; BigQuery has it (GA) and
    documents CAST to INTERVAL, so the fixture turns it on:
    https://cloud.google.com/bigquery/docs/reference/standard-sql/data-types#interval_type
    https://cloud.google.com/bigquery/docs/reference/standard-sql/conversion_functions#cast"""
    features = zetasql.language.enabled_language_features
    assert zetasql.stubs.public_options.FEATURE_INTERVAL_TYPE in features
    result = zetasql.analyze("SELECT CAST(NULL AS INTERVAL) AS i, CAST('1-2 3 4:5:6' AS INTERVAL) AS j", Catalog())
    assert result.error is None and [str(t) for t in result.types] == ["INTERVAL", "INTERVAL"]
