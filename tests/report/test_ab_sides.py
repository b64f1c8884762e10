"""`ab`'s side lines name what each side ran: a head that is the working tree names the commit it is based on, and
whether tracked files were modified (its worker's facts' git_sha), in the terminal and in the pull-request comment."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from asyncbench.report import paired as views
from asyncbench.results.ab_report import ABReport
from asyncbench.results.labels import Label
from asyncbench.results.paired import PairedCase, PairedRatio, Side
from asyncbench.verdicts.outcome import Outcome

SHA = "0123456789abcdef0123456789abcdef01234567"


def _view(head_revision: str, git_sha: str | None) -> views.ABView:
    base = Side("base", "a1b2c3d4e5 (main)", "python", "3.11", facts={"git_sha": "a1b2c3d4e5" + "0" * 30})
    head = Side("head", head_revision, "python", "3.11", facts={"git_sha": git_sha})
    row = PairedRatio("step", "variant", "s", 1e-3, 1e-3, 1.0, (0.99, 1.01), Label.SAME)
    case = PairedCase("work[numpy,cpu]", "ok", ratios=(row,), blocks=10, backend="numpy", device="cpu")
    return views.build(ABReport("2026-01-01T00:00:00+00:00", "0", base, head, 0.05, 0.01, False, "frozen", (case,)), Outcome(0, ()))


def _head_lines(view: views.ABView) -> tuple[str, str]:
    out = io.StringIO()
    views.print_view(view, Console(file=out, width=300))
    terminal = next(line for line in out.getvalue().splitlines() if line.startswith("head:"))
    comment = next(line for line in views.markdown(view).splitlines() if line.startswith("- head:"))
    return terminal, comment


@pytest.mark.parametrize("dirty, said", [(True, "with uncommitted changes"), (False, "no uncommitted change")])
def test_a_working_tree_head_names_its_commit_and_whether_it_was_modified(dirty, said):
    terminal, comment = _head_lines(_view("working tree", SHA + ("-dirty" if dirty else "")))
    for line in (terminal, comment):
        assert "working tree" in line
        assert SHA[:10] in line, line
        assert said in line, line
        assert "-dirty" not in line


def test_a_commit_head_is_named_as_ab_wrote_it_and_a_working_tree_without_git_says_only_that():
    terminal, _ = _head_lines(_view("f00dfeed12 (v1.3)", "f00dfeed12" + "0" * 30))
    assert terminal.startswith("head: f00dfeed12 ('v1.3') ·")  # the name as the user typed it, quoted as data
    terminal, _ = _head_lines(_view("working tree", None))
    assert terminal.startswith("head: working tree ·")
