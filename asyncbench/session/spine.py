"""The spine every measuring command follows, written once (`run`): preflight → start → drive → save → conclude.

What differs between `run` (session.local), `run --executor` and `gather`
(session.jobs, session.following), `merge` (session.shards) and `ab`
(session.paired) is a `Place`, where the cases run, and the `Conclusion`
its preflight hands back, how what it measured concludes (`run`'s family
shares one, session.run_conclusion; `ab` has its own). `run` calls their
hooks in one order: the place's preflight (everything wrong with the
request: one line, exit 2, before anything runs), its start (workers, the
sides' trees: what the stack closes once the work ends), then `drive` (the
work under the one interrupt policy, session.interrupts, what finished
saved by the one saver, session.saver, however it ended), then `conclude`
(judged once, every output written, recorded, the view to print), then the
place's line for work cut short. Things said along the way go through
`say`, so the CLI alone prints.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Callable, Generic, Protocol, Sequence, TypeVar

from asyncbench.errors import InputError
from asyncbench.measure import reference
from asyncbench.results import writing
from asyncbench.results.schema import Report
from asyncbench.say import Say
from asyncbench.session.interrupts import Interrupts
from asyncbench.session.requests import Request
from asyncbench.session.saver import Saver
from asyncbench.verdicts.outcome import Outcome

ReportT = TypeVar("ReportT")
ReportIn = TypeVar("ReportIn", contravariant=True)  # a report a conclusion is handed
ViewT = TypeVar("ViewT")
#: what a command's history gets: each report with the file it came from (a run's own, or each job's or shard's)
Recorded = Sequence[tuple[Report, "str | None"]]
#: an output file: its path, and its content, made only when it is written
File = tuple[str, Callable[[], "str | bytes"]]


@dataclass(frozen=True)
class Ended(Generic[ViewT]):
    """What a command ended with: the view to print (with the outcome), the exit code, and whether it was cut short."""

    view: ViewT
    code: int
    interrupted: bool
    #: whether this process reports (False on a torchrun rank other than 0: rank 0 reports for everyone)
    reports: bool = True


class Conclusion(Protocol[ReportIn, ViewT]):
    """How a finished report concludes (`conclude` calls these in order): judged once, every output written (a write
    that fails said by `unwritten`, a reason of exit 3), recorded, and the view to print with the final outcome."""

    @property
    def dumps(self) -> Callable[[ReportIn], str] | None:
        """The results file's whole text (None: a run's results file, its cases journaled as they finish)."""

    def judge(self, report: ReportIn, unsaved: Sequence[str], stopped: int | None) -> tuple[ViewT, Outcome]:
        """The view and the outcome: `unsaved`, the results file where it could not be written; `stopped`, the exit
        code of a Ctrl-C or SIGTERM that cut the work short (None: it ended by itself)."""

    def files(self, report: ReportIn, view: ViewT) -> Sequence[File]:
        """The files written after judging, besides the results file."""

    def unwritten(self, path: str, exc: OSError) -> str:
        """The line said for a file that could not be written."""

    def record(self, recorded: Recorded, verdict: Outcome, say: Say) -> Outcome:
        """`recorded` into the history where the command records; the outcome with a store that failed."""

    def with_outcome(self, report: ReportIn, view: ViewT, verdict: Outcome) -> ViewT:
        """The view with the outcome the files and the history left."""


class Place(Protocol[ReportT, ViewT]):
    """Where a command's cases run. `execute` runs them, keeping each as it finishes; Ctrl-C or SIGTERM may cut it
    short anywhere (KeyboardInterrupt), and it tears down what it started (workers, jobs it submitted) as it
    unwinds. `collect` is what finished, as one report, marked interrupted where the work was cut short."""

    @property
    def request(self) -> Request:
        """What the command asked (read after `preflight`, which may narrow it: a torchrun rank writes nothing)."""

    def preflight(self) -> Conclusion[ReportT, ViewT]:
        """Everything wrong with the request, said before anything runs (InputError); how its report will conclude."""

    def start(self, saver: Saver, stack: contextlib.ExitStack[Any]) -> None:
        """What the work needs, made ready: workers started, each case kept by `saver` as it finishes; what must go
        once the work ends, before the report concludes, on `stack` (ab's worktrees)."""

    def execute(self) -> None: ...

    def collect(self, interrupted: bool) -> ReportT: ...

    def recorded(self, report: ReportT) -> Recorded:
        """What the history gets of the report, where the command records (`--record`)."""

    def stopped_line(self, report: ReportT, kept_in: str) -> str | None:
        """What is said last when Ctrl-C or SIGTERM cut the work short (`kept_in`: " in FILE", where the results
        file was written, else ""); None: nothing (the outcome says it)."""


def run(place: Place[ReportT, ViewT], say: Say) -> Ended[ViewT]:
    """The command: preflight → start → drive → save → conclude (judge, write, record; see the module's docstring).
    InputError, before anything runs, for anything wrong with the request (the environment's cap on the wait for a
    calm CPU included: every case's worker reads it)."""
    reference.calm_wait_cap_s()
    conclusion = place.preflight()
    saver = Saver(place.request.outputs.json_path, say, conclusion.dumps)
    with contextlib.ExitStack() as stack:
        place.start(saver, stack)
        report, stopped = drive(place, saver.finish)
    ended = conclude(conclusion, report, saver, stopped, place.recorded(report), say)
    if stopped is not None:
        line = place.stopped_line(report, f" in {saver.path}" if saver.written else "")
        if line is not None:
            say(line)
    return ended


def drive(place: Place[ReportT, ViewT], save: Callable[[ReportT], None]) -> tuple[ReportT, int | None]:
    """Execute the place, then save what finished however the work ended: by itself, by Ctrl-C or SIGTERM (a second
    SIGTERM ignored while it is saved), or by a bug (what finished saved, marked interrupted, then the bug goes on;
    an InputError goes on at once, nothing written).
    Returns the report and the exit code to end with when it was cut short (130 or 143), else None."""
    interrupts = Interrupts()
    try:
        with interrupts.running():
            place.execute()
    except InputError:
        raise  # said in one line, writing nothing (a scheduler that cannot be asked: the jobs are left as they are)
    except BaseException:
        with contextlib.suppress(Exception):  # the bug is what to say; a save that fails as well must not hide it
            save(place.collect(interrupted=True))
        raise
    report = place.collect(interrupts.interrupted)
    with interrupts.saving():
        save(report)
    return report, interrupts.code


def conclude(
    conclusion: Conclusion[ReportT, ViewT], report: ReportT, saver: Saver, stopped: int | None, recorded: Recorded, say: Say
) -> Ended[ViewT]:
    """What a finished report comes to: judged once (`saver`: how the results file fared), every other output
    written, recorded, and what the command ends with (the signal's exit code where one cut the work short)."""
    view, verdict = conclusion.judge(report, saver.unsaved, stopped)
    written = list(saver.written)
    for path, content in conclusion.files(report, view):
        try:
            writing.atomic_write(path, content())
            written.append(path)
        except OSError as exc:
            say(conclusion.unwritten(path, exc))
            verdict = verdict.with_unsaved(path)
    if written:
        say(f"written: {', '.join(written)}")
    verdict = conclusion.record(recorded, verdict, say)
    code = stopped if stopped is not None else verdict.code
    return Ended(conclusion.with_outcome(report, view, verdict), code, interrupted=stopped is not None)
