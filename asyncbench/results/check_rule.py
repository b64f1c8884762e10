"""The rule an `expect:` check is judged by, and a stored check held to it when its file is read.

`run` judges a check (verdicts.checks) with `verdict_of`: PASS where the whole interval satisfies the comparison
with the check's threshold, FAIL where the whole of it violates it, else INCONCLUSIVE (one measurement is an
interval of one point). The threshold is what the check's text says (`slowdown_k1 <= 3`, `done_s.median < 10ms`),
split by the grammar's expression (`CHECK`) and scaled by its unit (`UNIT_FACTORS`). All three are here, below the
verdicts and the config's parser (spec.expect), so that the reader of a results file (results.records) holds each
stored check to the very rule that judged it: a file edited by hand (a verdict "fail" turned "pass" beside an
interval wholly above its threshold, or a check's text given another threshold than the one it was judged at)
would otherwise be shown, recorded and reported as a gate its own numbers contradict.

`held_to_its_rule` asks of a stored check what `run` guarantees of every check it writes:

- its verdict is `verdict_of` its stored interval against its text's threshold (of its one measurement, where a
  PASS or FAIL stores no interval; a check with no interval may be INCONCLUSIVE: too few rounds decide nothing,
  but a metric's or a clock's with no value either was NOT_MEASURED, and an edit to INCONCLUSIVE would let
  --allow-inconclusive pass a gate on what was never measured);
- its text is a check's, as spec.expect's grammar writes it (split by `CHECK`, or a reading by `READING_CHECK`):
  `slack_s[host] >= banana` beside a "pass" was judged of nothing, and is refused, not shown with its verdict;
- the threshold its detail says it was judged against (`..., expected <= 3.00×`) is its text's, as far as the
  detail's rounding shows (units.quantity renders three significant digits).

A threshold check on the bound (`slack_s[host] >= 1ms`, `slack_share`, `ceiling`) is judged from the slowdown a
delay of its level caused against a tolerance of that delay (verdicts.bound_checks), not its interval against its
threshold: its verdict is not held to this rule here, but judged again from the file's perturbation rounds above
results/ (session.check_held). A check on the reading (`bound == device`) states no threshold: a
PASS or FAIL of it is held to the rounds and confidence it stores (`reading_held`): as many rounds as a reading at
that confidence needs (verdicts.bound_checks), else it decided nothing (a file written before a reading check stored
them, with neither, is read as it is).
"""

from __future__ import annotations

import operator
import re
from typing import Any, Callable, Collection

from asyncbench.results import bound_rule, units
from asyncbench.results.bound import CEILING, SLACK_S, SLACK_SHARE, BoundKind
from asyncbench.results.budget import rounds_for_median
from asyncbench.results.fields import At
from asyncbench.results.model import CLOCKS, Verdict

OPERATORS: dict[str, Callable[[float, float], bool]] = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}

#: the units a threshold may carry, by the quantity's declared unit, as factors to the base unit
UNIT_FACTORS: dict[str, dict[str, float]] = {
    "s": {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9},
    "x": {"x": 1.0, "×": 1.0},
    "%": {"%": 0.01},
}
#: a written unit's factor, whatever the quantity's declared unit (no unit is in two of UNIT_FACTORS' rows)
_FACTORS = {unit: factor for factors in UNIT_FACTORS.values() for unit, factor in factors.items()}

#: one check's text split: quantity, statistic, what its brackets name, operator, number, unit (spec.expect's grammar)
CHECK = re.compile(
    r"""\s*(?P<quantity>[A-Za-z_]\w*)
        (?:\.(?P<stat>\w+))?
        (?:\[(?P<variant>[^\[\]]+)\])?
        \s*(?P<op><=|>=|==|<|>)\s*
        (?P<number>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)
        \s*(?P<unit>[A-Za-zµ×%]+)?\s*""",
    re.VERBOSE,
)

#: the readings `bound == X` may name: the decided ones (INCONCLUSIVE and SYNCHRONOUS are no gate's aim)
READINGS = (BoundKind.HOST, BoundKind.DEVICE, BoundKind.BALANCED)
#: a check on the reading of what bounds the step: `bound == device`, `bound[fast] == host`
READING_CHECK = re.compile(rf"\s*bound\s*(?:\[[^\[\]]+\])?\s*==\s*(?:{'|'.join(str(r) for r in READINGS)})\s*")
#: what a stored check's text that neither expression splits is told it should be (spec.expect's grammar)
GRAMMAR = "expected QUANTITY[.STAT][[PARTS]] OP NUMBER [UNIT] (slowdown_k1 <= 3, slack_s[host] >= 1ms) or bound == READING"

#: threshold checks on the bound: judged against a tolerance of the delay their level injects, not their threshold
JUDGED_BY_THEIR_DELAY = (SLACK_S, SLACK_SHARE, CEILING)
#: how a verdict's detail states the threshold it was judged against (verdicts.checks: "expected <= 3.00×",
#: "expected < 10.0 ms", "expected >= 47 GFLOP/s", past plain digits "expected < 1.00e+30 s": units.PLAIN_MAX_CHARS):
#: its operator, number and unit
_STATED = re.compile(r"expected (?P<op><=|>=|==|<|>) (?P<number>[-+]?\d+(?:\.\d*)?(?:e[-+]\d+)?)(?P<gap> ?)(?P<unit>[^\s:;,()]*)")
#: a detail's number has three significant digits (units.number, seconds, percent): it may lie this far (relative)
#: from the threshold it renders, and half a unit of its last decimal (units.ratio's two decimals)
ROUNDING = 0.005


def verdict_of(op: str, interval: tuple[float, float], threshold: float) -> Verdict:
    """PASS when the whole interval satisfies the comparison, FAIL when the whole of it violates it, else INCONCLUSIVE
    (for ==, a count's: PASS when the interval is the threshold alone, FAIL when it leaves the threshold out)."""
    low, high = interval
    if op == "==":
        if low == high == threshold:
            return Verdict.PASS
        return Verdict.FAIL if threshold < low or threshold > high else Verdict.INCONCLUSIVE
    holds = OPERATORS[op]
    if holds(low, threshold) and holds(high, threshold):
        return Verdict.PASS
    if not holds(low, threshold) and not holds(high, threshold):
        return Verdict.FAIL
    return Verdict.INCONCLUSIVE


def held_to_its_rule(check: Any, at: At, metrics: Collection[str], bounded: Collection[str]) -> None:
    """InputError (naming the check's key) for a stored check its own numbers contradict: a verdict that is not
    what its interval (or its one measurement) gives against its text's threshold, a PASS or FAIL without the
    interval its quantity is judged from, or a detail that states another threshold. `check` is held to its
    vocabulary before (results.records); `metrics` are its result's metrics (a metric named like a bound quantity
    or a clock is a metric), `bounded` those of them a check judges from their interval (results' `bounds`)."""
    match = CHECK.fullmatch(str(check.get("expect") or ""))
    if match is None:  # no threshold stated: a reading (`bound == device`), held to its rounds
        if not READING_CHECK.fullmatch(str(check.get("expect") or "")):
            # no check `run` judges reads so (spec.expect refuses it in a config): its verdict was judged of nothing
            (at / "expect").fail(f"{str(check.get('expect'))[:120]!r} is no check a run judges: {GRAMMAR}")
        reading_held(check, at)
        return
    quantity, op = match["quantity"], match["op"]
    written = match["unit"]
    if written is not None and written not in _FACTORS:
        (at / "expect").fail(f"{written!r} is no unit a check's threshold is written in ({', '.join(_FACTORS)})")
    threshold = threshold_of(match)
    metric = quantity in metrics and match["stat"] is None and match["variant"] is None
    if quantity in JUDGED_BY_THEIR_DELAY and not metric:
        return
    _stated_threshold(check, at, op, threshold)
    verdict, bounds, value = Verdict(check["verdict"]), check.get("bounds"), check.get("value")
    if bounds is not None:
        judged = verdict_of(op, (float(bounds[0]), float(bounds[1])), threshold)
        said = f"its interval [{bounds[0]:g}, {bounds[1]:g}]"
    elif verdict == Verdict.INCONCLUSIVE and value is None and (metric or quantity in CLOCKS):
        # a metric's or a clock's check is INCONCLUSIVE of a value it has (too few rounds for an interval); of none,
        # it was NOT_MEASURED, which fails a gate that --allow-inconclusive would let an INCONCLUSIVE through
        (at / "verdict").fail(f"an 'inconclusive' of {quantity!r} with no value: a check of what was not measured is 'not measured'")
    elif verdict not in (Verdict.PASS, Verdict.FAIL):  # no interval: INCONCLUSIVE, or NOT_MEASURED, decides nothing
        return
    elif quantity in bounded if metric else quantity in CLOCKS and match["stat"] in (None, "median"):
        # a metric with an interval, and a clock's median, are judged from their interval: none, no verdict
        (at / "bounds").fail(
            f"a {str(verdict)!r} of {quantity!r} with no interval: it is judged from its interval, and one without it is INCONCLUSIVE"
        )
    elif value is None:
        (at / "value").fail(f"a {str(verdict)!r} with neither an interval nor a measurement to be judged from")
    else:
        judged = verdict_of(op, (float(value), float(value)), threshold)
        said = f"its one measurement {float(value):g}"
    if judged != verdict:
        (at / "verdict").fail(f"{str(verdict)!r} is not the verdict of {said} against {check['expect']!r} ({str(judged)!r})")


def threshold_of(match: re.Match[str]) -> float:
    """A check's threshold in its quantity's base unit, from its text split by CHECK (a unit it is not written in: 1)."""
    return float(match["number"]) * _FACTORS.get(match["unit"] or "", 1.0)


def reading_held(check: Any, at: At) -> None:
    """InputError for a PASS or FAIL of a reading check (`bound == device`) whose stored rounds are too few for a
    reading at its stored confidence (the bootstrap's MIN_ROUNDS, or a median's order-statistic interval at that
    level, whichever is more: verdicts.bound_checks.reading_rounds_needed), or that stores one of the two without the
    other. With neither (a file written before they were stored) there is nothing to hold it to."""
    if Verdict(check["verdict"]) not in (Verdict.PASS, Verdict.FAIL):
        return
    rounds, confidence = check.get("rounds"), check.get("confidence")
    if rounds is None and confidence is None:
        return
    if rounds is None or confidence is None:
        missing = "rounds" if rounds is None else "confidence"
        (at / missing).fail(f"a {str(check['verdict'])!r} of a reading with no {missing}: it is judged from both")
    if not 0 < float(confidence) < 1:
        (at / "confidence").fail(f"{confidence!r} is no confidence (a level between 0 and 1)")
    needed = max(bound_rule.MIN_ROUNDS, rounds_for_median(float(confidence)))
    if int(rounds) < needed:
        (at / "verdict").fail(
            f"{str(check['verdict'])!r} of a reading from {rounds} perturbation rounds: a {units.confidence(float(confidence))} "
            f"reading needs {needed}, so it is INCONCLUSIVE"
        )


def _stated_threshold(check: Any, at: At, op: str, threshold: float) -> None:
    """The threshold the detail says the check was judged against (`expected <= 3.00×`, `expected < 10.0 ms`) is
    its text's, as far as the detail's rounding shows: within half a unit of its last digit, or 0.5% (three
    significant digits). A threshold the detail states in bytes (scaled from the metric's unit) or in words is not
    read back."""
    detail = str(check.get("detail") or "")
    stated = _STATED.search(detail)
    if stated is None:
        return
    said = f"expected {stated['op']} {stated['number']}{stated['gap']}{stated['unit']}"
    if stated["unit"] in units.BYTE_SCALES:
        return
    factor = _FACTORS.get(stated["unit"], 1.0)  # a unit of no factor is the metric's own, said after its number
    mantissa, _, exponent = stated["number"].partition("e")
    decimals = len(mantissa.partition(".")[2]) - int(exponent or 0)  # 1.00e+30: its last digit's place is 1e28
    shown = float(stated["number"]) * factor
    rounding = max(ROUNDING * abs(threshold), 0.5 * 10.0**-decimals * factor) * (1 + 1e-9)
    if stated["op"] != op or abs(shown - threshold) > rounding:
        (at / "expect").fail(f"{check['expect']!r}: its detail says it was judged against another threshold ({said!r})")
