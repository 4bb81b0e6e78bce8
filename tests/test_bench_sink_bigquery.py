"""The pure helpers of bench/bench_sink_bigquery.py: how a measured process's line is read back and how the
runs become the figures the docs quote (Spark's share = wall time minus the seconds in BigQuery requests)."""

from __future__ import annotations

import json

import pytest

from bench.bench_sink_bigquery import RESULT_PREFIX, check_accounts, result_line, summary


def _sink(seconds: float, requests: float, jobs: int = 1, later_requests: int = 8) -> dict:
    later = {"seconds": 2.0, "spark_jobs": 1, "requests": later_requests, "connector_writes": 1}
    return {
        "seconds": seconds,
        "request_seconds": requests,
        "connector_write_seconds": 1.0,
        "spark_jobs": jobs,
        "requests": 40,
        "connector_writes": 1,
        "later": [later],
    }


def test_the_result_is_the_last_prefixed_line_among_spark_noise() -> None:
    stdout = (
        f"some log\n{RESULT_PREFIX}{json.dumps({'seconds': 1})}\nmore\n{RESULT_PREFIX}{json.dumps({'seconds': 2})}\n"
    )
    assert result_line(stdout) == {"seconds": 2}


def test_a_process_that_printed_no_result_is_an_error() -> None:
    with pytest.raises(ValueError, match="no result"):
        result_line("Traceback ...\n")


def test_sparks_share_is_the_median_of_wall_minus_requests_over_the_baselines_median() -> None:
    baselines = [{"seconds": s, "spark_jobs": 1} for s in (10.0, 20.0, 12.0)]
    sinks = [_sink(30.0, 15.0), _sink(20.0, 2.0, jobs=3), _sink(40.0, 30.0, later_requests=12)]
    figures = summary(baselines, sinks)
    # wall minus requests per run: 15, 18, 10 -> 15; the baselines' median: 12
    assert figures["sink_spark_seconds"] == 15.0
    assert figures["spark_share_ratio"] == pytest.approx(15.0 / 12.0, abs=1e-3)
    assert figures["wall_ratio"] == pytest.approx(30.0 / 12.0, abs=1e-3)
    assert (figures["first_batch_spark_jobs"], figures["later_batch_requests"]) == (3, 12)


def test_sparks_share_is_taken_per_run_not_from_the_medians() -> None:
    baselines = [{"seconds": 10.0, "spark_jobs": 1}]
    sinks = [_sink(30.0, 1.0), _sink(31.0, 20.0), _sink(100.0, 21.0)]
    # per run: 29, 11, 79 -> 29; median wall 31 minus median requests 20 would say 11
    figures = summary(baselines, sinks)
    assert figures["sink_spark_seconds"] == 29.0
    assert figures["sink_outside_calls_seconds"] == 28.0  # less each run's 1 s of connector writes too


def test_a_run_that_lost_lines_stops_the_bench() -> None:
    sink = {"read": 100, "written": 98, "quarantined": 1}
    with pytest.raises(RuntimeError, match="does not account"):
        check_accounts({"baseline": [{"rows": 100}], "sink": [sink]}, 100)
    with pytest.raises(RuntimeError, match="baseline wrote 99"):
        check_accounts({"baseline": [{"rows": 99}], "sink": []}, 100)
    check_accounts({"baseline": [{"rows": 100}], "sink": [{**sink, "written": 99}]}, 100)
