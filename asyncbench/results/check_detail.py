"""What an `expect:` check's detail says, written by `run` (verdicts.checks) and held to its check when a file is read.

A check's detail is the sentence `show`, `compare`, the exit summary, the markdown and JUnit writers print beside its
verdict: `done_s.median[async] = 8.1 ms [7.9–8.4] (95% interval), expected < 10.0 ms`. The reader already holds a
stored check's verdict, value, interval and threshold to its case (results.check_rule, results.case_held); the
detail is free text, so a hand edit ("done_s = 1 ms (95% interval), expected < 10 ms; 10x faster than main", or a
detail whose figures are not its stored value and bounds) would be printed as the tool's words. The sentences a
threshold check's verdict writes from its figures alone are rendered here, below the verdicts, so that the writer
(verdicts.checks._judge) and the reader (`details_held`, called by results.schema on every stored case) use one
rendering.

Each kind of detail is held, and a file whose detail is not the one the tool writes is refused in one line naming
the file and the check's `detail` (results.fields.At), as the reader refuses a forged verdict or value. It is not
rebuilt: a rebuilt detail would still need what the stored fields lack (the variant a clock check's worst verdict
came from, the rounds an INCONCLUSIVE check had too few of, the level a check without an interval was judged at),
and it would silently print a file that was edited as if it were not. Held, by kind:

- a check on a metric or a clock (`speedup >= 2`, `done_s.median[async] < 10ms`): its detail is rendered again from
  its stored value, interval, confidence and verdict, its text's threshold and its quantity's unit, and must be that
  sentence exactly: `label = value (one measurement, no interval), expected ...`, `label = value [low–high] (L
  interval), expected ...` with the straddle or the miss (`(over by 40%)`) its verdict adds, or `label was not
  measured`. Where the fields do not fix a word (the label's variant, the rounds of a `no L interval from N rounds`),
  the word must be one `run` writes: a variant of the case, a count under what the level needs (`(it needs M)`),
  or at least it (the rounds drifted together). A check on a user's step may carry `per step (N steps a sample): `
  before it (session.step_measurement), with N the case's own `steps`; a check of a case that did not run says so
  with the case's reason.
- a census check (`syncs_per_step[item] <= 2`, `run --syncs`) names points (`; waits at FILE:LINE (...)`) that no
  field stores: its figures are held (the same rendered sentence, before the points), and the points to the form
  `run` writes; its other forms (no census, a line no wait was seen at) to theirs.
- a file of an older schema version: its details were written in older words (`illusion = 16.0× [15.2–16.4]`
  before the level was said, `fewer effective rounds` before the drift was named), which this rendering does not
  give: they are shown as stored, as the rest of an older file is read as it is.
- a check on the bound (`slack_s[host] >= 1ms`, `bound == device`) says what a delay did to the step, in words its
  fields do not hold: it is held by results.check_rule (its rounds and confidence), not here.
"""

from __future__ import annotations

import math
import re
from typing import Any, Mapping

from asyncbench.results import units
from asyncbench.results.budget import rounds_for_median
from asyncbench.results.check_rule import CHECK, JUDGED_BY_THEIR_DELAY, threshold_of
from asyncbench.results.fields import At
from asyncbench.results.model import CLOCKS, Status, Verdict

# A value this many times the threshold away is said as a multiple, not a percentage.
FAR_MISS = 10.0
# The words an INCONCLUSIVE check's detail says why with (verdicts.checks reads them back: inconclusive_why), each in
# no other cause's detail.
STRADDLES = "the interval straddles the threshold"
NEEDS = "(it needs "
DRIFTED = "the rounds drifted together"
TOO_FEW = "from too few rounds"
#: what an INCONCLUSIVE check with an interval adds after its figures, where what stopped its sampling is not known
#: (a census check's rounds; every such check in a file written before the advice named what stopped the sampling)
MORE_ROUNDS = f": {STRADDLES}; more rounds (max_time_s) may decide it"
#: what stopped a case's sampling (results.model.StopReason's words) -> the setting that gives it more rounds: a trial's
#: run stopped by max_samples (20 rounds in 0.35 s of the 1 s allowed) was told to raise max_time_s
#: (a stop on the noise target with a check undecided: one judged after sampling, at a level its looks did not take)
RAISE = {
    "max_samples": ("max_samples", "raise max_samples"),
    "max_time_s": ("max_time_s", "raise max_time_s"),
    "timeout_s": ("timeout_s", "raise timeout_s"),
    "max_rel_noise": ("a smaller max_rel_noise", "lower max_rel_noise"),
}
#: the settings named where what stopped the sampling is not known (and in files written before it was named)
RAISE_EITHER = ("max_time_s", "raise max_samples, and max_time_s")
#: what a check on a user's step says first (session.step_measurement): its clocks are per step, not per sample
PER_STEP = "per step"
_PER_STEP = re.compile(rf"{PER_STEP} \((?P<steps>\d+) steps a sample\): ")
#: the census's quantities (verdicts.syncs.SYNC_QUANTITIES), with their units
CENSUS_UNITS = {"syncs_per_step": "", "sync_wait_s": "s"}
#: the level a check's interval is said at ("95%", "99.9666%": units.exact_confidence; "99.95%", units.confidence, before)
_LEVEL = r"\d+(?:\.\d+)?%"


def steps_said(detail: str) -> int | None:
    """The steps a sample a user's step's check says its clocks were divided by (`per step (5 steps a sample): `),
    None where it says none (session.step_measurement judges such a check on each sample over its steps)."""
    said = _PER_STEP.match(detail)
    return int(said["steps"]) if said is not None else None


def wanted(op: str, threshold: float, unit: str) -> str:
    """'expected < 10.0 ms': the threshold a check is judged against, in its quantity's unit, to the digits it has."""
    return f"expected {op} {stated(threshold, unit)}"


# The most significant digits (decimals, for a ratio) a threshold is given to read back as itself.
STATED_DIGITS = 9


def stated(threshold: float, unit: str) -> str:
    """A threshold as the check states it: its quantity's form (results.units) with the digits that read back as it,
    where the usual three do not: 'expected < 1.0002×' (a trial read 'expected < 1.00×' beside a value of
    1.001× 'over by 0.0949%', its check written `illusion < 1.0002`), '< 1.2345 ms'."""
    text = units.quantity(threshold, unit)
    if not math.isfinite(threshold) or threshold == 0 or unit not in ("x", "s", ""):
        return text
    if unit == "x" and abs(threshold) < 100:
        decimals = next((d for d in range(2, STATED_DIGITS + 1) if _reads_as(f"{threshold:.{d}f}", threshold)), STATED_DIGITS)
        return f"{threshold:.{decimals}f}×"
    scale, name = units.time_unit(threshold) if unit == "s" else (1.0, unit)
    figure, _, shown_unit = text.replace(units.MINUS, "-").partition(" ")
    if _reads_as(figure.removesuffix("×"), threshold / scale) or shown_unit not in ("", name) or threshold < 0:
        return text
    digits = next(
        (d for d in range(4, STATED_DIGITS + 1) if _reads_as(units.number(threshold / scale, d), threshold / scale)), STATED_DIGITS
    )
    return f"{units.number(threshold / scale, digits)} {name}".rstrip()


def _reads_as(text: str, value: float) -> bool:
    try:
        return math.isclose(float(text), value, rel_tol=1e-9)
    except ValueError:
        return False


def by_how_much(value: float, threshold: float) -> str:
    """' (over by 40%)', ' (short by 20%)', or ' (3761× the threshold)' for a far miss (never '3.76e+05%')."""
    if not threshold:
        return ""
    off = abs(value - threshold) / abs(threshold)
    if off >= FAR_MISS:
        return f" ({units.number(value / threshold)}× the threshold)"
    return f" ({'over' if value > threshold else 'short'} by {units.percent(off, 3)})"


def one_measurement(label: str, value: float, unit: str, expected: str) -> str:
    """'peak_bytes = 1.2 GiB (one measurement, no interval), expected <= 2 GiB'."""
    return f"{label} = {units.quantity(value, unit)} (one measurement, no interval), {expected}"


def with_interval(label: str, value: float, interval: tuple[float, float], unit: str, level: str, expected: str) -> str:
    """'done_s.median[async] = 8.1 ms [7.9–8.4] (95% interval), expected < 10.0 ms'. A time whose interval is [0, 0]
    reads '0 [0–0]', not the table's bare '0' (units.with_bounds), which beside '(99.98% interval)' printed none."""
    shown = units.with_bounds(value, interval, unit)
    return f"{label} = {shown}{' [0–0]' if shown == '0' else ''} ({level} interval), {expected}"


def more_rounds(stopped_by: str | None) -> str:
    """What an INCONCLUSIVE check with an interval adds after its figures: `MORE_ROUNDS`, naming the setting that
    stopped its case's sampling (`stopped_by`, the result's `sampling.stopped_by`; None: not known)."""
    if stopped_by is None:
        return MORE_ROUNDS
    return f": {STRADDLES}; more rounds ({RAISE.get(stopped_by, RAISE_EITHER)[0]}) may decide it"


def no_interval(
    label: str,
    value: float,
    unit: str,
    expected: str,
    level: str,
    rounds: int | None,
    independent: int | None = None,
    confidence: float | None = None,
    stopped_by: str | None = None,
) -> str:
    """'speedup = 1.9×, expected >= 2.00×: no 99.9% interval from 4 rounds (it needs 10)', or with the rounds drifted
    together: an INCONCLUSIVE check's detail, which says why it had no interval. Drifted, it says how many rounds it
    would have needed (docs/concepts/intervals.md): `independent`, how many independent rounds its `rounds` counted
    as (stats.independent_rounds), gives about how many rounds at that drift would (`rounds_at_drift`); without it,
    it says that cannot be told, and which setting to raise: the one that stopped the sampling (`stopped_by`, as
    `more_rounds`). The rounds needed are those of `confidence`, the exact level the interval was taken at: `level`
    is it rounded down to a readable one (units.confidence), which can need fewer (a trial's 99.9778% needs 14, its
    '99.975%' 13); without `confidence` (a file written before it was stored), they are `level`'s, as written then."""
    few = f"{rounds} round{'' if rounds == 1 else 's'}" if rounds is not None else TOO_FEW.removeprefix("from ")
    shown = f"{label} = {units.quantity(value, unit)}, {expected}: no {level} interval from {few}"
    needed = rounds_for_median(confidence if confidence is not None else float(level.rstrip("%")) / 100)
    raise_ = (RAISE_EITHER if stopped_by is None else RAISE.get(stopped_by, RAISE_EITHER))[1]
    if rounds is not None and rounds < needed:
        return shown + f" {NEEDS}{needed})"
    if rounds is not None and independent is not None and independent < needed:
        return shown + (
            f" ({DRIFTED}: they count as {independent} independent one{'' if independent == 1 else 's'} where the level "
            f"needs {needed}; at this drift "
            f"about {rounds_at_drift(rounds, independent, needed)} rounds would give one: {raise_})"
        )
    if rounds is not None:
        unknown = f"how many rounds would give one is not known here: {raise_}"
        return shown + f" ({DRIFTED}: too few independent ones for one; {unknown})"
    return shown


def rounds_at_drift(rounds: int, independent: int, needed: int) -> int:
    """About how many rounds count as `needed` independent ones at the drift that made `rounds` count as
    `independent` (the inflation rounds/independent held; stats.independent_rounds)."""
    return max(math.ceil(needed * rounds / max(independent, 1)), rounds + 1)


def not_measured(label: str) -> str:
    return f"{label} was not measured"


def details_held(result: Mapping[str, Any], at: At, declared: Mapping[str, Any] | None) -> None:
    """InputError naming a stored check's `detail` that is not the one `run` writes of its fields (the module's
    docstring). `result`: a stored case, already held to its vocabulary (results.records.check); `declared`: the
    file's `metric_info`, the units of the metrics its cases leave out."""
    infos = result.get("metric_info") or ((declared or {}).get(str(result.get("workload"))) or {})
    for index, check in enumerate(result.get("checks") or ()):
        match = CHECK.fullmatch(str(check.get("expect") or ""))
        if match is None or (match["quantity"] in JUDGED_BY_THEIR_DELAY and match["quantity"] not in (result.get("metrics") or {})):
            continue  # a check on the bound: its words are the delay's (the module's docstring)
        detail = str(check.get("detail") or "")
        if _written(check, match, result, infos, detail):
            continue
        said = f"{detail[:120]!r} is not what a run writes of {check.get('expect')!r} and its stored figures"
        (at / "checks" / index / "detail").fail(said)


def _written(check: Mapping[str, Any], match: re.Match[str], result: Mapping[str, Any], infos: Mapping[str, Any], detail: str) -> bool:
    """Whether `detail` is one `run` writes of `check` (its fields, its text's threshold, its case)."""
    quantity, stat, variant, op = match["quantity"], match["stat"], match["variant"], match["op"]
    if result.get("status") != Status.OK:
        what = "errored" if result.get("status") == Status.ERROR else "was skipped"
        return detail == f"the case {what}: {result.get('reason') or 'no reason given'}"
    metrics = result.get("metrics") or {}
    threshold = threshold_of(match)
    sampling = result.get("sampling")
    stopped_by = str(sampling["stopped_by"]) if isinstance(sampling, Mapping) and sampling.get("stopped_by") else None
    if quantity in CENSUS_UNITS and quantity not in metrics:
        return _census_written(check, quantity, op, threshold, detail)
    if quantity in CLOCKS and not (quantity in metrics and stat is None and variant is None):  # spec.expect: a metric's first
        said = _PER_STEP.match(detail)
        if said is not None and int(said["steps"]) == (result.get("params") or {}).get("steps") and int(said["steps"]) > 1:
            detail = detail[said.end() :]
        names = [variant] if variant else list(result.get("variants") or {})
        labels = [f"{quantity}.{stat or 'median'}[{name}]" for name in names]
        return detail == not_measured(quantity) or any(
            _judged(check, label, "s", op, threshold, detail, stopped_by=stopped_by) for label in labels
        )
    info = infos.get(quantity) if isinstance(infos, Mapping) else None
    unit = str(info.get("unit") or "") if isinstance(info, Mapping) else ""
    return _judged(check, quantity, unit, op, threshold, detail, stopped_by=stopped_by)


def _judged(
    check: Mapping[str, Any],
    label: str,
    unit: str,
    op: str,
    threshold: float,
    detail: str,
    after: str = "",
    stopped_by: str | None = None,
) -> bool:
    """Whether `detail` is verdicts.checks._judge's sentence of `check` under `label`, with `after` (a pattern) after
    it; `stopped_by`: what stopped its case's sampling (None: not known, a census check), whose setting its advice
    names (`more_rounds`), or in a file written before that, `MORE_ROUNDS`'s and `RAISE_EITHER`'s words."""
    value, bounds, verdict = check.get("value"), check.get("bounds"), Verdict(check["verdict"])
    if value is None:
        return detail == not_measured(label)
    expected = wanted(op, threshold, unit)
    miss = by_how_much(float(value), threshold) if verdict == Verdict.FAIL else ""
    if bounds is not None:
        confidence = check.get("confidence")
        said = re.search(rf"\(({_LEVEL}) interval\)", detail)
        # the level the interval was taken at (units.exact_confidence), as `run` writes it; or, in a file written
        # before, that level rounded down to a readable one (units.confidence): either is its stored confidence's
        levels = (
            {units.exact_confidence(float(confidence)), units.confidence(float(confidence))}
            if confidence is not None
            else {said[1] if said else ""}
        )
        for level in levels:
            shown = with_interval(label, float(value), (float(bounds[0]), float(bounds[1])), unit, level, expected)
            advice = {more_rounds(stopped_by), MORE_ROUNDS} if verdict == Verdict.INCONCLUSIVE else {""}
            if any(re.fullmatch(re.escape(shown + said + miss) + after, detail) is not None for said in advice):
                return True
        return False
    if re.fullmatch(re.escape(one_measurement(label, value, unit, expected) + miss) + after, detail):
        return True
    if verdict != Verdict.INCONCLUSIVE:
        return False
    head = re.escape(f"{label} = {units.quantity(value, unit)}, {expected}: no ")
    said = re.fullmatch(rf"{head}({_LEVEL}) interval from (?:(\d+) rounds?|too few rounds)(?:.*they count as (\d+) independent)?.*", detail)
    if said is None:
        return False
    rounds = int(said[2]) if said[2] is not None else None
    independent = int(said[3]) if said[3] is not None else None
    confidence = check.get("confidence")
    if confidence is not None:  # the exact level it was judged at, stored since a check without an interval says it
        if said[1] != units.confidence(float(confidence)):
            return False
        texts = [no_interval(label, value, unit, expected, said[1], rounds, independent, float(confidence), stopped_by)]
    else:  # a file before: the rounds its level's words need, and (before the drift's count was said) its words then
        older = shown_before(label, value, unit, expected, said[1], rounds)
        texts = [no_interval(label, value, unit, expected, said[1], rounds, independent), older]
    return any(re.fullmatch(re.escape(text) + after, detail) is not None for text in texts)


def shown_before(label: str, value: float, unit: str, expected: str, level: str, rounds: int | None) -> str:
    """A drifted check's detail as runs wrote it before it said how many rounds would give one ('... (the rounds
    drifted together: too few independent ones for one)'), still read back as a run's."""
    shown = no_interval(label, value, unit, expected, level, rounds)
    cut = shown.find(f" ({DRIFTED}: ")
    return shown if cut < 0 else shown[:cut] + f" ({DRIFTED}: too few independent ones for one)"


#: what a census check that does not pass adds: the points it sums that weigh most (verdicts.checks.census_check)
_POINTS = r"(?:; waits at [^;]+:\d+ \([^;]*\)(?: and \d+ more)?)?"


def _census_written(check: Mapping[str, Any], quantity: str, op: str, threshold: float, detail: str) -> bool:
    """Whether `detail` is one verdicts.checks.census_check writes: its figures held, its words of the forms it writes."""
    unit = CENSUS_UNITS[quantity]
    expected = wanted(op, threshold, unit)
    said = re.match(rf"{quantity}(?:\[[^\]]*\])?", detail)
    label = said[0] if said else quantity
    if detail.startswith("not measured: ") or detail.startswith(f"{label} was not measured: "):
        return check.get("value") is None and check.get("bounds") is None
    if check.get("value") is None and check.get("verdict") == Verdict.INCONCLUSIVE:  # a line no wait was seen at
        unseen = rf"{re.escape(label)}: {re.escape(expected)}, but no wait at \S+ was seen in \d+ census rounds of any variant: .+"
        return re.fullmatch(unseen, detail) is not None
    if check.get("value") == 0 and check.get("bounds") is None and detail.startswith(f"{label} = 0 ("):
        return detail.endswith(f"), {expected}")
    return _judged(check, label, unit, op, threshold, detail, _POINTS if check.get("verdict") != Verdict.PASS else "")
