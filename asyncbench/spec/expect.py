"""`expect:` checks: a tiny grammar for "speedup >= 3", checked against a workload's declarations.

    check    := quantity [ "." stat ] [ "[" variant "]" ] op number [ unit ]
              | census [ "[" part { "," part } "]" ] op number [ unit ]
    quantity := a metric of the workload (speedup, epoch_s_k2...) | issue_s | done_s | device_s
    stat     := median | min | max | iqr | ci_low | ci_high          (clocks only; default median)
    op       := <  <=  >  >=
    unit     := ns us µs ms s (seconds) · x (ratios) · % (fractions)
            | bound [ "[" variant "]" ] "==" reading
            | side_quantity "[" side [ "," variant ] "]" op number [ unit ]
    reading  := host | device | balanced                        (what bounds the step: `run --bound`)
    side_quantity := slack_s (s) | slack_share (%, always with its %) | ceiling (x, at least 1; its side is host)
    census   := syncs_per_step (waits per step, a count; op may also be ==) | sync_wait_s (seconds blocked per step)
    part     := a kind (print, conversion, explicit wait...; `kind=` before it optional) | FILE:LINE | [variant=]variant

A regular expression splits the text; nothing is ever evaluated. A clock,
or a census check, without a variant must hold for every variant of the
case; a census check without a kind or a line is on the whole step
(`run --syncs` takes the census: `syncs_per_step == 0`,
`sync_wait_s[print] < 1ms`, `syncs_per_step[train.py:42, variant=item] <= 1`).
A check on the bound (`bound == device`, `slack_s[host] >= 1ms`,
`slack_share[host] >= 20%`, `ceiling[host] <= 1.10`) is judged by
verdicts.bound_checks; its side, or the reading, is the Expectation's `at`,
and the case takes perturbation rounds for it, `--bound` or not.
A word that is both a kind and a variant (conversion's `print`) is the kind;
`variant=print` names the variant. Errors are ValueErrors whose message
says what was expected; the config loader adds the file, line and key.
Their verdicts are `verdicts.checks`'s. The expression that splits a check and its units' factors are
results.check_rule's: a results file's stored checks are read with them (and held to the rule that judged them).
"""

from __future__ import annotations

import math
import re
from typing import Any

from asyncbench.errors import closest, suggestion
from asyncbench.results.bound import SIDES, Side
from asyncbench.results.check_rule import CHECK
from asyncbench.results.check_rule import UNIT_FACTORS as UNIT_FACTORS  # spec.schema and spec.json_schema read them here
from asyncbench.results.model import CLOCKS, Expectation
from asyncbench.results.syncs import SYNC_KINDS
from asyncbench.results.units import BYTE_SCALES
from asyncbench.verdicts.bound_checks import BOUND_QUANTITIES, BOUND_UNITS, CEILING, READING, READINGS, SLACK_SHARE
from asyncbench.verdicts.syncs import SYNC_QUANTITIES, SYNC_UNITS, SYNCS_PER_STEP, kind_named, line_named
from asyncbench.workloads.base import Metric, Workload

CLOCK_STATS = ("median", "min", "max", "iqr", "ci_low", "ci_high")
_CHECK = CHECK  # the grammar's split and its units are the results' (a stored check's threshold is read with them)
#: the quantity a check begins with: a check on the bound (bound == device) has a grammar of its own (bound_check)
QUANTITY = re.compile(r"\s*([A-Za-z_]\w*)")
#: how a metric declared once for a numbered family of variants ends (workloads.base.PER_VARIANT_SUFFIX): K stands
#: for the variant's number, and a check names one of them (slowdown_k1), never the family (slowdown_kK)
PLACEHOLDER = "_kK"
#: the number a per-variant metric's name ends with (slowdown_k4: 4)
PER_VARIANT_NUMBER = re.compile(r"_k(\d+)$")
EXAMPLES = "e.g. 'speedup >= 1.5', 'overlap_efficiency > 0.5', 'done_s.median < 10ms' or 'syncs_per_step == 0'"


def _variant_known(workload: Workload | None, name: str) -> bool:
    """Declared variants are names, or a pattern with K for a number ("sync_every=K (one per ...)"); any name where
    there is no workload to hold it to (a stored check read back: bound_check)."""
    if workload is None:
        return True
    for declared in workload.variants:
        pattern = re.escape(declared.split()[0]).replace("K", r"\d+")
        if re.fullmatch(pattern, name):
            return True
    return False


def unit_of(workload: Workload, quantity: str) -> str:
    """The declared unit of a metric, or "s" for a clock."""
    declared = workload.metric(quantity)
    return declared.unit if declared else "s"


def parse(text: Any, workload: Workload) -> Expectation:
    """Parse one check against `workload`'s metrics, clocks and variants; ValueError if it does not fit."""
    if not isinstance(text, str):
        raise ValueError(f"expected a check as a string, {EXAMPLES}; got {text!r}")
    named = QUANTITY.match(text)
    if named is not None:
        _placeholder(named[1], workload)
    if named is not None and named[1] in BOUND_QUANTITIES and workload.metric(named[1]) is None:
        return bound_check(text, workload)
    if named is not None:
        _misspelt_bound(named[1], workload)
    match = _CHECK.fullmatch(text)
    if match is None:
        hint = " (comparisons are <, <=, > and >=; == only for syncs_per_step)" if re.search(r"!=|=>|=<|(?<![<>=])=(?!=)", text) else ""
        raise ValueError(f"malformed check {text!r}{hint}: expected QUANTITY OP NUMBER, {EXAMPLES}")
    quantity, stat, variant = match["quantity"], match["stat"], match["variant"]
    if quantity in SYNC_QUANTITIES and workload.metric(quantity) is None:
        return _census_check(text, match, workload)
    if match["op"] == "==":
        raise ValueError(f"malformed check {text!r} (comparisons are <, <=, > and >=; == is for a count of waits: syncs_per_step)")
    is_metric = workload.metric(quantity) is not None and stat is None and variant is None
    if not is_metric:
        _metric_with_a_clocks_part(match, workload)
        if quantity not in CLOCKS:
            metrics = [m.name for m in workload.metrics]
            raise ValueError(
                f"unknown metric {quantity!r} for {workload.name}{suggestion(quantity, _real_names(workload, quantity) + list(CLOCKS))}; "
                f"metrics: {', '.join(metrics)}{_per_variant_note(workload)}; clocks: {', '.join(CLOCKS)} (with .median, .min, ...)"
            )
        stat = stat or "median"
        if stat not in CLOCK_STATS:
            raise ValueError(f"unknown statistic {stat!r}{suggestion(stat, list(CLOCK_STATS))}; one of: {', '.join(CLOCK_STATS)}")
        if variant is not None and not _variant_known(workload, variant.strip()):
            raise ValueError(
                f"{workload.name} has no variant {variant.strip()!r}{suggestion(variant.strip(), list(workload.variants))}; "
                f"variants: {', '.join(workload.variants)}"
            )
    declared_unit = unit_of(workload, quantity) if is_metric else "s"
    threshold = _threshold(match, declared_unit, f"{quantity} (unit {declared_unit or 'none'})", "a plain number")
    declared = workload.metric(quantity) if is_metric else None
    named_as = quantity if is_metric else f"{quantity}.{stat}"
    _decidable(text.strip(), named_as, match["op"], threshold, declared_unit, declared)
    return Expectation(
        text=text.strip(),
        quantity=quantity,
        op=match["op"],
        threshold=threshold,
        stat=None if is_metric else stat,
        variant=None if is_metric or variant is None else variant.strip(),
    )


#: what a measurement in each unit is, by what it measures: a ratio of two times lies above 0; a time or a size at
#: least 0 (a t2 of 0, an empty pool: 0 is measured). Keyed by unit, with whether 0 itself is out of reach
_ONE_SIDED = {"x": ("a ratio, always above 0", True), "s": ("a time, never below 0", False)}
_ONE_SIDED.update({unit: ("a size, never below 0", False) for unit in BYTE_SCALES})


def _decidable(text: str, name: str, op: str, threshold: float, unit: str, declared: Metric | None) -> None:
    """ValueError, in one line, for a check no measurement can fall on the wrong side of: a time, a size or a ratio
    (by its unit) held to a threshold at or past 0 on the side it never reaches ('t1_s < 0ms' never passes,
    'speedup >= -1' never fails), as a slack below 0 or a ceiling below 1 is refused. A metric declared `signed`
    (a difference of two: t3_s, a cost, a saving) and any other unit (a plain number, a %, a rate) are left alone."""
    if (declared is not None and declared.signed) or unit not in _ONE_SIDED:
        return
    what, above_zero = _ONE_SIDED[unit]
    reaches_zero = not above_zero  # whether a measurement may be 0 itself
    if op in ("<", "<="):
        never = threshold < 0 or (threshold == 0 and (op == "<" or not reaches_zero))
        outcome = "pass"
    else:
        never = threshold < 0 or (threshold == 0 and (op == ">=" or not reaches_zero))
        outcome = "fail"
    if never:
        # a workload's own metric may be a difference that its unit does not say: how to declare one
        signed = " (a workload declares a metric that may lie below 0 with Metric(..., signed=True))" if declared is not None else ""
        raise ValueError(f"{text!r} can never {outcome}: {name} is {what}{signed}")


def _family(workload: Workload) -> str:
    """What K numbers in the workload's per-variant metrics: the parameter its variants are declared by
    ("sync_every=K (one per sync_every value)": sync_every), else its variants' number."""
    for declared in workload.variants:
        name, _, number = declared.split()[0].partition("=")
        if number == "K":
            return name
    return "number"


def _real_names(workload: Workload, asked: str) -> list[str]:
    """The workload's metric names as a check can write them, to suggest for a misspelt `asked`: a per-variant one
    with K the number `asked` ends with (slowdwn_k4 -> slowdown_k4), else 1 (a wait every step: a real name in the
    step form's and every built-in's default)."""
    number = PER_VARIANT_NUMBER.search(asked)
    k = number[1] if number else "1"
    return [m.name.removesuffix(PLACEHOLDER) + f"_k{k}" if m.name.endswith(PLACEHOLDER) else m.name for m in workload.metrics]


def _per_variant_note(workload: Workload) -> str:
    """' (_kK: one metric per variant, K its sync_every: slowdown_k1)' after a list of metrics with a family, else ''."""
    family = next((m.name.removesuffix(PLACEHOLDER) for m in workload.metrics if m.name.endswith(PLACEHOLDER)), None)
    return "" if family is None else f" (_kK: one metric per variant, K its {_family(workload)}: {family}_k1)"


def _metric_with_a_clocks_part(match: re.Match[str], workload: Workload) -> None:
    """ValueError for a metric written with a statistic or a variant (`step_s_k0.median < 5ms`, `speedup[async] > 1`),
    which only a clock takes: the name is right, the suffix is not, so say so and write the check without it, rather
    than call a real metric unknown and suggest the very name typed."""
    quantity, stat, variant = match["quantity"], match["stat"], match["variant"]
    if quantity in CLOCKS or workload.metric(quantity) is None:
        return
    suffix_end = match.end("variant") + 1 if variant is not None else match.end("stat")  # past the "]" or the stat
    bare = (match.string[: match.end("quantity")] + match.string[suffix_end:]).strip()
    part, example = ("statistic", "done_s.median") if stat is not None else ("variant", "done_s[VARIANT]")
    raise ValueError(f"{quantity!r} is a metric, which takes no {part}: write {bare!r} (a {part} follows a clock: {example})")


def _placeholder(quantity: str, workload: Workload) -> None:
    """ValueError for a check on a family's placeholder (`slowdown_kK <= 1.5`): no run measures a metric of that name,
    so the check could only ever read *not measured*; say which names it stands for."""
    if quantity.endswith(PLACEHOLDER) and workload.metric(quantity) is not None:
        real = quantity.removesuffix(PLACEHOLDER)
        raise ValueError(
            f"{quantity!r} declares one metric per variant, and no metric a run measures is named so: write K as the variant's "
            f"{_family(workload)} ({real}_k1: the variant {_family(workload)}=1's)"
        )


def _misspelt_bound(quantity: str, workload: Workload) -> None:
    """ValueError with a "did you mean" for a misspelt check on the bound (`bond == device`, `slack_shar[host]`):
    where the closest known name is a bound quantity, not a metric or a clock, so its grammar is the one meant."""
    known = [*_real_names(workload, quantity), *CLOCKS, *SYNC_QUANTITIES]
    if workload.metric(quantity) is not None or quantity in known:
        return
    close = closest(quantity, [*known, *BOUND_QUANTITIES])
    if close in BOUND_QUANTITIES:
        raise ValueError(f"unknown quantity {quantity!r}{suggestion(quantity, [close])}; checks on the bound: {READING_EXAMPLES}")


def _census_part(part: str, workload: Workload | None) -> tuple[str, str]:
    """('kind', 'print'), ('line', 'train.py:42') or ('variant', 'item') for one part of a census check's brackets."""
    label, _, named = part.partition("=") if "=" in part else ("", "", part)
    label, named = label.strip(), named.strip()
    if label not in ("", "kind", "variant"):
        raise ValueError(f"unknown {label!r}= in a census check: parts are a kind (kind=print), FILE:LINE or a variant (variant=item)")
    kind = kind_named(named)
    if label == "kind" or (not label and kind is not None):
        if kind is None:
            kinds = [str(k) for k in SYNC_KINDS]
            raise ValueError(f"unknown kind {named!r}{suggestion(named, kinds)}; kinds: {', '.join(kinds)}")
        return "kind", kind.value
    if not label and line_named(named) is not None:
        return "line", named
    if workload is not None and not _variant_known(workload, named):
        kinds = [str(k) for k in SYNC_KINDS]
        raise ValueError(
            f"{named!r} is no kind, FILE:LINE or variant of {workload.name}{suggestion(named, kinds + list(workload.variants))}; "
            f"kinds: {', '.join(kinds)}; variants: {', '.join(workload.variants)}"
        )
    return "variant", named


def census_check(text: str) -> Expectation | None:
    """A stored check's text as `parse` read it where it is a check on the census (None: any other check), its variant
    not held to a workload's (a results file's stored check is read back without its workload: session.census_held);
    ValueError for a census check `parse` never accepts."""
    match = _CHECK.fullmatch(text)
    if match is None or match["quantity"] not in SYNC_QUANTITIES:
        return None
    return _census_check(text, match, None)


def _census_check(text: str, match: re.Match[str], workload: Workload | None) -> Expectation:
    """A check on the census (`run --syncs`): waits or seconds blocked per step, of the whole step, a kind or a line,
    in every variant or one (any variant where there is no `workload` to hold it to)."""
    quantity = match["quantity"]
    if match["stat"] is not None:
        raise ValueError(f"{quantity} has no statistics (.{match['stat']}): it is the median per step over the census rounds")
    if match["op"] == "==" and quantity != SYNCS_PER_STEP:
        raise ValueError(f"malformed check {text!r} (comparisons are <, <=, > and >=; == is for a count of waits: syncs_per_step)")
    chosen: dict[str, str] = {}
    for part in (match["variant"] or "").split(",") if match["variant"] is not None else ():
        if not part.strip():
            raise ValueError(f"an empty part in {quantity}[{match['variant']}]: write a kind, FILE:LINE or a variant")
        what, named = _census_part(part, workload)
        if what in chosen or (what in ("kind", "line") and {"kind", "line"} & set(chosen)):
            raise ValueError(f"{quantity}[{match['variant']}] names more than one {'variant' if what == 'variant' else 'kind or line'}")
        chosen[what] = named
    threshold = _threshold(match, SYNC_UNITS[quantity], quantity, "a plain number (waits per step)")
    return Expectation(
        text=text.strip(),
        quantity=quantity,
        op=match["op"],
        threshold=threshold,
        variant=chosen.get("variant"),
        at=chosen.get("kind") or chosen.get("line"),
    )


def _threshold(match: re.Match[str], declared_unit: str, shown: str, unitless: str) -> float:
    """A check's threshold in its quantity's stored unit: the number scaled by the unit written after it (`10ms`),
    which must fit `declared_unit` ("s": s, ms, us, ns); ValueError naming `shown` and what fits (`unitless` where
    no unit does)."""
    threshold = float(match["number"])
    if not math.isfinite(threshold):  # 1e999 reads as inf: a check that can never fail (or never pass)
        raise ValueError(f"the threshold {match['number']!r} is not a finite number")
    unit = match["unit"]
    if unit is not None:
        factors = UNIT_FACTORS.get(declared_unit, {})
        if unit not in factors:
            allowed = f"one of {', '.join(factors)} or none" if factors else unitless
            raise ValueError(f"unit {unit!r} does not fit {shown}: use {allowed}")
        threshold *= factors[unit]
    return threshold


_READING = re.compile(r"\s*bound\s*(?:\[(?P<variant>[^\[\]]+)\])?\s*==\s*(?P<reading>\w+)\s*")
READING_EXAMPLES = "'bound == device', 'slack_s[host] >= 1ms', 'slack_share[host] >= 20%' or 'ceiling[host] <= 1.10'"


def bound_check(text: str, workload: Workload | None = None) -> Expectation:
    """A check on what bounds the step (verdicts.bound_checks): the reading, a side's slack or share, the ceiling;
    its side (or the reading) in `at`, a variant optional, held to `workload`'s variants where one is given (a
    results file's stored check is read back without its workload: session.check_held)."""
    readings = ", ".join(str(r) for r in READINGS)
    if text.strip().startswith(READING) and not text.strip().startswith(f"{READING}_"):
        reading = _READING.fullmatch(text)
        if reading is None:
            raise ValueError(f"malformed check {text!r}: the reading is compared with ==, one of {readings} (bound == device)")
        word = reading["reading"]
        if word not in readings.split(", "):
            raise ValueError(f"unknown reading {word!r}{suggestion(word, readings.split(', '))}: bound == one of {readings}")
        variant = reading["variant"]
        if variant is not None:
            variant = variant.strip().removeprefix("variant=").strip()
            _known_variant(variant, workload)
        return Expectation(text=text.strip(), quantity=READING, op="==", threshold=0.0, variant=variant, at=word)
    match = _CHECK.fullmatch(text)
    if match is None:
        raise ValueError(f"malformed check {text!r}: expected QUANTITY[SIDE] OP NUMBER, {READING_EXAMPLES}")
    quantity = match["quantity"]
    sides = ", ".join(str(side) for side in SIDES)
    if match["stat"] is not None:
        raise ValueError(f"{quantity} has no statistics (.{match['stat']}): it is read from the fit of the perturbation rounds")
    if match["op"] == "==":
        raise ValueError(f"malformed check {text!r} (comparisons are <, <=, > and >=; == is for the reading: bound == device)")
    side, variant = None, None
    for part in (match["variant"] or "").split(",") if match["variant"] is not None else ():
        label, _, named = part.partition("=") if "=" in part else ("", "", part)
        label, named = label.strip(), named.strip()
        if label not in ("", "side", "variant"):
            raise ValueError(f"unknown {label!r}= in {quantity}[...]: parts are a side ({sides}) and a variant (variant=NAME)")
        if label == "side" or (not label and named in sides.split(", ")):
            if named not in sides.split(", "):
                raise ValueError(f"unknown side {named!r}{suggestion(named, sides.split(', '))}; sides: {sides}")
            if side is not None:
                raise ValueError(f"{quantity}[{match['variant']}] names more than one side")
            side = named
        else:
            if variant is not None or not named:
                raise ValueError(f"{quantity}[{match['variant']}]: name one side ({sides}) and at most one variant")
            if not label and workload is not None and not _variant_known(workload, named):
                raise ValueError(
                    f"unknown side {named!r}{suggestion(named, sides.split(', '))} in {quantity}[...]: sides: {sides}"
                    + (f"; variants of {workload.name}: {', '.join(workload.variants)}" if workload.variants else "")
                )
            _known_variant(named, workload)
            variant = named
    if quantity == CEILING:
        if side not in (None, str(Side.HOST)):
            raise ValueError(f"ceiling[{side}]: the ceiling is of cutting host work (ceiling[host]); the device's is not measured")
        side = str(Side.HOST)
    elif side is None:
        raise ValueError(f"{quantity} needs its side: {quantity}[host] or {quantity}[device] ({READING_EXAMPLES})")
    unit = BOUND_UNITS[quantity]
    if quantity == SLACK_SHARE and match["unit"] != "%":
        raise ValueError(f"{quantity} is a share of the step: write it with its % ({quantity}[{side}] >= 20%)")
    threshold = _threshold(match, unit, f"{quantity} (unit {unit})", "a plain number")
    if quantity == CEILING and threshold < 1:
        raise ValueError(f"a ceiling of {match['number']}: it is a speed-up, at least 1 (ceiling[host] <= 1.10: at most 10% faster)")
    if quantity != CEILING and threshold < 0:
        raise ValueError(f"a slack of {match['number']}{match['unit'] or ''}: a slack is at least 0")
    # a threshold check is judged at a delay of its level (verdicts.bound_levels): a level of 0 injects nothing
    if quantity != CEILING and threshold == 0:
        raise ValueError("a slack of 0: every side has at least that; the check injects a delay of its threshold, so name one above 0")
    if quantity == CEILING and threshold == 1:
        raise ValueError(
            "a ceiling of 1: it is judged at a device delay of (1 − 1/ceiling) of the step, none at 1; "
            "name one above 1 (ceiling[host] <= 1.05)"
        )
    if quantity == SLACK_SHARE and threshold > 1:
        raise ValueError(f"a share of {match['number']}%: a side's slack is at most the step (100%)")
    return Expectation(text=text.strip(), quantity=quantity, op=match["op"], threshold=threshold, variant=variant, at=side)


def _known_variant(name: str, workload: Workload | None) -> None:
    if workload is not None and not _variant_known(workload, name):
        raise ValueError(
            f"{workload.name} has no variant {name!r}{suggestion(name, list(workload.variants))}; variants: {', '.join(workload.variants)}"
        )
