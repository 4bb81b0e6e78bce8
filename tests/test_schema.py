"""Family discovery: which tables are versions of which family; hidden columns left out."""

import pytest

from uniview.core.errors import TypeParseError
from uniview.core.schema import ColumnRecord, discover_families, split_version_table


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ("customer_v_abc", ("customer", "abc")),
        ("customer_v_5b6ffe5fb", ("customer", "5b6ffe5fb")),
        ("customer_v_v_123", ("customer_v", "123")),
        ("customer_address_v_1", ("customer_address", "1")),
        ("customer_v_abc_backup", None),
        ("customer_v_ABC", None),
        ("customer_v_", None),
        ("customer", None),
        ("_v_abc", None),
        ("order items_v_1", ("order items", "1")),
    ],
)
def test_split_version_table(table, expected):
    assert split_version_table(table) == expected


def record(table, column, position, data_type="INT64", created=1.0, hidden=False):
    return ColumnRecord(table, column, position, data_type, created, hidden)


def test_families_are_isolated_and_ordered_by_creation():
    records = [
        record("customer_v_b", "id", 1, created=1.0),
        record("customer_v_a", "id", 1, created=2.0),
        record("customer_v_v_123", "id", 1),
        record("customer_v_abc_backup", "id", 1),
        record("customer_address_v_1", "id", 1),
        record("customers", "id", 1),
    ]
    families = discover_families(records)
    assert sorted(families) == ["customer", "customer_address", "customer_v"]
    assert [v.table_name for v in families["customer"]] == ["customer_v_b", "customer_v_a"]
    assert [v.table_name for v in discover_families(records, ["customer"])["customer"]] == [
        "customer_v_b",
        "customer_v_a",
    ]
    assert list(discover_families(records, ["customer_v"])) == ["customer_v"]


def test_creation_ties_break_by_table_name():
    records = [record("t_v_b", "x", 1, created=5.0), record("t_v_a", "x", 1, created=5.0)]
    assert [v.version for v in discover_families(records)["t"]] == ["a", "b"]


def test_pseudo_and_hidden_columns_are_left_out_and_columns_follow_ordinal_position():
    records = [
        record("t_v_1", "b", 2, "STRING"),
        record("t_v_1", "_PARTITIONTIME", None, "TIMESTAMP"),
        record("t_v_1", "_PARTITIONDATE", 3, "DATE", hidden=True),
        record("t_v_1", "a", 1),
    ]
    (version,) = discover_families(records)["t"]
    assert [(c.name, str(c.type)) for c in version.columns] == [("a", "INT64"), ("b", "STRING")]


def test_bad_type_names_table_and_column():
    with pytest.raises(TypeParseError, match=r"t_v_1\.a"):
        discover_families([record("t_v_1", "a", 1, "INT65")])
