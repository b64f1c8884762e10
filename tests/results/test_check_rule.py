"""A stored check is held, when its file is read, to the rule that judged it (results.check_rule): the verdict its own
interval (or its one measurement) gives against the threshold its text states, and the threshold its detail says."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import pytest

from asyncbench.errors import InputError
from asyncbench.results import records, stats
from asyncbench.results.fields import At
from asyncbench.results.model import OK, Result, Samples, VariantResult, Verdict
from asyncbench.spec import expect
from asyncbench.verdicts import checks
from asyncbench.workloads import BUILT_IN

SYNC_ASYNC = BUILT_IN["sync_async"]
SYNC_S, ASYNC_S = (1.0, 1.1, 0.9, 1.05, 0.95, 1.0), (0.5, 0.6, 0.4, 0.55, 0.45, 0.5)
#: the speedup's 95% interval its rounds give (their ratios: 1.83 to 2.25, median 2), as a reader recomputes it
#: (results.workload_figures)
SPEEDUP_BOUNDS = stats.median_ci([s / a for s, a in zip(SYNC_S, ASYNC_S, strict=True)])
#: one of each kind of check `run` writes on this result, and the verdict it gets
CHECKS = {
    "speedup >= 1.5": Verdict.PASS,  # a metric's interval [1.83, 2.25]
    "speedup >= 2.5": Verdict.FAIL,
    "speedup >= 2.1": Verdict.INCONCLUSIVE,  # straddles
    "done_s.median[sync] < 2s": Verdict.PASS,  # a clock's median: its samples' interval
    "done_s.median < 800ms": Verdict.FAIL,  # every variant: the worst (sync's)
    "done_s.max[async] < 500ms": Verdict.FAIL,  # a statistic of the samples: one measurement
    "done_s.min[sync] > 0.5s": Verdict.PASS,
    "issue_s.median[sync] < 10ms": Verdict.FAIL,
}


def _result(**metrics: float) -> Result:
    variants = {
        name: VariantResult(Samples(issue_s=samples, done_s=samples), stats.summarize(samples), stats.summarize(samples), None)
        for name, samples in (("sync", SYNC_S), ("async", ASYNC_S))
    }
    result = Result(
        "e[torch,cpu]",
        "e",
        "sync_async",
        "torch",
        "cpu",
        {},
        OK,
        variants=variants,
        metrics={"speedup": 2.0, **metrics},
        bounds={"speedup": SPEEDUP_BOUNDS},
    )
    return SYNC_ASYNC.describe(result, reading=False)


def _stored(texts: list[str], result: Result | None = None) -> dict[str, Any]:
    """`result` (or one of sync_async) with the checks `run` gives it, as its results file stores it."""
    result = result or _result()
    judged = checks.evaluate(tuple(expect.parse(text, SYNC_ASYNC) for text in texts), result)
    return records.result_to_dict(dataclasses.replace(result, checks=judged))


def _read(stored: dict[str, Any]) -> None:
    records.check(stored, At("r.json") / "results" / 0)


def test_every_check_run_writes_is_read_back_with_the_verdict_it_was_given():
    stored = _stored(list(CHECKS))
    assert [check["verdict"] for check in stored["checks"]] == [str(verdict) for verdict in CHECKS.values()]
    _read(stored)
    assert records.result_from_dict(stored).checks == checks.evaluate(tuple(expect.parse(t, SYNC_ASYNC) for t in CHECKS), _result())


@pytest.mark.parametrize("text", list(CHECKS))
def test_a_verdict_its_own_numbers_do_not_give_is_refused_naming_its_key(text):
    stored = _stored([text])
    given = Verdict(stored["checks"][0]["verdict"])
    for other in (Verdict.PASS, Verdict.FAIL):
        if other == given:
            continue
        stored["checks"][0]["verdict"] = str(other)
        with pytest.raises(InputError, match=rf"r\.json: results\[0\]\.checks\[0\]\.verdict: '{other}' is not the verdict of its"):
            _read(stored)


def test_an_undecided_check_turned_into_a_pass_is_refused_where_its_quantity_is_judged_from_an_interval():
    stored = _stored(["speedup >= 2.1"])  # INCONCLUSIVE: [1.83, 2.25] straddles 2.1
    stored["checks"][0].update(verdict="pass", bounds=None)  # and its interval dropped, so no interval contradicts it
    with pytest.raises(InputError, match=r"checks\[0\]\.bounds: a 'pass' of 'speedup' with no interval"):
        _read(stored)
    median = _stored(["done_s.median[sync] < 2s"])
    del median["checks"][0]["bounds"]
    with pytest.raises(InputError, match=r"checks\[0\]\.bounds: a 'pass' of 'done_s' with no interval"):
        _read(median)


def test_a_metric_without_an_interval_is_judged_at_its_one_measurement():
    result = _result(t1_s=0.4)  # a metric the result has no interval of
    stored = _stored(["t1_s >= 0.3"], result)
    assert stored["checks"][0]["verdict"] == "pass"
    assert "bounds" not in stored["checks"][0]
    _read(stored)
    stored["checks"][0]["verdict"] = "fail"
    with pytest.raises(InputError, match=r"'fail' is not the verdict of its one measurement 0\.4 against 't1_s >= 0\.3' \('pass'\)"):
        _read(stored)


def test_a_check_whose_text_states_another_threshold_than_its_detail_is_refused():
    """The trial's edit: `slowdown_k1 <= 3` turned `<= 0.5`, its detail still saying it was judged at 3.00×."""
    stored = _stored(["speedup >= 1.5"])
    assert "expected >= 1.50×" in stored["checks"][0]["detail"]
    stored["checks"][0]["expect"] = "speedup >= 1.2"  # still a pass of [1.83, 2.25]: only the detail contradicts it
    with pytest.raises(
        InputError,
        match=r"checks\[0\]\.expect: 'speedup >= 1\.2': its detail says it was judged against another threshold \('expected >= 1\.50×'\)",
    ):
        _read(stored)
    stored["checks"][0]["expect"] = "speedup <= 1.5"
    with pytest.raises(InputError, match=r"checks\[0\]\.expect"):
        _read(stored)


@pytest.mark.parametrize("expect", ["t1_s <= 1e30", "t1_s <= 1e30s", "t1_s >= 1e-30s"])
def test_a_threshold_past_plain_digits_reads_back_in_e_notation(expect):
    """A threshold whose plain digits run past units.PLAIN_MAX_CHARS is written `expected <= 1.00e+30 s`: the file
    reads back (it was refused as "judged against another threshold ('expected <= 1.00e+30')"), and an edit of it
    is still refused."""
    stored = _stored([expect], _result(t1_s=0.4))
    assert re.search(r"expected [<>]= 1\.00e[-+]\d\d", stored["checks"][0]["detail"]), stored["checks"][0]["detail"]
    _read(stored)
    stored["checks"][0]["expect"] = expect.replace("30", "29")
    with pytest.raises(InputError, match=r"checks\[0\]\.expect"):
        _read(stored)


@pytest.mark.parametrize(
    ("text", "value", "bounds", "detail"),
    [
        ("speedup >= 20", 16.0, [15.2, 16.4], "speedup = 16.0× [15.2–16.4], expected >= 20.0× (short by 20%)"),  # an older rendering
        (
            "done_s.median < 10ms",
            1.0,
            [0.9, 1.1],
            "done_s.median[sync] = 1.00 s [0.9–1.1] (95% interval), expected < 10.0 ms (100× the threshold)",
        ),
        ("gflops >= 47", 16.0, [15.0, 17.0], "gflops = 16 GFLOP/s [15–17], expected >= 47 GFLOP/s (short by 66%)"),
        ("overlap >= 30%", 0.2, [0.15, 0.25], "overlap = 20% [15%–25%], expected >= 30.0%"),
        ("ratio <= 0.333", 1.0, [0.9, 1.1], "ratio = 1.00× [0.9–1.1], expected <= 0.33× (3.0× the threshold)"),  # two decimals
        ("syncs_per_step == 0", 2.0, [2.0, 2.0], "syncs_per_step = 2 [2–2] (95% interval), expected == 0; waits at x.py:3"),
    ],
)
def test_a_detail_states_its_threshold_as_rounded_as_the_verdicts_render_it(text, value, bounds, detail):
    stored = _stored([])
    quantity, _, stat = text.split()[0].partition(".")
    if quantity in stored["metrics"]:  # a check's value is its case's own figure (results.case_held): the detail is what is tested
        value = stored["metrics"][quantity]
    elif stat:
        value = next(iter(stored["variants"].values()))[quantity][stat]
    stored["checks"] = [{"expect": text, "verdict": "fail", "value": value, "bounds": bounds, "detail": detail}]
    _read(stored)


def test_a_check_on_the_bound_is_judged_by_its_delay_not_its_threshold():
    """`slack_s[host] >= 1ms` is read from the slowdown a 1 ms delay caused (40-60 µs here, within a tenth of it: a
    pass), not from that interval against 1 ms (verdicts.bound_checks)."""
    stored = _stored([])
    stored["checks"] = [
        {"expect": "slack_s[host] >= 1ms", "verdict": "pass", "value": 5e-05, "bounds": [4e-05, 6e-05], "detail": "slack_s[host]: ..."}
    ]
    _read(stored)


def test_a_census_of_a_synchronous_backend_is_its_measured_zero():
    stored = _stored([])
    check = {"expect": "syncs_per_step == 0", "verdict": "pass", "value": 0.0, "detail": "syncs_per_step = 0 (numpy), expected == 0"}
    stored["checks"] = [check]
    _read(stored)
    check["verdict"] = "fail"
    with pytest.raises(InputError, match=r"'fail' is not the verdict of its one measurement 0 against 'syncs_per_step == 0' \('pass'\)"):
        _read(stored)


@pytest.mark.parametrize(
    "text",
    ["speedup >= banana", "speedup >= 1.5 --strict; rm -rf /", "done_s.median[sync] < soon", "syncs_per_step <= lots", "speedup"],
)
def test_a_stored_check_whose_text_does_not_parse_is_refused_whatever_its_verdict(text):
    """A metric's, a clock's or a census's check whose text spec.expect's grammar does not split was judged of no
    threshold: it was read back, and shown with its verdict ("pass"), where one that parses is held to its rule."""
    for verdict in ("pass", "fail", "inconclusive", "not measured"):
        stored = _stored(["speedup >= 1.5"])
        stored["checks"][0].update(expect=text, verdict=verdict)
        with pytest.raises(InputError, match=r"r\.json: results\[0\]\.checks\[0\]\.expect: .* is no check a run judges"):
            _read(stored)
