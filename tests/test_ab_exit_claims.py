"""What the docs say of `ab`'s exit code where a case broke on one side is what verdicts.paired.judge does: the failures
page said "the highest wins: an errored case (3) over a failed gate (1)" and the CI guide "3 when a case errored", while
`ab --help` put "a case ok on base and not on head" under 1, and `ab` exits 1 where head's step raises from its first
call (set-up or warm-up: lost on head), 3 where base could not be set up or a case errored while measured."""

from __future__ import annotations

from pathlib import Path

from asyncbench.errors import EXIT_ERRORS, EXIT_GATE
from asyncbench.report import paired as views
from asyncbench.results.paired import PairedCase
from asyncbench.verdicts import paired as verdicts
from tests.support.cli import invoke
from tests.verdicts.test_paired import _ratio, _report

ROOT = Path(__file__).resolve().parents[1]
#: the pages that state `ab`'s exit code where one side broke a case
PAGES = ("docs/concepts/failures.md", "docs/guides/ci.md")
#: what each says, as `judge` decides it (below): which side broke the case, and when
LOST = (
    "A case ok on base that head could not set up (its step raised while set up or warmed up) or skipped is lost on head: "
    f"the pull request broke what the gate guards, and the gate fails, 1 (`1 {views.LOST}`"
)
ERRORED = (
    "A case that could not be set up on base, or that errored while measured on either side (a step that fails only after "
    "its warm-up, or under `warmup: 0`), cannot be compared: an errored case, 3."
)


def test_the_failures_page_the_ci_guide_and_ab_help_say_which_side_s_error_exits_1_and_which_3():
    same = PairedCase("b", "ok", ratios=(_ratio("SAME"),))
    # as engine.paired makes them: head not set up (its step raised in warm-up) or skipped after base was ready: lost
    assert verdicts.judge(_report(PairedCase("a", "error", "head: RuntimeError: broke", lost=True), same)).code == EXIT_GATE
    assert verdicts.judge(_report(PairedCase("a", "skipped", "head: no GPU", lost=True), same)).code == EXIT_GATE
    # base not set up, or either side's error while measured: errored
    assert verdicts.judge(_report(PairedCase("a", "error", "base: RuntimeError: broke"), same)).code == EXIT_ERRORS
    assert verdicts.judge(_report(PairedCase("a", "error", "lost while measuring: RuntimeError: broke"), same)).code == EXIT_ERRORS
    for page in PAGES:
        text = " ".join((ROOT / page).read_text(encoding="utf-8").split())
        assert LOST in text, page
        assert ERRORED in text, page
    helped = " ".join(invoke("ab", "--help").output.split())
    assert "a case ok on base that head could not set up (its step raised in set-up or warm-up) or skipped (lost on head)" in helped
    assert "3 when a case could not be set up on base or errored while measured, on either side" in helped
