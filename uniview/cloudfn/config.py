"""The Cloud Function's configuration: environment variables, validated once into FunctionConfig.

UNIVIEW_WAREHOUSE (required)        bigquery://PROJECT, or duckdb:///path for local runs
UNIVIEW_TARGET_DATASET              template for the views' dataset; default "{dataset}_unified"
UNIVIEW_POLICY                      uniview | widen; default uniview
UNIVIEW_MAX_VIEW_CHARS              split views beyond this many characters; default 250000
UNIVIEW_DATETIME_TIMEZONE           IANA zone DATETIME is read in when it becomes TIMESTAMP
UNIVIEW_SOURCE_COLUMN               add a column naming each row's version table
UNIVIEW_CURRENT                     <table>_current: off | view | table ("true" = view, "false" = off); default off
UNIVIEW_RENAMES                     declared column renames: a renames document (JSON, uniview.core.renames)
UNIVIEW_MAX_EVENT_AGE_SECONDS       drop events older than this; default 86400
UNIVIEW_MAX_STALENESS               with UNIVIEW_CURRENT=table: maintain a family at most once per this long
                                    (e.g. 15m), coalescing the `landed` announcements between; default 0s (off)
UNIVIEW_CONSOLIDATE_IDLE_FOR        consolidate on dataset-wide (scheduled) events: versions idle this long
UNIVIEW_CONSOLIDATE_MAX_VERSIONS    fold until a family keeps at most this many tables; default 500
UNIVIEW_CONSOLIDATE_SETTLE          BigQuery: how long a moved table stays in the view; default 1h
UNIVIEW_CONSOLIDATE_CONTROL_DATASET BigQuery: the sink's control dataset (the registry); default: the event's
UNIVIEW_CONTROL_DATASET             BigQuery: where <table>_current reads the sink's batch ledger; default: the event's

An empty variable counts as unset.  Every problem is reported at once in one ConfigError.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from uniview.core.errors import ConfigError, UniviewError
from uniview.core.identifiers import validate_dataset

ENV_VARS: tuple[str, ...] = (
    "UNIVIEW_WAREHOUSE",
    "UNIVIEW_TARGET_DATASET",
    "UNIVIEW_POLICY",
    "UNIVIEW_MAX_VIEW_CHARS",
    "UNIVIEW_DATETIME_TIMEZONE",
    "UNIVIEW_SOURCE_COLUMN",
    "UNIVIEW_CURRENT",
    "UNIVIEW_RENAMES",
    "UNIVIEW_MAX_EVENT_AGE_SECONDS",
    "UNIVIEW_MAX_STALENESS",
    "UNIVIEW_CONSOLIDATE_IDLE_FOR",
    "UNIVIEW_CONSOLIDATE_MAX_VERSIONS",
    "UNIVIEW_CONSOLIDATE_SETTLE",
    "UNIVIEW_CONSOLIDATE_CONTROL_DATASET",
    "UNIVIEW_CONTROL_DATASET",
)
DEFAULT_TARGET_DATASET = "{dataset}_unified"
DEFAULT_MAX_EVENT_AGE_SECONDS = 86_400
_PLACEHOLDER = "{dataset}"


@dataclass(frozen=True)
class FunctionConfig:
    """Validated settings; `options` is a uniview.planning.plan.GeneratorOptions."""

    warehouse_url: str
    target_dataset_template: str
    options: Any
    max_event_age_seconds: int
    #: Scheduled consolidation (UNIVIEW_CONSOLIDATE_*): `consolidation` is None when it is off.
    consolidation: ScheduledConsolidation | None = None
    #: UNIVIEW_MAX_STALENESS: a `landed` announcement younger than this is answered with a retry (docs/billing.md).
    max_staleness: timedelta = timedelta(0)

    def target_dataset(self, dataset: str) -> str:
        """The views' dataset for source `dataset`; IdentifierError if the result is not a dataset name."""
        return validate_dataset(self.target_dataset_template.replace(_PLACEHOLDER, dataset), "target dataset")


def load_config(environ: Mapping[str, str]) -> FunctionConfig:
    """Read and validate the UNIVIEW_* variables of `environ`; ConfigError listing every problem."""
    values = {name: (environ.get(name) or "").strip() for name in ENV_VARS}
    problems: list[str] = []
    warehouse = _checked(problems, _warehouse_url, values["UNIVIEW_WAREHOUSE"])
    template = _checked(problems, _target_template, values["UNIVIEW_TARGET_DATASET"] or DEFAULT_TARGET_DATASET)
    max_age = _checked(
        problems,
        _positive_int,
        "UNIVIEW_MAX_EVENT_AGE_SECONDS",
        values["UNIVIEW_MAX_EVENT_AGE_SECONDS"] or str(DEFAULT_MAX_EVENT_AGE_SECONDS),
    )
    renames = _checked(problems, _renames, values["UNIVIEW_RENAMES"])
    options = _checked(problems, _generator_options, values, renames or ())
    consolidation = _checked(problems, _consolidation, values)
    if values["UNIVIEW_CONTROL_DATASET"]:
        _checked(problems, validate_dataset, values["UNIVIEW_CONTROL_DATASET"], "UNIVIEW_CONTROL_DATASET")
    staleness = _checked(problems, _max_staleness, values["UNIVIEW_MAX_STALENESS"], max_age)
    if problems:
        raise ConfigError("invalid Cloud Function configuration: " + "; ".join(problems))
    return FunctionConfig(warehouse, template, options, max_age, consolidation, staleness)


def _max_staleness(text: str, max_event_age_seconds: int | None) -> timedelta:
    """UNIVIEW_MAX_STALENESS: a duration well under the event age limit, so a deferred announcement is never
    dropped as expired before it is applied."""
    staleness = _duration("UNIVIEW_MAX_STALENESS", text) or timedelta(0)
    if max_event_age_seconds is not None and staleness.total_seconds() * 2 > max_event_age_seconds:
        raise ConfigError(
            f"UNIVIEW_MAX_STALENESS {text!r} must be at most half of UNIVIEW_MAX_EVENT_AGE_SECONDS "
            f"({max_event_age_seconds}s): a deferred announcement would expire before it is applied"
        )
    return staleness


_cached: FunctionConfig | None = None
_cache_lock = threading.Lock()


def get_config() -> FunctionConfig:
    """The process's configuration, read from os.environ on first use and cached."""
    global _cached
    with _cache_lock:
        if _cached is None:
            _cached = load_config(os.environ)
        return _cached


def reset_config_cache() -> None:
    """Forget the cached configuration (the next get_config() reads os.environ again)."""
    global _cached
    with _cache_lock:
        _cached = None


def _checked(problems: list[str], check: Any, *args: Any) -> Any:
    try:
        return check(*args)
    except UniviewError as error:
        problems.append(str(error))
        return None


def _warehouse_url(url: str) -> str:
    from uniview.warehouse.url import WarehouseURL

    return str(WarehouseURL.parse(url, "UNIVIEW_WAREHOUSE"))


def _target_template(template: str) -> str:
    if re.search(r"[{}]", template.replace(_PLACEHOLDER, "")):
        raise ConfigError(f"UNIVIEW_TARGET_DATASET {template!r}: the only placeholder allowed is {_PLACEHOLDER}")
    try:
        validate_dataset(template.replace(_PLACEHOLDER, "cdc"), "target dataset")
    except UniviewError as error:
        raise ConfigError(f"UNIVIEW_TARGET_DATASET {template!r}: {error}") from None
    return template


def _positive_int(name: str, text: str) -> int:
    if not re.fullmatch(r"[0-9]{1,12}", text) or int(text) <= 0:
        raise ConfigError(f"{name} must be a positive whole number, not {text!r}")
    return int(text)


@dataclass(frozen=True)
class ScheduledConsolidation:
    """What the function folds on a dataset-wide event (uniview.ops.consolidate.ConsolidationRequest)."""

    idle_for: timedelta
    max_versions: int
    settle: timedelta
    control_dataset: str | None


def _consolidation(values: Mapping[str, str]) -> ScheduledConsolidation | None:
    """The scheduled consolidation the UNIVIEW_CONSOLIDATE_* variables ask for; None when it is off."""
    from uniview.planning.consolidation import DEFAULT_MAX_VERSIONS, check_max_versions

    problems: list[str] = []
    max_text = values["UNIVIEW_CONSOLIDATE_MAX_VERSIONS"]
    max_versions = (
        _checked(problems, _positive_int, "UNIVIEW_CONSOLIDATE_MAX_VERSIONS", max_text)
        if max_text
        else DEFAULT_MAX_VERSIONS
    )
    if max_versions is not None:
        _checked(problems, check_max_versions, max_versions, "UNIVIEW_CONSOLIDATE_MAX_VERSIONS")
    idle_for = _checked(problems, _duration, "UNIVIEW_CONSOLIDATE_IDLE_FOR", values["UNIVIEW_CONSOLIDATE_IDLE_FOR"])
    settle = _checked(problems, _duration, "UNIVIEW_CONSOLIDATE_SETTLE", values["UNIVIEW_CONSOLIDATE_SETTLE"] or "1h")
    control = values["UNIVIEW_CONSOLIDATE_CONTROL_DATASET"] or None
    if control is not None:
        _checked(problems, validate_dataset, control, "UNIVIEW_CONSOLIDATE_CONTROL_DATASET")
    if problems:
        raise ConfigError("; ".join(problems))
    return (
        ScheduledConsolidation(idle_for, max_versions, settle, control)
        if values["UNIVIEW_CONSOLIDATE_IDLE_FOR"]
        else None
    )


def _duration(name: str, text: str) -> timedelta | None:
    from uniview.planning.consolidation import parse_duration

    if not text:
        return None
    try:
        return parse_duration(text)
    except ConfigError as error:
        raise ConfigError(f"{name}: {error}") from None


def _renames(text: str) -> tuple:
    """UNIVIEW_RENAMES: a renames document (uniview.core.renames); unset: none."""
    from uniview.core.renames import parse_renames

    return parse_renames(text, "UNIVIEW_RENAMES") if text else ()


def _generator_options(values: Mapping[str, str], renames: tuple) -> Any:
    """GeneratorOptions from the variables, built once: it validates every setting and names each bad
    one by its variable."""
    from uniview.planning.plan import DEFAULT_MAX_VIEW_CHARS, DEFAULT_POLICY, GeneratorOptions

    text = values["UNIVIEW_MAX_VIEW_CHARS"] or str(DEFAULT_MAX_VIEW_CHARS)
    # Any: a text that is not a number reaches GeneratorOptions as it is, for its check to name it.
    max_view_chars: Any = int(text) if re.fullmatch(r"[0-9]{1,12}", text) else text
    return GeneratorOptions(
        policy=values["UNIVIEW_POLICY"] or DEFAULT_POLICY,
        max_view_chars=max_view_chars,
        datetime_timezone=values["UNIVIEW_DATETIME_TIMEZONE"] or None,
        source_column=values["UNIVIEW_SOURCE_COLUMN"] or None,
        current=values["UNIVIEW_CURRENT"] or "off",  # GeneratorOptions reads true/false too, and names a bad value
        renames=renames,
        caller="function",
    )
