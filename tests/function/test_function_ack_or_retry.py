"""The function's ack-or-retry table, row by row: each exception class maps to one decision."""

from __future__ import annotations

import pytest

from uniview.cloudfn.handler import ACK_OR_RETRY, verdict
from uniview.core.errors import (
    ConfigError,
    IdentifierError,
    NotFoundError,
    PlanError,
    TransientWarehouseError,
    TypeParseError,
    UniviewError,
    WarehouseError,
)
from uniview.core.limits import LimitError
from uniview.core.notification import MalformedMessageError


@pytest.mark.parametrize(
    "error, ack, status",
    [
        (MalformedMessageError("not_json", "x"), True, "rejected"),
        (IdentifierError("bad name"), True, "rejected"),
        (PlanError("no view"), True, "unbuildable"),
        (LimitError("over a limit"), True, "unbuildable"),
        (TypeParseError("bad type"), True, "unbuildable"),
        (NotFoundError("not yet"), False, "retry"),
        (TransientWarehouseError("503"), False, "retry"),
        (ConfigError("bad env"), False, "retry"),
        (WarehouseError("403"), False, "retry"),
        (UniviewError("other"), False, "retry"),
        (RuntimeError("bug"), False, "retry"),
    ],
)
def test_each_exception_has_one_decision(error, ack, status):
    assert (verdict(error).ack, verdict(error).status) == (ack, status)


def test_every_row_is_reachable():
    """A row shadowed by an earlier, more general one would never decide anything."""
    for index, (kind, _) in enumerate(ACK_OR_RETRY):
        assert not any(issubclass(kind, earlier) for earlier, _ in ACK_OR_RETRY[:index]), kind
