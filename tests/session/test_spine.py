"""The spine (session.spine.run) with a made-up place and conclusion: the order of the hooks, a Ctrl-C or SIGTERM in
the middle of the work (what finished saved, concluded, exit 130 or 143), a bug there, a save that fails, an output
that cannot be written, a bad request, a place that records nothing. Pure Python: nothing is measured."""

from __future__ import annotations

import json
import signal
from typing import Any, Sequence

import pytest

from asyncbench.errors import EXIT_ERRORS, EXIT_INTERRUPTED, EXIT_OK, EXIT_TERMINATED, InputError
from asyncbench.session import spine
from asyncbench.session.interrupts import Terminated
from asyncbench.session.requests import Outputs, Request
from asyncbench.session.run_conclusion import RunConclusion
from asyncbench.verdicts.outcome import Outcome
from tests.support.helpers import ok_result, report_of


class Conclusion:
    """A conclusion that notes each call in `calls`, its outcome exit 3 when the results file was not saved."""

    def __init__(self, calls: list[str], files: Sequence[str] = ()):
        self.calls, self.paths = calls, files
        self.unsaved: Sequence[str] = ()
        self.recorded: Any = None

    @property
    def dumps(self) -> Any:
        return lambda report: json.dumps(report)

    def judge(self, report: dict[str, Any], unsaved: Sequence[str], stopped: int | None) -> tuple[str, Outcome]:
        self.calls.append(f"judge(stopped={stopped})")
        self.unsaved = unsaved
        return "view", Outcome(EXIT_ERRORS if unsaved else EXIT_OK, ())

    def files(self, report: dict[str, Any], view: str) -> list[tuple[str, Any]]:
        self.calls.append("files")
        return [(path, lambda: f"{view} of {len(report['finished'])}") for path in self.paths]

    def unwritten(self, path: str, exc: OSError) -> str:
        return f"cannot write {path}"

    def record(self, recorded: Any, verdict: Outcome, say: Any) -> Outcome:
        self.calls.append("record")
        self.recorded = recorded
        return verdict

    def with_outcome(self, report: dict[str, Any], view: str, verdict: Outcome) -> str:
        self.calls.append("with_outcome")
        return f"{view} ending {verdict.code}"


class Place:
    """A place that finishes two cases, then ends as `ending` says (None: by itself; else it raises it)."""

    def __init__(self, calls: list[str], conclusion: Conclusion, json_path: str | None, ending: BaseException | None = None):
        self.calls, self.conclusion, self.ending = calls, conclusion, ending
        self.request = Request(outputs=Outputs(json_path))
        self.finished: list[str] = []

    def preflight(self) -> Conclusion:
        self.calls.append("preflight")
        return self.conclusion

    def start(self, saver: Any, stack: Any) -> None:
        self.calls.append("start")
        stack.callback(self.calls.append, "stack closed")

    def execute(self) -> None:
        self.calls.append("execute")
        self.finished += ["a", "b"]
        if self.ending is not None:
            raise self.ending

    def collect(self, interrupted: bool) -> dict[str, Any]:
        self.calls.append(f"collect(interrupted={interrupted})")
        return {"finished": self.finished, "interrupted": interrupted}

    def recorded(self, report: dict[str, Any]) -> list[Any]:
        self.calls.append("recorded")
        return [("the report", "r.json")]

    def stopped_line(self, report: dict[str, Any], kept_in: str) -> str:
        return f"interrupted: {len(report['finished'])} kept{kept_in}"


def test_the_spine_calls_each_hook_once_in_its_order_and_saves_before_it_judges(tmp_path):
    calls: list[str] = []
    results, page = tmp_path / "r.json", tmp_path / "page.md"

    class Checking(Conclusion):
        def judge(self, report: dict[str, Any], unsaved: Sequence[str], stopped: int | None) -> tuple[str, Outcome]:
            assert results.exists()  # saved, however the work ended, before anything is judged
            return super().judge(report, unsaved, stopped)

    conclusion = Checking(calls, [str(page)])
    said: list[str] = []
    ended = spine.run(Place(calls, conclusion, str(results)), said.append)
    assert calls == [
        "preflight",
        "start",
        "execute",
        "collect(interrupted=False)",
        "stack closed",  # what the work needed goes before the report concludes (ab's worktrees)
        "recorded",
        "judge(stopped=None)",
        "files",
        "record",
        "with_outcome",
    ]
    assert json.loads(results.read_text()) == {"finished": ["a", "b"], "interrupted": False}  # the place's dumps
    assert page.read_text() == "view of 2"
    assert said == [f"written: {results}, {page}"]
    assert conclusion.recorded == [("the report", "r.json")]
    assert ended == spine.Ended("view ending 0", EXIT_OK, interrupted=False)


STOPS = [(KeyboardInterrupt(), EXIT_INTERRUPTED), (Terminated(), EXIT_TERMINATED)]


@pytest.mark.parametrize("stop, code", STOPS, ids=["ctrl-c", "sigterm"])
def test_an_interrupt_mid_drive_saves_what_finished_concludes_it_and_ends_with_the_signals_code(tmp_path, stop, code):
    calls: list[str] = []
    results = tmp_path / "r.json"
    handler = signal.getsignal(signal.SIGTERM)
    said: list[str] = []
    ended = spine.run(Place(calls, Conclusion(calls), str(results), ending=stop), said.append)
    assert json.loads(results.read_text()) == {"finished": ["a", "b"], "interrupted": True}
    assert "collect(interrupted=True)" in calls
    assert f"judge(stopped={code})" in calls  # the conclusion knows the work was cut short
    assert ended == spine.Ended("view ending 0", code, interrupted=True)  # the signal's code, not the outcome's
    assert said == [f"written: {results}", f"interrupted: 2 kept in {results}"]  # the place's line, last
    assert signal.getsignal(signal.SIGTERM) == handler  # SIGTERM's handler from before is back


def test_a_bug_mid_drive_saves_what_finished_marked_interrupted_and_goes_on_unconcluded(tmp_path):
    calls: list[str] = []
    results = tmp_path / "r.json"
    with pytest.raises(RuntimeError, match="a bug"):
        spine.run(Place(calls, Conclusion(calls), str(results), ending=RuntimeError("a bug")), lambda line: None)
    assert json.loads(results.read_text()) == {"finished": ["a", "b"], "interrupted": True}
    assert not any(call.startswith("judge") for call in calls)
    assert calls[-1] == "stack closed"


def test_a_save_that_fails_is_said_once_judged_as_unsaved_and_not_named_as_kept(tmp_path):
    calls: list[str] = []
    results = tmp_path / "no such folder" / "r.json"
    conclusion = Conclusion(calls)
    said: list[str] = []
    ended = spine.run(Place(calls, conclusion, str(results), ending=KeyboardInterrupt()), said.append)
    assert conclusion.unsaved == [str(results)]
    assert ended.code == EXIT_INTERRUPTED
    assert said == [f"asyncbench: error: cannot write {results}: No such file or directory", "interrupted: 2 kept"]


def test_an_output_that_cannot_be_written_is_said_by_the_conclusion_and_the_command_exits_3(tmp_path):
    calls: list[str] = []
    lost, kept = tmp_path / "no such folder" / "page.md", tmp_path / "page.csv"
    said: list[str] = []
    ended = spine.run(Place(calls, Conclusion(calls, [str(lost), str(kept)]), None), said.append)
    assert said == [f"cannot write {lost}", f"written: {kept}"]
    assert ended.code == EXIT_ERRORS
    assert ended.view == f"view ending {EXIT_ERRORS}"


def test_a_bad_request_starts_nothing_and_writes_nothing(tmp_path):
    calls: list[str] = []

    class Refusing(Place):
        def preflight(self) -> Conclusion:
            raise InputError("--csv x: its folder does not exist")

    with pytest.raises(InputError):
        spine.run(Refusing(calls, Conclusion(calls), str(tmp_path / "r.json")), lambda line: None)
    assert calls == []
    assert list(tmp_path.iterdir()) == []


class Store:
    """A history store that notes what it was asked to record."""

    target = type("Target", (), {"shown": "the store"})()

    def __init__(self) -> None:
        self.asked: list[Any] = []

    def record(self, report: Any, label: Any, source: Any) -> Any:
        self.asked.append(source)
        raise AssertionError("nothing was to be recorded")


def test_a_place_that_records_nothing_leaves_the_store_alone_and_the_outcome_as_judged():
    """`ab`, or a torchrun rank other than 0: nothing recorded, nothing said, the exit code the report's own."""
    report = report_of([ok_result("m[torch,cpu]")])
    verdict = Outcome(EXIT_OK, ())
    said: list[str] = []
    store = Store()
    assert RunConclusion(Request().gate, (), store=store).record([], verdict, said.append) == verdict  # a run's own report
    assert RunConclusion(Request().gate, (), store=None).record([(report, "r.json")], verdict, said.append) == verdict
    assert store.asked == []
    assert said == []
