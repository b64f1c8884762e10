"""What a run concludes, in the words the terminal and the markdown summary share.

The exit code and every reason for it (pytest's short summary is the model):
errors, checks that failed, could not be evaluated or were inconclusive, a
regression against a baseline or a variant that cannot tell, a case the
baseline had that did not run now, a run that measured nothing. One rule
for INCONCLUSIVE, as in `compare` and `ab`: it fails the gate unless
--allow-inconclusive, whether a check or a baseline's row says it. Also the
headline counts and the one line per unavailable backend or device that
replaces a skipped row per case.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Sequence

from asyncbench.errors import EXIT_ERRORS, EXIT_GATE, EXIT_OK
from asyncbench.results import ahead, check_detail, units
from asyncbench.results.model import ERROR, OK, SKIPPED, Check, Result, Verdict
from asyncbench.results.schema import Report
from asyncbench.verdicts import checks, undecided

if TYPE_CHECKING:
    from asyncbench.verdicts.compare import Comparison


@dataclass(frozen=True)
class Outcome:
    """The exit code and why: each reason one line, the ones that set the code first."""

    code: int
    reasons: tuple[str, ...]
    #: (case id, check) of every check that fails the gate, for the short summary
    failing_checks: tuple[tuple[str, Check], ...] = ()

    def with_unsaved(self, path: str) -> Outcome:
        """This outcome once an output written after judging could not be saved: the run's errors now include it."""
        return Outcome(max(self.code, EXIT_ERRORS), (f"could not write {path}", *self.reasons), self.failing_checks)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def judge(
    report: Report,
    *,
    strict: bool = False,
    allow_inconclusive: bool = False,
    comparison: Comparison | None = None,
    unsaved: Iterable[str] = (),
) -> Outcome:
    """The exit code a run ends with, and every reason for it."""
    errors: list[str] = []
    gates: list[str] = []
    errored = [r for r in report.results if r.status == ERROR]
    if errored:
        errors.append(f"{_plural(len(errored), 'case')} errored: {', '.join(r.id for r in errored)}")
    unsaved = sorted(unsaved)
    if unsaved:
        errors.append(f"could not write {', '.join(unsaved)}")
    if report.results and all(r.status == SKIPPED for r in report.results):
        every = "the only case was" if len(report.results) == 1 else f"all {len(report.results)} cases were"
        gates.append(f"nothing was measured: {every} skipped ({skip_causes(report.results)})")
    failing = [(r.id, c) for r in report.results for c in r.checks if checks.failed(c, allow_inconclusive)]
    verdicts = Counter(check.verdict for _, check in failing)
    if verdicts[Verdict.FAIL]:
        gates.append(f"{_plural(verdicts[Verdict.FAIL], 'check')} failed")
    if verdicts[Verdict.NOT_MEASURED]:
        gates.append(f"{_plural(verdicts[Verdict.NOT_MEASURED], 'check')} could not be evaluated (not measured)")
    if verdicts[Verdict.INCONCLUSIVE]:
        undecided_in = {
            r.id for r in report.results for c in r.checks if checks.failed(c, allow_inconclusive) and c.verdict == Verdict.INCONCLUSIVE
        }
        stops = [r.sampling.stopped_by.value for r in report.results if r.id in undecided_in and r.sampling is not None]
        gates.append(inconclusive_line([check for _, check in failing if check.verdict == Verdict.INCONCLUSIVE], stops))
    if comparison is not None:
        if comparison.regressions:
            gates.append(f"{_plural(len(comparison.regressions), 'variant')} significantly slower than the baseline")
        if comparison.inconclusive and not allow_inconclusive:
            unsure = ", ".join(f"{r.id} {r.variant}" for r in comparison.inconclusive)
            gates.append(
                f"{_plural(len(comparison.inconclusive), 'variant')} INCONCLUSIVE against the baseline: {unsure}; "
                f"{undecided.reason(comparison.inconclusive)}; --allow-inconclusive lets it pass"
            )
        if comparison.lost:
            gates.append(
                f"{_plural(len(comparison.lost), 'case')} ok in the baseline did not run ok now: {', '.join(i for i, _ in comparison.lost)}"
            )
    skipped = [r for r in report.results if r.status == SKIPPED]
    if strict and skipped and len(skipped) < len(report.results):
        gates.append(f"--strict: {_plural(len(skipped), 'case')} skipped")
    code = EXIT_ERRORS if errors else EXIT_GATE if gates else EXIT_OK
    return Outcome(code, tuple(errors + gates), tuple(failing))


def held_nothing(judged: Outcome | None, why: str) -> Outcome:
    """A file read back that holds no case (`show`), judged: exit 1 with `why` first ('nothing was measured: …',
    session.reading.held_nothing), over whatever `judged` said of it (None: not judged). A run that measured
    nothing fails its gate (`judge`); its file, shown later, must not read as a pass in a table or a JUnit file."""
    before = judged or Outcome(EXIT_OK, ())
    return Outcome(max(before.code, EXIT_GATE), (why, *before.reasons), before.failing_checks)


def inconclusive_line(inconclusive: Sequence[Check], stopped_by: Iterable[str] = ()) -> str:
    """'2 checks inconclusive: 1 with an interval that straddles the threshold, 1 with no interval (the rounds drifted
    together ...); ...': each check's own cause (checks.inconclusive_why), never one cause said of all of them.
    `stopped_by`: what stopped the sampling of their cases (results.model.StopReason's words), the settings that give
    them more rounds (check_detail.RAISE: a run stopped by max_samples was told max_time_s); none: max_time_s."""
    causes = Counter(checks.inconclusive_why(check) for check in inconclusive)
    said = next(iter(causes)) if len(causes) == 1 else ", ".join(f"{n} with {cause}" for cause, n in causes.items())
    named = dict.fromkeys(check_detail.RAISE.get(stop, check_detail.RAISE_EITHER)[0] for stop in stopped_by)
    via = " or ".join(named) or check_detail.RAISE_EITHER[0]
    more = f"more rounds via {via} may decide it, " if set(causes) != {checks.WHY_UNSEEN} else ""
    return (
        f"{_plural(len(inconclusive), 'check')} inconclusive: {said}; inconclusive fails the gate ({more}--allow-inconclusive lets it pass)"
    )


def skip_causes(results: Sequence[Result]) -> str:
    """'cupy not installed (...) ×9; a CPU has no copy engine ... ×2': each reason once, with its count."""
    counts = Counter(r.reason or "no reason given" for r in results if r.status == SKIPPED)
    return "; ".join(f"{reason}" + (f" ×{n}" if n > 1 else "") for reason, n in counts.items())


def unavailable_lines(results: Iterable[Result]) -> list[str]:
    """One line per backend (or device) that is not there, instead of a skipped row in every table.

    'cupy: 9 cases skipped — cupy not installed (pip install ...)'
    """
    groups: dict[tuple[str, str], int] = defaultdict(int)
    for result in results:
        if result.status == SKIPPED and result.unavailable:
            groups[(result.backend, result.reason or "unavailable")] += 1
    return [f"{backend}: {_plural(n, 'case')} skipped — {reason}" for (backend, reason), n in groups.items()]


def ran_ahead(result: Result) -> bool:
    """Whether a row showed asynchrony: some variant's call returned before its work was done, beyond the harness's
    own sync, by its interval (results.ahead). Never on a synchronous backend, where they are one."""
    return ahead.ran_ahead(result)


def headline(report: Report) -> str:
    """'27 cases: 14 ok, 13 skipped; 6 ran ahead (...); 8 checks: 6 passed, 1 failed, 1 inconclusive'."""
    counts = Counter(r.status for r in report.results)
    text = f"{_plural(len(report.results), 'case')}: " + (
        ", ".join(f"{counts[s]} {s}" for s in (OK, SKIPPED, ERROR) if counts[s]) or "none"
    )
    if counts[OK]:
        states = [seen.state for r in report.results if (seen := ahead.judge(r)) is not None]
        count, unjudged = states.count(ahead.RAN_AHEAD), states.count(None)
        text += (
            f"; {count} ran ahead (a call returned before its work was done)"
            if count
            else "; none ran ahead (every call returned with its work done)"
            if all(state == ahead.NOT_AHEAD for state in states)
            else "; none shown to run ahead"
        )
        if unjudged:
            text += f", {unjudged} not judged (no interval)"
    judged = [c for r in report.results for c in r.checks]
    if judged:
        verdicts = Counter(c.verdict for c in judged)
        words = {Verdict.PASS: "passed", Verdict.FAIL: "failed", Verdict.INCONCLUSIVE: "inconclusive", Verdict.NOT_MEASURED: "not measured"}
        text += f"; {_plural(len(judged), 'check')}: " + ", ".join(f"{verdicts[v]} {words[v]}" for v in words if verdicts[v])
        shared = next((c.family_error for c in judged if c.family_error is not None), None)
        if shared is not None:
            text += f" (sharing a {units.percent(shared)} false-alarm rate, split over the checks and their looks)"
    if report.interrupted:
        text += " (interrupted)"
    return text
