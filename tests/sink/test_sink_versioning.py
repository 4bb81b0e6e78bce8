"""The version hash spec against fixed vectors.

The expected digests were computed outside Python, from the canonical text written out by hand:
printf '%s' '<canonical>' | sha256sum | cut -c1-12
"""

import pytest

from uniview.sink.versioning import (
    SourceColumn,
    canonical_schema,
    compute_version,
    declaration_digest,
    is_valid_version,
    normalize_source_type,
)

CUSTOMER = [SourceColumn("id", "int(11)"), SourceColumn("first_name", "varchar(255)")]

VECTORS = [
    (
        "customer",
        CUSTOMER,
        '{"table":"customer","columns":[["id","int(11)"],["first_name","varchar(255)"]]}',
        "0137ca30d60c",
    ),
    (
        "customer",
        [SourceColumn("id", "INT(11)"), SourceColumn("first_name", " VARCHAR ( 100 )\t")],
        '{"table":"customer","columns":[["id","int(11)"],["first_name","varchar(100)"]]}',
        "9ebbf946f217",
    ),
    (
        "orders",
        [
            SourceColumn("id", "bigint(20) unsigned"),
            SourceColumn("amount", "DECIMAL(10, 2)"),
            SourceColumn("status", "enum('new', 'paid')"),
        ],
        '{"table":"orders","columns":[["id","bigint(20)unsigned"],["amount","decimal(10,2)"],'
        "[\"status\",\"enum('new','paid')\"]]}",
        "f0112b17b35d",
    ),
    (
        "clientes",
        [SourceColumn("número", "int(11)"), SourceColumn("名前", "varchar(50)"), SourceColumn('say "hi"', "TEXT")],
        '{"table":"clientes","columns":[["número","int(11)"],["名前","varchar(50)"],["say \\"hi\\"","text"]]}',
        "9f626c02f28d",
    ),
]


@pytest.mark.parametrize(("table", "columns", "canonical", "version"), VECTORS)
def test_fixed_vectors(table, columns, canonical, version):
    assert canonical_schema(table, columns) == canonical
    assert compute_version(table, columns) == version


def test_a_different_length_is_a_different_version():
    wider = [SourceColumn("id", "int(11)"), SourceColumn("first_name", "varchar(100)")]
    assert compute_version("customer", CUSTOMER) != compute_version("customer", wider)


def test_column_order_and_table_name_are_part_of_the_version():
    assert compute_version("customer", CUSTOMER) != compute_version("customer", CUSTOMER[::-1])
    assert compute_version("customer", CUSTOMER) != compute_version("customers", CUSTOMER)


@pytest.mark.parametrize(
    ("declared", "normalized"),
    [
        ("INT(10) Unsigned", "int(10)unsigned"),
        ("double\u00a0precision", "doubleprecision"),
        ("json", "json"),
    ],
)
def test_normalization_lowercases_and_removes_all_whitespace(declared, normalized):
    assert normalize_source_type(declared) == normalized


@pytest.mark.parametrize(
    ("version", "valid"),
    [
        ("5b6ffe5fb", True),
        ("a", True),
        ("0123456789abcdef", True),
        ("0123456789abcdef0", False),
        ("5B6FFE5FB", False),
        ("v-1", False),
        ("", False),
        (None, False),
        (12, False),
    ],
)
def test_declared_versions(version, valid):
    assert is_valid_version(version) is valid


def test_a_key_enters_the_canonical_text_only_when_given():
    assert canonical_schema("t", [SourceColumn("id", "INT"), SourceColumn("code", "varchar(9)")], ["code"]) == (
        '{"table":"t","columns":[["id","int"],["code","varchar(9)"]],"primary_key":["code"]}'
    )
    assert compute_version("t", CUSTOMER, ["id"]) != compute_version("t", CUSTOMER)


def test_declarations_enter_the_canonical_text_only_when_asked_and_their_digest_tells_them_apart():
    declared = [
        SourceColumn("id", "int", nullable=False),
        SourceColumn("c", "int", '"5"'),
        SourceColumn("u", "uuid", "volatile"),
    ]
    canonical = (
        '{"table":"t","columns":[["id","int"],["c","int"],["u","uuid"]],'
        '"declared":[["id",null,false,false],["c","5",false,true],["u",null,true,true]]}'
    )
    assert canonical_schema("t", declared, declared=True) == canonical
    # printf '%s' '<canonical>' | sha256sum | cut -c1-12
    assert compute_version("t", declared, declared=True) == "dad53463b09d"
    assert compute_version("t", declared) == compute_version(
        "t", [SourceColumn("id", "int"), SourceColumn("c", "int"), SourceColumn("u", "uuid")]
    )
    digests = {
        declaration_digest(columns)
        for columns in (
            declared,
            [
                SourceColumn("id", "int", nullable=False),
                SourceColumn("c", "int"),
                SourceColumn("u", "uuid", "volatile"),
            ],
            [SourceColumn("id", "int"), SourceColumn("c", "int", '"5"'), SourceColumn("u", "uuid", "volatile")],
            [
                SourceColumn("id", "int", nullable=False),
                SourceColumn("c", "int", "5"),
                SourceColumn("u", "uuid", "volatile"),
            ],
        )
    }
    assert len(digests) == 4
