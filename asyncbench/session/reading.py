"""Results files read back: for show, compare, --baseline and gather, a journal read where a run has not ended.

`load_any` reads a file that may be either kind, a results file or an `ab` file (show, asyncbench.load).

`load_results` reads a results file; where the run writing it has not
ended (still running, or killed), its journal is read instead and `say`
tells so. Every result's reading is rebuilt from its stored figures
(workloads.stored_readings), never taken from the file, and so is every
`--bound-verify` verification (`reverified`: verdicts.verified.rebuilt, which
lives above results/, so it is done here), and so is every fitted bound
(`_rekinded`: the rule of a host- or device-bound reading reads the interval of
the resampled difference of the sides' slacks, which a file does not store, so
the results layer can hold it only to a condition it implies; verdicts.bound.fit
makes the bound again from its stored observations, and its slacks and costs are
held to the refit's), and so is every check on the bound (session.check_held:
judged again from the stored rounds at its stored level, an edited verdict
refused); files older than schema 3 get their units from the
built-in workloads too.
"""

from __future__ import annotations

import dataclasses
import statistics
from pathlib import Path
from typing import Any, Callable, Sequence

from asyncbench.errors import InputError
from asyncbench.results import ab_report, bound_held, bound_rule, journal, recordable, schema, units
from asyncbench.results.ab_report import ABReport
from asyncbench.results.bound import Bound, BoundKind
from asyncbench.results.fields import At
from asyncbench.results.model import Result
from asyncbench.results.schema import Report
from asyncbench.say import Say
from asyncbench.session import census_held, check_held
from asyncbench.verdicts import bound as fitting
from asyncbench.verdicts import verified


def load_any(path: str | Path, say: Say | None = None) -> Report | ABReport:
    """The file at `path`, whichever it is: an `ab` file (`ab -o`) or a results file (`run -o`; its journal where
    the run has not ended, told through `say`), parsed once and held to every field its reader checks."""
    with schema.bulk_loading():  # parsed once, whichever kind of file it is
        try:
            raw = ab_report.read_raw(path)
        except InputError:
            raw = None  # missing (a journal may stand for it), unreadable or not JSON: the results reader says which
        if ab_report.is_ab(raw):
            return ABReport.from_dict(raw, str(path))
        return load_results(path, say, raw=raw)


def no_case(path: str | Path, cases: Sequence[Any], interrupted: bool) -> str | None:
    """Why the run in `path` (its `cases`, whether it was `interrupted`) has nothing to compare or record: it holds
    no case (a run interrupted before its first case finished); None where it holds one. `compare` and `record`
    refuse such a file (exit 2): a comparison of it compares nothing, and a run recorded of it measured nothing."""
    if cases:
        return None
    why = "its run was interrupted before its first case finished" if interrupted else "its run finished no case"
    return f"{path} holds no case ({why})"


#: what `show` says of a file that holds no case, in the words `run` and `ab` end with where they measured or compared
#: nothing (verdicts.outcome, verdicts.paired): a file read back is judged by the same rule as the run that wrote it
NOTHING_MEASURED, NOTHING_COMPARED = "nothing was measured", "nothing was compared"


def held_nothing(path: str | Path, loaded: Report | ABReport) -> str | None:
    """Why `show` of `path` (`loaded`, either kind) fails where the file holds no case (`no_case`: a run or an `ab`
    interrupted before its first case finished): 'nothing was measured: r.json holds no case (…)', or 'nothing was
    compared: …' for an `ab` file; None where it holds one. `show` says it on stderr and exits 1, as `run` exits
    where nothing was measured: a file that measured nothing is no pass, whether it is shown, compared or recorded."""
    if isinstance(loaded, ABReport):
        empty = no_case(path, loaded.cases, loaded.interrupted)
        return f"{NOTHING_COMPARED}: {empty}" if empty else None
    empty = no_case(path, loaded.results, loaded.interrupted)
    return f"{NOTHING_MEASURED}: {empty}" if empty else None


def load_results(path: str | Path, say: Say | None = None, raw: Any = None) -> Report:
    """A results file, ready to render. Where a run writing it has not ended (still running, or killed), its
    journal is read instead, and `say` tells so. Every result's reading is made again from its stored figures
    (workloads.stored_readings: a built-in's, a step's; a user's own Workload class's stored words are dropped),
    never shown as the file wrote it. Files older than schema 3 store no units either, so those are taken from
    the built-in workloads (a user's workload is not imported to render a file: its old results stay bare)."""
    # built-ins only: rendering never imports a user's module
    from asyncbench.workloads import BUILT_IN

    report = _read(Path(path), say or (lambda _: None), raw)
    if report.schema_version < 3:
        described = [BUILT_IN[r.workload].describe(r) if r.workload in BUILT_IN else r for r in report.results]
        report = dataclasses.replace(report, results=tuple(described))
    return rebuilt(report, str(path))


def rebuilt(report: Report, source: str = "<results>") -> Report:
    """`report` as every reader shows it: its readings (workloads.stored_readings), its verifications and its fitted
    bounds (`reverified`) made again from its stored figures, never taken from the file (`merge` reads
    its shards through this too). `source`: the file, named where a bound's figures are refused."""
    from asyncbench.workloads import stored_readings  # built-ins and the step form: no user module imported

    return reverified(stored_readings.reread(report), source)


def reverified(report: Report, source: str = "<results>") -> Report:
    """`report` with every fitted bound made again from its observations (`_rekinded`, which holds its slacks and
    costs to the refit's), and every bound's `--bound-verify` verification from its stored
    pairs, bound and samples (verdicts.verified.rebuilt): its note, share and floor are the tool's words on those
    figures, never the file's. A genuine file's rebuilt verification and reading are the ones it stores, and it
    renders as it did; a bound whose figures its observations do not give is refused (InputError naming `source`)."""
    held = report.schema_version >= HELD_FROM_SCHEMA
    results = tuple(_reverified(result, At(source) / "results" / index, held) for index, result in enumerate(report.results))
    changed = any(new is not old for new, old in zip(results, report.results, strict=True))
    return dataclasses.replace(report, results=results) if changed else report


def _reverified(result: Result, at: At, held: bool) -> Result:
    bounds = {name: _rebuilt(_one_side(_rekinded(bound, at / "bound" / name, held)), result) for name, bound in result.bound.items()}
    changed = any(bounds[name] is not bound for name, bound in result.bound.items())
    # its checks on the bound judged again from the bound's stored rounds (session.check_held), as `run` judged them
    rejudged = check_held.rejudged(dataclasses.replace(result, bound=bounds) if changed else result, at)
    # and its checks on the census from its stored census rounds (session.census_held), in files of the rules now: an
    # older file's census checks are shown as stored, as its bounds' figures are
    return census_held.rejudged(rejudged, at) if held else rejudged


#: the readings refitted on reading: every one fitted from observations. A host- or device-bound reading's slack
#: intervals cannot be held exactly by results.bound_rule.check_reading (it holds them to a condition they imply); a
#: balanced or inconclusive one claims less, but its slacks and their intervals are shown all the same (a narrowed
#: interval beside an inconclusive reading, or one narrowed and relabelled balanced, is a wrong number shown). A
#: synchronous bound has no fit. A refit costs 34-59 ms a variant (docs/measured.md), paid by files with a bound only
_REFITTED = (BoundKind.HOST, BoundKind.DEVICE, BoundKind.BALANCED, BoundKind.INCONCLUSIVE)
#: the first results schema whose bounds were fitted as this version fits them (verdicts.bound's slacks and
#: intervals have not changed since; files of 11 came from fits before the slack was held at the step, among other
#: changes): a refitted bound's slacks and costs are held to the refit's from it on; an older file's are shown as
#: stored (its reading is still the refit's)
HELD_FROM_SCHEMA = 12
#: how far a stored slack or an end of its interval may lie from the refit's: the fit runs on the observations as
#: stored (results.bound.as_stored), so the two are one computation on the same numbers, apart from the float
#: arithmetic of another machine's numpy (its sums' order) and files of 12 written before the fit rounded them
#: first: over 80 planted fits, unrounded against rounded, 0.52 ns apart at most. 5 ns, and a relative 1e-9 of
#: the step for the arithmetic; an edit that shows (3 figures of a time) moves it by far more
REFIT_ROUNDING_S = 5e-9
REFIT_RELATIVE = 1e-9
#: how far a stored cost past, or an end of its interval, may lie from the refit's: results.bound_held's tolerance for
#: a cost recomputed from observations stored to the nanosecond (the same 80 fits: 3e-4 apart at most)
REFIT_COST = bound_held.COST_TOLERANCE


def _rekinded(bound: Bound, at: At, held: bool) -> Bound:
    """`bound` with a fitted reading (host-, device-bound, balanced or inconclusive) made again by verdicts.bound.fit
    from its stored observations, as `run` fits it (the default confidence, its steps a sample, its cores): an
    inconclusive bound edited to `host` beside a host slack of 88% of the step shows as the rule reads it. Where
    `held` (a file of HELD_FROM_SCHEMA or later), each side's slack, its interval, its cost past and that cost's
    interval are held to the refit's first (`_held`): a narrowed interval, or observations edited so that they read
    otherwise, are refused rather than shown beside a reading they do not give. The kind is replaced, not the figures: the
    bound's note is its fit's and the engine's words (results.bound_held leaves it unheld), and its figures are held
    on reading; the refit's interval of the paired difference (Bound.difference_ci, never stored) is taken too, and
    where the kind changed, the refit's parts of its note the stored one lacks (why it reads so now)."""
    if bound.bound not in _REFITTED or not bound.sides:
        return bound
    if not bound.observations:  # nothing to refit: the rule's one change since such files, read from its slacks
        return _reread(bound)
    refit = fitting.fit(
        bound.variant,
        bound.observations,
        True,
        steps_per_call=bound.steps_per_call,
        scale_s=bound.scale_s,
        shares_cores=bound.shares_cores,
        hold_jumps=bound.held_at_jump,  # by the rule it was fitted by: a file from before slacks were held at a jump holds none
    )
    if held:
        _held(bound, refit, at)
    if refit.bound == bound.bound and refit.difference_ci == bound.difference_ci:
        return bound
    # the interval of the paired difference the reading is read from is not stored: the refit's, which the reading's
    # line quotes; a kind read otherwise now (a device slack without a knee, once named the bound) gets the refit's
    # words for why beside the stored note's
    note = bound.note if refit.bound == bound.bound else _with_parts(bound_rule.reworded(bound.note, "", ""), refit.note)
    return dataclasses.replace(bound, bound=refit.bound, difference_ci=refit.difference_ci, note=note)


def _reread(bound: Bound) -> Bound:
    """A bound stored without observations, as the rule reads it now from its stored slack intervals
    (results.bound_rule.reread: a side with room is never the bound) and its note in the rule's words now."""
    intervals = {str(fit.side): fit.slack_ci_s for fit in bound.sides}
    kind = BoundKind(bound_rule.reread(str(bound.bound), intervals, bound.step_s))
    note = bound_rule.reworded(bound.note, str(kind), str(bound.bound))
    return bound if (kind, note) == (bound.bound, bound.note) else dataclasses.replace(bound, bound=kind, note=note)


def _one_side(bound: Bound) -> Bound:
    """A bound with one side measured whose stored note says that side has "no slack worth naming", with those words
    as the rule says them now from its stored interval (results.bound_rule.one_side_reworded: said only where the
    interval's upper end lies within the balance band, else that the interval does not decide)."""
    if bound.bound != BoundKind.INCONCLUSIVE:
        return bound
    note = bound_rule.one_side_reworded(bound.note, {str(fit.side): fit.slack_ci_s for fit in bound.sides}, bound.step_s)
    return bound if note == bound.note else dataclasses.replace(bound, note=note)


def _with_parts(stored: str | None, refit: str | None) -> str | None:
    """The stored note with the refit's "; "-joined parts it does not say yet, after it."""
    parts = [part for note in (stored, refit) if note for part in note.split("; ")]
    return "; ".join(dict.fromkeys(parts)) or None


def _held(stored: Bound, refit: Bound, at: At) -> None:
    """InputError (the file, the side's key) for the first stored figure of a side the refit does not give."""
    step = max(stored.step_s, 0.0)
    for fit in stored.sides:
        where = at / "sides" / str(fit.side)
        again = refit.side(fit.side)
        if again is None:
            (where / "slack_s").fail(f"no {fit.side} delay among its observations to fit it from: {recordable.NOT_WRITTEN}")
        times = (("slack_s", (fit.slack_s,), (again.slack_s,)), ("slack_ci_s", fit.slack_ci_s, again.slack_ci_s))
        for key, value, expected in times:
            if not _same(value, expected, lambda a, b: abs(a - b) <= REFIT_ROUNDING_S + REFIT_RELATIVE * step):
                (where / key).fail(f"{_said_s(value)} is not what its observations give ({_said_s(expected)}): {recordable.NOT_WRITTEN}")
        costs = (("cost_past", (fit.cost_past,), (again.cost_past,)), ("cost_past_ci", fit.cost_past_ci, again.cost_past_ci))
        for key, value, expected in costs:
            if not _same(value, expected, lambda a, b: abs(a - b) <= REFIT_COST * max(1.0, abs(b))):
                (where / key).fail(f"{_said(value)} is not what its observations give ({_said(expected)}): {recordable.NOT_WRITTEN}")


def _same(value: Sequence[float] | None, expected: Sequence[float] | None, close: Callable[[float, float], bool]) -> bool:
    if value is None or expected is None:
        return value is None and expected is None
    return all(close(a, b) for a, b in zip(value, expected, strict=True))


def _said_s(value: Sequence[float] | None) -> str:
    if value is None:
        return "no interval"
    return units.seconds(value[0]) if len(value) == 1 else f"[{units.seconds(value[0])}, {units.seconds(value[1])}]"


def _said(value: Sequence[float] | None) -> str:
    if value is None:
        return "no interval"
    return f"{value[0]:.3g}" if len(value) == 1 else f"[{value[0]:.3g}, {value[1]:.3g}]"


def _rebuilt(bound: Bound, result: Result) -> Bound:
    """`bound` with its verification rebuilt; the plain step's median in the timed rounds as `run` takes it (its
    variant's done times over the steps a sample ran), which the note compares the verification rounds' with."""
    if bound.verified is None:
        return bound
    timed = result.variants.get(bound.variant)
    done = timed.samples.done_s if timed is not None else ()
    timed_step_s = statistics.median(done) / max(bound.steps_per_call, 1) if done else None
    found = verified.rebuilt(bound.verified, bound, timed_step_s)
    return bound if found == bound.verified else dataclasses.replace(bound, verified=found)


def _read(path: Path, say: Say, raw: Any) -> Report:
    """The report at `path`: the results file (`raw`: its JSON, parsed already), or the journal of a run writing it
    that has not ended (or the journal itself, named directly)."""
    left = path if path.name.endswith(journal.SUFFIX) else journal.path_for(path)
    if not left.exists():
        return Report.from_dict(raw, str(path)) if schema.is_results(raw) else Report.load(path)
    recovered = journal.read(left)
    torn = f"; {recovered.torn} unreadable record(s) (cut short by the interruption, or damaged) left out" if recovered.torn else ""
    say(
        f"{path}: the run writing it has not ended (still running, or killed): "
        f"{len(recovered.report.results)} finished case(s) read from its journal {left}{torn}"
    )
    return recovered.report
