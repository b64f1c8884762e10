"""A stored case held to what `run` can have written of it: its keys, its identity, its status and its checks' figures.

`records.check` holds each field of a result to its vocabulary, and `check_rule` each check's verdict to its own
interval; a hand edit can still make a file say what no run writes, and `show` would print it as measured:

- a key no schema version has written (a misspelled `reaosn`, a made-up `verified_by`): the schema documents no
  forward-compatible extra keys, and a newer file is refused by its version, so an unknown key is an edit;
- an id that names another backend, device or param value than the fields beside it (`mm[jax,cpu,size=64]` with
  `backend: torch`, or `params.size: 4096`): the id is what `compare` and the history match runs by, the fields what
  `show` prints, so the two would tell two cases apart as one; and an id that is not the one its experiment,
  backend, device and params make (`other[numpy,cpu]` or `x` beside experiment `sync_async`), which would put its
  numbers into another case's history series;
- an errored or skipped case with no reason: `run` always says why a case did not measure;
- a check's figures that are not its case's: its `value` the case's own figure (a metric's value, a clock's
  statistic), its interval one of the same rounds as the metric's stored 95% one (an interval at a higher level of
  the same median contains it), its `confidence` a level `run` judges at (95% alone, or at least 1 − the run's
  `family_error`, which a check's share of it only raises), and its detail's `(99.99% interval)` that confidence.
- in a file of the current schema version, a check's interval where the file keeps the rounds `run` took it from
  (a step form's per-round metric, a clock's samples): exactly the one they give at its confidence
  (`interval_recomputed`), not merely one that holds the case's own 95% interval;
- checks that state different `family_error`s: the checks of one run share one false-alarm rate.

Each is refused in one line naming the file and the key (results.fields.At).
"""

from __future__ import annotations

import math
import re
from typing import Any, Mapping, Sequence

from asyncbench.results import check_detail, recordable, round_held, stats, step_figures, units
from asyncbench.results.check_rule import CHECK
from asyncbench.results.fields import At
from asyncbench.results.model import CLOCKS, Settings, Status
from asyncbench.results.plan import Experiment
from asyncbench.results.stats import CONFIDENCE

#: every key a results file's top level has held, in any schema version (schema.Report.to_dict; `shard` from 8)
TOP_KEYS = frozenset(
    {"schema_version", "tool", "created", "run_id", "interrupted", "environment", "config", "shard", "metric_info", "results"}
)
#: every key a stored result has held, in any schema version (records.result_to_dict)
CASE_KEYS = frozenset(
    {
        "id",
        "experiment",
        "workload",
        "backend",
        "device",
        "params",
        "status",
        "reason",
        "variants",
        "metrics",
        "bounds",
        "checks",
        "note",
        "sampling",
        "unavailable",
        "asynchronous",
        "warnings",
        "traces",
        "trace_detail",
        "metric_info",
        "reading",
        "case_s",
        "machine",
        "harness",
        "reference",
        "syncs",
        "bound",
    }
)
#: a figure stored twice (a check's value beside its metric's) is the same float written twice: this far apart
#: (relative) is an edit, not a rounding
SAME_FIGURE = 1e-9
#: how a check's detail names the level of its interval (verdicts.checks._judge: "(99.99% interval)")
_LEVEL = re.compile(r"\((?P<level>\d+(?:\.\d+)?%) interval\)")


def known_keys(raw: Mapping[str, Any], known: frozenset[str], at: At, needed: Sequence[str] = ()) -> None:
    """InputError naming the first key of `raw` that no schema version writes; with those of `needed` it lacks (a
    key renamed: `done_ms` where `done_s` was), which a reader would otherwise call missing without the key it found."""
    for key in raw:
        if key not in known:
            lacking = [name for name in needed if name not in raw]
            instead = f"; {', '.join(map(repr, lacking))} missing" if lacking else ""
            (at / str(key)).fail(f"{str(key)[:80]!r} is no key any results schema writes (docs/reference/results-schema.md){instead}")


def identity_held(result: Mapping[str, Any], at: At) -> None:
    """The id is `experiment[backend,device,param=value...]` (plan.Experiment.case_id) of the fields beside it:
    its backend and device theirs, each param it names with the value `params` holds, and nothing else: its
    experiment's name, the params it names in `params`' order (those swept or off their default: which, the file
    does not say), no other text. An id that names another case (`other[numpy,cpu]` beside experiment `sync_async`)
    puts its numbers into that case's history series, as `compare` and the history match runs by id."""
    case_id = str(result.get("id"))
    backend, device = str(result.get("backend")), str(result.get("device"))
    params = result.get("params") or {}
    _, bracket, inside = case_id.partition("[")
    # one bracketed part at the end, or the id as a whole is what is wrong (the last check, below): a second `[`
    # read its backend as '' (`names backend ''`)
    bracket = bracket if inside.endswith("]") and "[" not in inside else ""
    parts = inside[:-1] if bracket else ""
    said_backend, _, rest = parts.partition(",")
    said_device, _, rest = rest.partition(",")
    if bracket and said_backend != backend:
        (at / "backend").fail(f"{backend!r}, but its id {case_id!r} names backend {said_backend!r}")
    if bracket and said_device != device:
        (at / "device").fail(f"{device!r}, but its id {case_id!r} names device {said_device!r}")
    for key, value in params.items():
        said = re.search(rf"(?:^|,){re.escape(str(key))}=", parts)
        if said is None:
            continue
        shown = f"{key}={units.param(value)}"
        if not parts[said.start() :].lstrip(",").startswith(shown):
            (at / "params" / str(key)).fail(f"{value!r:.80}, but its id {case_id!r} names another {key}")
    experiment = str(result.get("experiment"))
    named = _named_params(case_id, f"{experiment}[{backend},{device}", params)
    # the writer's own id of these fields, naming the params the id names (as the swept ones, the rest at default)
    swept = {name: () for name in named}
    written = Experiment(experiment, "", (), (), params, Settings(), sweep=swept).case_id(backend, device, params, params)
    if case_id != written:
        form = f"{experiment}[{backend},{device}{',key=value…' if params else ''}]"
        (at / "id").fail(
            f"{case_id[:120]!r} is not an id its experiment, backend, device and params make ({form[:120]!r}: those of "
            f"its params swept or off their default, in their order): {recordable.NOT_WRITTEN}"
        )


def _named_params(case_id: str, head: str, params: Mapping[str, Any]) -> frozenset[str]:
    """The params `case_id` names after `head` (`experiment[backend,device`), each as `,key=value` of `params` in
    their order (one it does not name is passed over: at its default); the id is then compared whole."""
    if not case_id.startswith(head):
        return frozenset()
    rest, named = case_id[len(head) :], set[str]()
    for key, value in params.items():
        shown = f",{key}={units.param(value)}"
        if rest.startswith(shown) and rest[len(shown) : len(shown) + 1] in (",", "]"):
            rest, named = rest[len(shown) :], named | {str(key)}
    return frozenset(named)


def status_held(result: Mapping[str, Any], at: At) -> None:
    """An errored or skipped case says why (`run` stores the error, or the reason it skipped)."""
    if result.get("status") in (Status.ERROR, Status.SKIPPED) and not str(result.get("reason") or "").strip():
        (at / "reason").fail(f"a case with status {result.get('status')!r} and no reason: a run always says why a case did not measure")


def check_figures_held(check: Mapping[str, Any], at: At, result: Mapping[str, Any]) -> None:
    """A stored check's confidence, value and interval are what `run` judged it from (the module's docstring)."""
    confidence, family_error = check.get("confidence"), check.get("family_error")
    if confidence is not None and not isinstance(confidence, bool):
        least = CONFIDENCE if family_error is None else 1 - float(family_error)
        if not least - SAME_FIGURE <= float(confidence) < 1:
            why = "95% alone" if family_error is None else f"at least 1 − its family_error {family_error:g}"
            (at / "confidence").fail(f"{confidence!r} is no level a check is judged at ({why}, below 1)")
        said = _LEVEL.search(str(check.get("detail") or ""))
        levels = (units.exact_confidence(float(confidence)), units.confidence(float(confidence)))  # as written now, before
        if said is not None and check.get("bounds") is not None and said["level"] not in levels:
            (at / "detail").fail(f"it says a {said['level']} interval, its confidence is {float(confidence)!r}")
    match = CHECK.fullmatch(str(check.get("expect") or ""))
    value = check.get("value")
    if match is None or value is None or isinstance(value, bool):
        return
    quantity, stat, variant = match["quantity"], match["stat"], match["variant"]
    metrics = result.get("metrics") or {}
    if stat is None and variant is None and quantity in metrics:
        figures = [metrics[quantity]]
        stored = (result.get("bounds") or {}).get(quantity)
    elif quantity in CLOCKS and stat is not None:
        variants = result.get("variants") or {}
        chosen = [variants[variant]] if variant in variants else list(variants.values()) if variant is None else []
        summaries: list[Mapping[str, Any]] = [
            v[quantity] for v in chosen if isinstance(v, Mapping) and isinstance(v.get(quantity), Mapping)
        ]
        figures = [s.get(stat) for s in summaries]
        stored = [summaries[0].get("ci_low"), summaries[0].get("ci_high")] if len(summaries) == 1 and stat == "median" else None
    else:
        return  # a census or bound figure, or a quantity the case lacks: not measured, nothing to compare
    if not any(_same(value, figure) for figure in figures):
        (at / "value").fail(f"{value!r} is not the case's {check.get('expect')!r} figure ({', '.join(f'{f!r}' for f in figures)})")
    bounds = check.get("bounds")
    if bounds is None or stored is None or None in stored or confidence is None or float(confidence) < CONFIDENCE:
        return
    slack = SAME_FIGURE * max(abs(float(stored[0])), abs(float(stored[1])))
    if float(bounds[0]) > float(stored[0]) + slack or float(bounds[1]) < float(stored[1]) - slack:
        (at / "bounds").fail(
            f"[{float(bounds[0]):g}, {float(bounds[1]):g}] at {units.confidence(float(confidence))} does not hold the case's own 95% "
            f"interval [{float(stored[0]):g}, {float(stored[1]):g}] of the same median: no interval of its rounds"
        )


def intervals_recomputed(result: Mapping[str, Any], at: At) -> None:
    """Each stored check of `result` (checked field by field before) held to `interval_recomputed`: only in a file of
    the current schema version, as its details are (an older version took intervals by older rules: version 5
    wrote a 99.9% one from 6 rounds, [min, max], where the current rule gives none)."""
    checks = result.get("checks")
    for index, check in enumerate(checks if isinstance(checks, list) else []):
        if isinstance(check, Mapping):
            interval_recomputed(check, at / "checks" / index, result)


def interval_recomputed(check: Mapping[str, Any], at: At, result: Mapping[str, Any]) -> None:
    """InputError naming the check's `bounds` where its stored rounds give its interval exactly and it is another:
    `run` takes a check's interval as stats.median_ci of the rounds at its confidence (verdicts.checks._interval,
    widened by the rounds' own dependence), so where the file keeps those rounds the interval is theirs. Kept: a
    step form's metric's per-round values (step_figures.metric_rounds) and a clock's samples (a `per step` check's
    divided by its steps, as session.step_measurement judges it, or as stored: the file keeps a sample's clocks);
    where the file keeps neither (another workload's metric, samples not stored), only the containment of
    check_figures_held holds it."""
    bounds, confidence = check.get("bounds"), check.get("confidence")
    match = CHECK.fullmatch(str(check.get("expect") or ""))
    if bounds is None or match is None or confidence is None or isinstance(confidence, bool) or not 0 < float(confidence) < 1:
        return
    quantity, stat, variant = match["quantity"], match["stat"], match["variant"]
    candidates: list[list[tuple[float, float]]]
    if stat is None and variant is None and quantity in (result.get("metrics") or {}):
        candidates = [rounds] if (rounds := step_figures.metric_rounds(result).get(quantity)) else []
    elif quantity in CLOCKS and stat in (None, "median"):  # a clock named alone is its median (spec.expect)
        steps = {1, check_detail.steps_said(str(check.get("detail") or "")) or 1}  # per step or per sample: either
        variants = result.get("variants") or {}
        chosen = [variants[variant]] if variant in variants else list(variants.values()) if variant is None else []
        candidates = [
            [(float(sample) / each, round_held.SAMPLE_ROUNDING_S / each) for sample in samples]
            for one in chosen
            if isinstance(one, Mapping) and (samples := (one.get("samples") or {}).get(quantity))
            for each in sorted(steps)
        ]
    else:
        return  # a census or bound figure: its rounds are judged elsewhere
    if not candidates:
        return  # the rounds are not in the file: nothing to recompute the interval from
    low, high = float(bounds[0]), float(bounds[1])
    given = []
    for rounds in candidates:
        interval = stats.median_ci([value for value, _ in rounds], float(confidence))
        if interval is None:
            given.append(f"none from {len(rounds)} rounds")
            continue
        room = max(error for _, error in rounds) + SAME_FIGURE * max(abs(interval[0]), abs(interval[1]))
        if abs(interval[0] - low) <= room and abs(interval[1] - high) <= room:
            return
        given.append(f"[{interval[0]:g}, {interval[1]:g}]")
    (at / "bounds").fail(
        f"[{low:g}, {high:g}] is not the {units.confidence(float(confidence))} interval its stored rounds give "
        f"({' or '.join(given)}): {recordable.NOT_WRITTEN}"
    )


def family_error_shared(results: Any, at: At) -> None:
    """InputError naming the first check whose `family_error` is not the one the file's other checks state: the
    checks of one run share one family-wise false-alarm rate (results.budget; a merged shard's checks the whole
    plan's, results.shards), which the exit summary says they share. Each result is checked field by field before."""
    first: tuple[float, str] | None = None
    for index, result in enumerate(results if isinstance(results, list) else []):
        checks = result.get("checks") if isinstance(result, Mapping) else None
        for place, check in enumerate(checks if isinstance(checks, list) else []):
            error = check.get("family_error") if isinstance(check, Mapping) else None
            if error is None or isinstance(error, bool):
                continue
            if first is None:
                first = (float(error), f"results[{index}].checks[{place}]")
            elif not math.isclose(float(error), first[0], rel_tol=SAME_FIGURE, abs_tol=0.0):
                (at / index / "checks" / place / "family_error").fail(
                    f"{error!r}, but {first[1]} states {first[0]!r}: the checks of one run share one family-wise "
                    f"false-alarm rate: {recordable.NOT_WRITTEN}"
                )


def _same(value: Any, figure: Any) -> bool:
    if not isinstance(figure, (int, float)) or isinstance(figure, bool):
        return False
    return math.isclose(float(value), float(figure), rel_tol=SAME_FIGURE, abs_tol=0.0)
