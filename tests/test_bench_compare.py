"""`bench/run_all.py --compare`: the headline figures read from docs/benchmarks.md, and a run's figures set
against them (the logic only: no benchmark is run)."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from bench import bench_sink, run_all
from bench.compare import DOCS_PAGE, Recorded, compare, confirm, recorded_figures, verdict

X = "\u00d7"  # the multiplication sign the docs page writes ratios with

PAGE = f"""# Benchmarks

## Headline figures

| figure | goal | recorded | commit | machine |
|---|---|---|---|---|
| `plan-mixed`: plan against the read | ≤ 1.5{X} | **1.20{X}** (2.0 s against 1.7 s) | `0ec7242` | 2 cores, shared |
| `sink-400k`: sink against the job | ≥ 1.0{X} | 1.00{X} | 0ec7242 | 2 cores, shared |

## Next section

| `tenants-1000` | ≤ 1.2{X} | 9.0{X} | 0ec7242 | not this section's |
"""


def test_the_figures_are_read_from_the_headline_section_only() -> None:
    figures = recorded_figures(PAGE)
    assert figures == {
        "plan-mixed": Recorded("plan-mixed", True, 1.5, 1.2, "0ec7242", "2 cores, shared"),
        "sink-400k": Recorded("sink-400k", False, 1.0, 1.0, "0ec7242", "2 cores, shared"),
    }


@pytest.mark.parametrize(
    ("measured", "fell", "said"),
    [(1.33, True, "FELL: 11% worse"), (1.3, False, "held: 8% worse"), (1.0, False, "held: 17% better")],
)
def test_a_ratio_where_lower_is_better_falls_when_it_grows_by_more_than_a_tenth(measured, fell, said) -> None:
    (comparison,) = compare([recorded_figures(PAGE)["plan-mixed"]], lambda key: measured)
    assert comparison.fell is fell
    assert verdict(comparison).startswith(said)


@pytest.mark.parametrize(("measured", "fell"), [(0.89, True), (0.91, False), (1.4, False)])
def test_a_ratio_where_higher_is_better_falls_when_it_shrinks_by_more_than_a_tenth(measured, fell) -> None:
    (comparison,) = compare([recorded_figures(PAGE)["sink-400k"]], lambda key: measured)
    assert comparison.fell is fell
    assert comparison.meets_goal is (measured >= 1.0)


@pytest.mark.parametrize(
    ("again", "fell", "meets_goal", "said"),
    [
        (0.88, True, False, "FELL: 14% worse, then 12% worse in a second run (more than 10%)"),
        (1.01, False, True, "held: 14% worse, then 1% better in a second run"),
    ],
)
def test_a_figure_that_falls_has_fallen_only_when_its_second_run_falls_too(again, fell, meets_goal, said) -> None:
    (first,) = compare([recorded_figures(PAGE)["sink-400k"]], lambda key: 0.86)
    assert first.fell_once and first.fell  # one run alone: fallen
    (confirmed,) = confirm([first], lambda key: again)
    assert confirmed.again == again
    assert confirmed.fell is fell
    assert confirmed.meets_goal is meets_goal  # the second run's figure is the one that counts
    assert verdict(confirmed) == said


def test_a_figure_that_held_is_not_measured_again() -> None:
    asked = []
    (held,) = compare([recorded_figures(PAGE)["sink-400k"]], lambda key: 0.95)
    (confirmed,) = confirm([held], lambda key: asked.append(key) or 0.5)
    assert not asked and confirmed.again is None and not confirmed.fell


def test_a_figure_not_measured_is_said_so_and_has_not_fallen() -> None:
    (comparison,) = compare([recorded_figures(PAGE)["sink-400k"]], lambda key: None)
    assert not comparison.fell
    assert verdict(comparison) == "not measured"


@pytest.mark.parametrize(
    "row",
    [
        f"| `plan-mixed` | ≤ 1.5{X} | 1.20{X} | | 2 cores |",  # no commit
        f"| `plan-mixed` | 1.5 | 1.20{X} | 0ec7242 | 2 cores |",  # no direction
        f"| `plan-mixed` | ≤ 1.5{X} | fast | 0ec7242 | 2 cores |",  # no ratio
    ],
)
def test_a_row_that_cannot_be_read_is_an_error(row: str) -> None:
    with pytest.raises(ValueError, match="plan-mixed"):
        recorded_figures(f"## Headline figures\n\n{row}\n")


def test_the_docs_page_records_exactly_the_figures_run_all_measures() -> None:
    figures = recorded_figures(DOCS_PAGE.read_text(encoding="utf-8"))
    assert set(figures) == set(run_all.HEADLINE)
    assert {run_all.HEADLINE[key][0] for key in figures} <= set(run_all.COMPARE)


def test_the_last_results_are_compared_and_the_fallen_figures_named(tmp_path, monkeypatch) -> None:
    recorded = recorded_figures(DOCS_PAGE.read_text(encoding="utf-8"))
    mixed = recorded["plan-mixed"].value * 1.5  # half as fast again: fell
    conflicting = recorded["plan-all-conflicting"].value  # as recorded: held
    shell = [
        {"family": "mixed", "shell_plan_to_metadata_read_ratio": mixed},
        {"family": "every column changes type", "shell_plan_to_metadata_read_ratio": conflicting},
    ]
    (tmp_path / "plan.json").write_text(json.dumps({"families": [], "shell": shell}))
    monkeypatch.setattr(run_all, "RESULTS", tmp_path)
    comparisons = {c.recorded.key: c for c in run_all.compare_with_docs(["plan"], reuse=True)}
    assert comparisons["plan-mixed"].measured == mixed and comparisons["plan-mixed"].fell
    assert comparisons["plan-all-conflicting"].measured == conflicting and not comparisons["plan-all-conflicting"].fell
    assert comparisons["sink-400k"].measured is None  # its benchmark was not asked for
    output = io.StringIO()
    run_all.print_comparisons(list(comparisons.values()), Console(file=output, width=200))
    assert "fell by more than 10%: plan-mixed" in output.getvalue()


def test_the_sink_figures_are_read_from_the_file_their_comparison_run_writes(tmp_path, monkeypatch) -> None:
    """The comparison runs the sink's benchmark on 400,000 and 1,000,000 records, which writes its results under
    the name of that pair of sizes: each figure is read from its size's run there."""
    runs = [{"records": 400_000, "ratio": 0.9}, {"records": 1_000_000, "ratio": 0.8}]
    (tmp_path / f"{bench_sink.results_name([400_000, 1_000_000])}.json").write_text(json.dumps({"runs": runs}))
    monkeypatch.setattr(run_all, "RESULTS", tmp_path)
    comparisons = {c.recorded.key: c for c in run_all.compare_with_docs(["sink"], reuse=True)}
    assert comparisons["sink-400k"].measured == 0.9
    assert comparisons["sink-1m"].measured == 0.8


def test_a_fresh_comparison_reruns_once_the_benchmarks_of_the_figures_that_fell(monkeypatch) -> None:
    """The plan's mixed figure falls in the first run and holds in the second; the tenants' figures hold, so their
    benchmark runs once; the plan's benchmark runs twice."""
    recorded = recorded_figures(DOCS_PAGE.read_text(encoding="utf-8"))
    mixed, conflicting = recorded["plan-mixed"].value, recorded["plan-all-conflicting"].value

    def plan(mixed_ratio: float) -> dict:
        shell = [
            {"family": "mixed", "shell_plan_to_metadata_read_ratio": mixed_ratio},
            {"family": "every column changes type", "shell_plan_to_metadata_read_ratio": conflicting},
        ]
        return {"families": [], "shell": shell}

    tenants = {
        "runs": [{"databases": 1000, "ratio_to_one": recorded["tenants-1000"].value}],
        "shared_dataset": {"ratio_to_one": recorded["tenants-shared"].value},
    }
    outputs = {"plan": [plan(mixed * 1.5), plan(mixed)], "tenants": [tenants]}
    ran = []

    def run(name, args, results=None):
        ran.append(name)
        assert args == run_all.COMPARE[name]
        return outputs[name].pop(0)

    monkeypatch.setattr(run_all, "run", run)
    comparisons = {c.recorded.key: c for c in run_all.compare_with_docs(["plan", "tenants"], reuse=False)}
    assert ran == ["plan", "tenants", "plan"]
    assert comparisons["plan-mixed"].measured == mixed * 1.5 and comparisons["plan-mixed"].again == mixed
    assert not comparisons["plan-mixed"].fell
    assert comparisons["plan-all-conflicting"].again is None  # it held: read from the first run only
    assert comparisons["tenants-1000"].again is None and not comparisons["tenants-1000"].fell
