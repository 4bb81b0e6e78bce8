"""The headline figures docs/benchmarks.md records, and a fresh run's figures set against them.

docs/benchmarks.md owns the recorded figures: its table under "## Headline figures" has a row per figure,
its key first (in backticks), then the goal (`≤ 1.5` times: lower is better; `≥ 1.0` times: higher is
better), the recorded ratio, the commit and the machine.  `python -m bench.run_all --compare` reruns the
benchmarks those figures come from and prints each against its recorded value, saying which fell by more
than 10%.  A figure's run can move by more than that on a loaded or drifting machine (the sink's ratio moved
by a fifth between two runs of the same code), so a figure that falls is measured once more, and it has
fallen only when that second run falls too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path

DOCS_PAGE = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md"
SECTION = "## Headline figures"
#: How much worse than recorded a figure may come out before it is said to have fallen.
TOLERANCE = 0.10
_ROW = re.compile(r"^\|\s*`(?P<key>[a-z0-9-]+)`[^|]*\|(?P<cells>.*)\|\s*$")
_TIMES = "\u00d7"  # the page's multiplication sign
_RATIO = re.compile(r"\*{0,2}(?P<value>\d+(?:\.\d+)?)" + _TIMES)
_GOAL = re.compile(r"(?P<direction>[≤≥])\s*(?P<value>\d+(?:\.\d+)?)" + _TIMES)


@dataclass(frozen=True)
class Recorded:
    """One figure as the docs page records it."""

    key: str
    lower_is_better: bool
    goal: float
    value: float
    commit: str
    machine: str


@dataclass(frozen=True)
class Comparison:
    """A figure measured again, against its recorded value."""

    recorded: Recorded
    measured: float | None  # None: the run did not measure it
    again: float | None = None  # the second run's figure, measured when the first fell

    @property
    def worse_by(self) -> float | None:
        """How far the figure moved the wrong way, as a share of the recorded one (< 0: it got better)."""
        return None if self.measured is None else self._worse_by(self.measured)

    @property
    def worse_again_by(self) -> float | None:
        """worse_by of the second run; None when there was none."""
        return None if self.again is None else self._worse_by(self.again)

    @property
    def fell_once(self) -> bool:
        """The first run is worse than recorded by more than TOLERANCE: the figure is measured again."""
        worse_by = self.worse_by
        return worse_by is not None and worse_by > TOLERANCE

    @property
    def fell(self) -> bool:
        """Worse than recorded by more than TOLERANCE, in the second run too when there was one."""
        again = self.worse_again_by
        return self.fell_once and (again is None or again > TOLERANCE)

    def _worse_by(self, measured: float) -> float:
        moved = measured / self.recorded.value - 1
        return moved if self.recorded.lower_is_better else -moved

    @property
    def meets_goal(self) -> bool | None:
        """Whether the figure meets its goal: the second run's when there was one."""
        measured = self.measured if self.again is None else self.again
        if measured is None:
            return None
        goal = self.recorded.goal
        return measured <= goal if self.recorded.lower_is_better else measured >= goal


def recorded_figures(page: str) -> dict[str, Recorded]:
    """{key: figure} from the page's headline table; ValueError when a row cannot be read."""
    if SECTION not in page:
        raise ValueError(f"no {SECTION!r} section in the benchmarks page")
    section = page.split(SECTION, 1)[1].split("\n## ", 1)[0]
    figures = {}
    for line in section.splitlines():
        row = _ROW.match(line)
        if row is None:
            continue
        figures[row["key"]] = _recorded(row["key"], [cell.strip() for cell in row["cells"].split("|")])
    if not figures:
        raise ValueError(f"the {SECTION!r} section holds no figure rows")
    return figures


def _recorded(key: str, cells: list[str]) -> Recorded:
    if len(cells) != 4:
        raise ValueError(f"figure {key!r}: expected goal, recorded ratio, commit and machine, got {cells}")
    goal_cell, value_cell, commit, machine = cells
    goal, value = _GOAL.search(goal_cell), _RATIO.search(value_cell)
    if goal is None or value is None:
        raise ValueError(f"figure {key!r}: cannot read a goal from {goal_cell!r} or a ratio from {value_cell!r}")
    if not re.fullmatch(r"`?[0-9a-f]{7,40}`?", commit) or not machine:
        raise ValueError(f"figure {key!r}: a figure names its commit and its machine, got {commit!r}, {machine!r}")
    return Recorded(
        key, goal["direction"] == "≤", float(goal["value"]), float(value["value"]), commit.strip("`"), machine
    )


def compare(recorded: Iterable[Recorded], measure: Callable[[str], float | None]) -> list[Comparison]:
    """Each recorded figure against what `measure(key)` gives for it now."""
    return [Comparison(figure, measure(figure.key)) for figure in recorded]


def confirm(comparisons: Iterable[Comparison], measure_again: Callable[[str], float | None]) -> list[Comparison]:
    """The comparisons, each figure that fell once with its second run's figure, `measure_again(key)`."""
    return [
        replace(comparison, again=measure_again(comparison.recorded.key)) if comparison.fell_once else comparison
        for comparison in comparisons
    ]


def verdict(comparison: Comparison) -> str:
    """One short line: how the figure moved, in each run, and whether it fell by more than the tolerance."""
    worse_by = comparison.worse_by
    if worse_by is None:
        return "not measured"
    moved = _moved(worse_by)
    again = comparison.worse_again_by
    if again is not None:
        moved = f"{moved}, then {_moved(again)} in a second run"
    if comparison.fell:
        return f"FELL: {moved} (more than {TOLERANCE:.0%})"
    return f"held: {moved}"


def _moved(worse_by: float) -> str:
    if round(worse_by, 2) == 0:
        return "as recorded"
    return f"{abs(worse_by):.0%} {'worse' if worse_by > 0 else 'better'}"
