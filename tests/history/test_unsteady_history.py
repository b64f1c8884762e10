"""A series with runs enough to search but too few left once the machine's are discounted says it cannot tell, and the
gate calls it INCONCLUSIVE (a team lead's store: 4 runs of unchanged code, then 4 after a real ~1.6× slowdown, on a
2-core machine shared with another user; 5 of the 8 runs discounted, 3 searched of the 6 a search needs; `history`
printed "no change found" and `--fail-on-regression` passed at any margin)."""

from __future__ import annotations

import io
import json
import random

import pytest

from asyncbench.history import changes, gate, store, target
from asyncbench.results import stats
from asyncbench.results.model import OK, Result, Samples, VariantResult
from asyncbench.results.reference import Reference
from tests.support.cli import invoke
from tests.support.helpers import report_of

WORK = "float32 256×256 product ×4 on numpy cpu"
# The machine's reference per run (ms): slow in 5 of the 8 (beyond ×1.25 of its usual 1 ms, so discounted), never
# in the newest three together (those would be a runner that moved for good: history.discount.LASTING)
MACHINE_MS = (1.0, 1.5, 1.6, 1.5, 1.0, 1.5, 1.6, 1.0)
SLOWED_FROM = 5  # the code is 1.6× slower from this run on


def _case(time_s: float, machine_s: float, seed: int) -> Result:
    draw = random.Random(seed)
    done = tuple(time_s * (1 + draw.gauss(0, 0.01)) for _ in range(20))
    variant = VariantResult(Samples(done, done), stats.summarize(done), stats.summarize(done), None)
    samples = tuple(machine_s * (1 + draw.gauss(0, 0.01)) for _ in range(40))
    reference = Reference(WORK, samples, cpu_pressure=0.0, others_cpu=0.0)
    return Result("train_step", "e", "chain", "numpy", "cpu", {}, OK, variants={"chain": variant}, reference=reference)


def _store(tmp_path, machine_ms=MACHINE_MS) -> str:
    path = str(tmp_path / "h.sqlite")
    opened = store.open_store(target.resolve(path), writing=True)
    for run, machine in enumerate(machine_ms, start=1):
        code = 1.6 if run >= SLOWED_FROM else 1.0
        opened.record(report_of([_case(0.0042 * code * machine, 0.001 * machine, run)]), label=f"run-{run}")
    return path


def _done(path: str):
    (one,) = [s for s in store.open_store(target.resolve(path)).series() if s.quantity == "done_s"]
    return one


def test_a_series_with_too_few_runs_left_after_discounting_says_so_never_no_change_found(tmp_path):
    from rich.console import Console

    from asyncbench.report import history as shown

    one = _done(_store(tmp_path))
    assert (one.runs, len(one.discounted), one.change_points) == (8, 5, ())
    assert one.unsteady
    out = io.StringIO()
    shown.print_series([one], Console(file=out, width=300, color_system=None))
    text = out.getvalue()
    assert "(8 runs, 5 discounted as the machine's: 3 left, too few to tell)" in text
    assert "no change found" not in text
    assert "changes looked for" not in text
    said = json.loads(changes.to_json([one]))[0]
    assert (said["searched"], said["not_searched"], said["runs_left"]) == (False, "unsteady", 3)


def test_the_page_says_a_series_was_too_unsteady_to_tell(tmp_path):
    from asyncbench.report import html

    page = html.render([_done(_store(tmp_path))], None, [], "h.sqlite")
    assert "too few runs left to tell, not searched for changes" in page
    assert "5 of 8 runs discounted as the machine" in page


@pytest.mark.parametrize("margin", ["10%", "50%", "70%", "100%"])
def test_the_gate_calls_an_unsteady_series_inconclusive_and_fails_unless_allowed(tmp_path, margin):
    path = _store(tmp_path)
    failed = invoke("history", "train_step", "--history", path, "--fail-on-regression", "--max-regression", margin)
    assert failed.exit_code == 1, failed.output
    assert "the machine was too unsteady to tell: 5 of 8 runs discounted" in failed.stderr
    assert "unless --allow-inconclusive" in failed.stderr
    allowed = invoke("history", "train_step", "--history", path, "--fail-on-regression", "--max-regression", margin, "--allow-inconclusive")
    assert allowed.exit_code == 0, allowed.output
    assert "--allow-inconclusive: it does not fail the gate" in allowed.stderr


def test_a_young_series_passes_the_gate_as_before(tmp_path):
    """Fewer runs recorded than a search needs: too few to tell, and the gate starts to guard it after a few more."""
    one = _done(_store(tmp_path, MACHINE_MS[:4]))
    assert not one.unsteady
    assert json.loads(changes.to_json([one]))[0]["not_searched"] == "too_short"
    assert gate.regressions([one], 0.1) == []


def test_a_young_series_with_a_run_discounted_says_it_was_not_searched_never_no_change_found(tmp_path):
    """Two runs, the second on a moved machine: too short to search (docs/guides/history.md), so neither "no change
    found" nor "changes looked for" (it was not), in the terminal, the JSON and the page alike."""
    from rich.console import Console

    from asyncbench.report import history as shown
    from asyncbench.report import html

    one = _done(_store(tmp_path, MACHINE_MS[:2]))
    assert (one.runs, len(one.discounted)) == (2, 1)
    out = io.StringIO()
    shown.print_series([one], Console(file=out, width=300, color_system=None))
    text = out.getvalue()
    assert "(2 runs, not searched: too short to tell, needs 6 runs)" in text
    assert "no change found" not in text
    assert "changes looked for" not in text
    assert "discounted run-2: the machine's reference took" in text  # the run is still named
    said = json.loads(changes.to_json([one]))[0]
    assert (said["searched"], said["not_searched"]) == (False, "too_short")
    page = html.render([one], None, [], "h.sqlite")
    assert "too short to tell, not searched for changes: chain done_s on" in page
    assert "2 run(s), needs 6" in page


def test_the_same_slowdown_on_a_steady_machine_is_searched_and_found(tmp_path):
    one = _done(_store(tmp_path, (1.0,) * 8))
    assert not one.unsteady
    assert json.loads(changes.to_json([one]))[0]["searched"] is True
    [hit] = gate.regressions([one], 0.1)
    assert hit.change is not None
    assert not hit.inconclusive


def test_allow_inconclusive_s_help_covers_every_inconclusive_the_gate_gives():
    """Its option text named only a ratio with no interval, where the command's own text (and the gate) calls an
    unsteady series INCONCLUSIVE too, and lets it pass with the same flag."""
    said = " ".join(invoke("history", "--help").output.split())
    option = said[said.index("--allow-inconclusive With") : said.index("--last")]
    assert "no interval" in option
    assert "too unsteady to tell" in option


def test_the_gate_says_in_one_line_how_many_series_it_could_not_judge_for_being_young(tmp_path):
    """`history --fail-on-regression` over young series exited 0 with no word of the series too short to judge: it
    passes them (docs/guides/history.md says why), but one line counts them and says why."""
    path = _store(tmp_path, MACHINE_MS[:4])
    done = invoke("history", "train_step", "--history", path, "--fail-on-regression")
    assert done.exit_code == 0, done.output
    lines = [line for line in done.stderr.splitlines() if "too short to judge" in line]
    assert lines == [  # every series is young: it says that the gate judged nothing (docs/guides/history.md), exit 0
        "the gate judged nothing: all 2 series are too short to judge (4 runs recorded; a change is looked for from 6 runs "
        "on): the gate passes them until then"
    ]  # the case's done and issue times; its machine's own series are never the gate's to judge
    (tmp_path / "x").mkdir()
    steady = invoke("history", "train_step", "--history", _store(tmp_path / "x", (1.0,) * 8), "--fail-on-regression")
    assert "not judged" not in steady.stderr  # a series searched is judged, whatever it found
