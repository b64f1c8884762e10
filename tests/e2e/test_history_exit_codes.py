"""`history` and `report` say their exit codes (issue 53, item 12): `history PATTERN` exited 1 where PATTERN matched
nothing, and neither --help nor the guide said so (a CI gate with a mistyped PATTERN fails, by design, and a user
needs to know why). The codes are said in both commands' --help and in docs/guides/history.md, and hold."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from asyncbench import cli
from asyncbench.results import stats
from asyncbench.results.model import OK, Result, Samples, VariantResult
from tests.support.ab_files import ab_json, recorded_gate
from tests.support.cli import asyncbench, in_process
from tests.support.helpers import quick_numpy_results, report_of
from tests.support.stores import a_store

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "history.md"


@pytest.mark.parametrize(
    ("command", "said"),
    [
        (
            "history",
            [
                "Exit 0: the series are shown",
                "Exit 1: no series matches PATTERN",
                "--fail-on-regression found a regression",
                "Exit 2",
                "--within N",  # the gate's window, with its default and an example
                "[default: 10;",
                "history --fail-on-regression --within 20",
            ],
        ),
        ("report", ["Exit 0: the page is written", "Exit 1: no series matches PATTERN", "Exit 2", "Exit 3"]),
    ],
)
def test_help_says_each_exit_code(command, said):
    shown = " ".join(CliRunner().invoke(cli.main, [command, "--help"], terminal_width=200).output.split())
    for words in said:
        assert words in shown, (words, shown)


def test_the_guide_has_a_table_of_the_exit_codes():
    guide = GUIDE.read_text()
    table = guide.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    for code in ("| 0 |", "| 1 |", "| 2 |", "| 3 |"):
        assert code in table
    assert "no series in the store matches PATTERN" in table


def test_a_pattern_that_matches_nothing_exits_1_and_says_so(tmp_path):
    a_store(tmp_path, quick_numpy_results(tmp_path / "r.json"))
    done = asyncbench("history", "no-such-case", "--history", "h.sqlite", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "no series matching 'no-such-case' in the history" in done.stderr
    assert asyncbench("history", "matmul", "--history", "h.sqlite", cwd=tmp_path).returncode == 0


def test_max_regression_without_fail_on_regression_is_refused_in_one_line_as_label_without_record_is(tmp_path):
    """It judged nothing and was taken in silence: a gate thought set that was not."""
    store = str(tmp_path / "none.sqlite")  # refused before the store is looked for
    refused = CliRunner().invoke(cli.main, ["history", "--history", store, "--max-regression", "5%"])
    assert refused.exit_code == 2
    assert refused.output.strip() == (
        "asyncbench: error: --max-regression without --fail-on-regression: nothing would be judged; "
        "add --fail-on-regression, or leave it out"
    )
    gating = CliRunner().invoke(cli.main, ["history", "--history", store, "--fail-on-regression", "--max-regression", "5%"])
    assert "--max-regression without" not in gating.output  # with the gate it is read as before


# ---- the gate over the history (`--fail-on-regression`) on a real SQLite store, recorded run by run ----------------
# (a new user's trial, item B1: the gate failed only where the newest run itself started the change, so a step found
# a few runs after it started never failed it, and a job run again after a failure passed; history.gate)

#: --within's default, as `history --help` and docs/guides/history.md say it
WITHIN = 10
#: each run's step before the slowdown (23.5 ms, as the trial's), and after it (×2.17)
CLEAN_S, SLOWED_S = 0.0235, 0.0512


def _results_file(folder: Path, run: int, slowed_s: float, seed: int) -> Path:
    """A results file of two cases, `flat` at CLEAN_S and `slowed` at `slowed_s`, each run's median off by the drift of
    a runner (2%), its 12 samples about it (1%)."""
    rng = random.Random(seed * 1000 + run)

    def case(name: str, step_s: float) -> Result:
        level = step_s * (1 + rng.gauss(0, 0.02))
        values = tuple(level * (1 + rng.gauss(0, 0.01)) for _ in range(12))
        variant = VariantResult(Samples(values, values), stats.summarize(values), stats.summarize(values), None)
        return Result(f"{name}[numpy,cpu]", name, name, "numpy", "cpu", {}, OK, variants={name: variant})

    path = folder / f"r{run}.json"
    report_of([case("flat", CLEAN_S), case("slowed", slowed_s)]).save(path)
    return path


def _gate_after_each(folder: Path, files: list[Path], *options: str) -> tuple[list[int], list[str]]:
    """Each file recorded in turn (`record`), and after each `history slowed --fail-on-regression --max-regression 10%`
    (with `options`) as a CI job runs it: its exit codes and stderr; `history flat` the same way exits 0 every time."""
    codes, said = [], []
    for run, path in enumerate(files, start=1):
        recorded = in_process("record", str(path), "--label", f"run-{run}", "--history", "h.sqlite", cwd=folder)
        assert recorded.returncode == 0, recorded.stderr
        gated = [
            in_process("history", name, "--fail-on-regression", "--max-regression", "10%", "--history", "h.sqlite", *options, cwd=folder)
            for name in ("flat", "slowed")
        ]
        assert gated[0].returncode == 0, (run, gated[0].stderr)  # a flat series never fails
        codes.append(gated[1].returncode)
        said.append(gated[1].stderr)
    return codes, said


def test_the_gate_fails_from_the_run_a_slowdown_is_found_until_it_started_within_runs_ago(tmp_path):
    """The trial's sequence: 4 clean runs, then slowed ×2.17, the gate after each record. It exits 1 from the first
    record where the step is found (the 8th at the latest: the trial's, where it exited 0) on each run after, until
    the step started --within (10) runs ago; then 0: no longer new."""
    files = [_results_file(tmp_path, run, CLEAN_S if run <= 4 else SLOWED_S, seed=1) for run in range(1, 4 + WITHIN + 2)]
    codes, said = _gate_after_each(tmp_path, files)
    found = codes.index(1)  # the first record where the gate fails
    assert 4 < found < 8, codes  # found within the 4 slowed runs of the trial
    assert codes == [0] * found + [1] * (4 + WITHIN - found) + [0], codes
    assert "from run-5, 3 runs ago" in said[7], said[7]  # the 8th: where the trial's gate passed
    assert re.search(r"(regression|inconclusive): slowed\[numpy,cpu\] slowed done_s on", said[7]), said[7]
    assert re.search(r"×2\.\d+ \[[\d.]+–[\d.]+\]|×2\.\d+ \[\?\]", said[7]), said[7]  # the ratio, with its interval
    assert "from run-5, 9 runs ago" in said[-2]  # the last that fails
    assert "regression" not in said[-1]


def test_a_job_run_again_does_not_turn_a_failure_into_a_pass(tmp_path):
    """6 clean runs, then slowed: the trial's gate exited 1 after the first slowed run and 0 after the next, the
    slowdown still there. It fails on every slowed run from the one the step is found on (the third: three runs a
    side, history.model.MIN_SIDE_RUNS), and on the same store read again."""
    files = [_results_file(tmp_path, run, CLEAN_S if run <= 6 else SLOWED_S, seed=2) for run in range(1, 12)]
    codes, _ = _gate_after_each(tmp_path, files)
    assert codes == [0] * 8 + [1, 1, 1], codes
    again = in_process("history", "--fail-on-regression", "--history", "h.sqlite", cwd=tmp_path)
    assert again.returncode == 1, again.stderr


def test_within_sets_how_long_and_reaches_back_past_last(tmp_path):
    files = [_results_file(tmp_path, run, CLEAN_S if run <= 6 else SLOWED_S, seed=2) for run in range(1, 12)]
    codes, _ = _gate_after_each(tmp_path, files, "--within", "3")
    assert codes == [0] * 8 + [1, 0, 0], codes  # found at run 9, 2 runs after it started: 3 runs old at run 10
    # the gate reads as far back as --within reaches, however few points --last shows: the step started 4 runs ago
    shown = in_process("history", "slowed", "--fail-on-regression", "--within", "5", "--last", "2", "--history", "h.sqlite", cwd=tmp_path)
    assert shown.returncode == 1, shown.stderr
    assert "from run-7, 4 runs ago" in shown.stderr


def test_within_without_fail_on_regression_is_refused_in_one_line(tmp_path):
    refused = CliRunner().invoke(cli.main, ["history", "--history", str(tmp_path / "none.sqlite"), "--within", "5"])
    assert refused.exit_code == 2
    assert refused.output.strip() == (
        "asyncbench: error: --within without --fail-on-regression: nothing would be judged; add --fail-on-regression, or leave it out"
    )


def test_a_series_of_ab_ratios_is_gated_the_same_way(tmp_path):
    """`ab` files against a pinned base recorded one by one: 6 gates at 1.00, then at +10%: the gate fails from the
    9th (three runs after the step: history.model.MIN_SIDE_RUNS) until the step started --within runs ago."""
    codes = []
    for day in range(1, 6 + WITHIN + 2):
        (tmp_path / f"ab-{day}.json").write_text(ab_json(recorded_gate(day, 1.0 if day <= 6 else 1.10), day))
        recorded = in_process("record", f"ab-{day}.json", "--label", f"ab-{day}", "--history", "h.sqlite", cwd=tmp_path)
        assert recorded.returncode == 0, recorded.stderr
        gated = in_process("history", "--fail-on-regression", "--max-regression", "5%", "--history", "h.sqlite", cwd=tmp_path)
        codes.append(gated.returncode)
        if day == 9:
            assert "ab:changed" in gated.stderr, gated.stderr
            assert "from ab-7, 2 runs ago" in gated.stderr, gated.stderr
    assert codes == [0] * 8 + [1] * (WITHIN - 2) + [0], codes


def test_a_step_without_an_interval_yet_is_inconclusive_and_allow_inconclusive_passes_it(tmp_path):
    """3 clean runs, then three slowed: the step is found once three runs lie after it, three against three, too
    few for an interval (C(6, 3) = 20 < 40): INCONCLUSIVE at any margin (the gate once judged its point ratio against
    the margin), failing unless --allow-inconclusive; five runs after it (C(8, 3) = 56) would give it one: two more."""
    files = [_results_file(tmp_path, run, CLEAN_S if run <= 3 else SLOWED_S, seed=2) for run in range(1, 7)]
    codes, said = _gate_after_each(tmp_path, files, "--max-regression", "500%")
    assert codes[-1] == 1, said[-1]
    assert "inconclusive: slowed[numpy,cpu] slowed done_s on" in said[-1]
    assert "[?]" in said[-1]
    assert "2 more runs like these would give it one" in said[-1]
    allowed = in_process("history", "slowed", "--fail-on-regression", "--allow-inconclusive", "--history", "h.sqlite", cwd=tmp_path)
    assert allowed.returncode == 0, allowed.stderr
    assert "--allow-inconclusive: it does not fail the gate" in allowed.stderr
