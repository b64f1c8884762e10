"""A stored `--bound-verify` verification is made again from its stored figures on reading (session.reading
.reverified, verdicts.verified.rebuilt): a note whose figures were edited ("it saved 664 µs" → "9.99 s") is shown as
the tool writes it from the stored pairs, never as the file wrote it; a genuine file renders exactly as before, and
a refused capture's reason and torch.compile's graph-break caveat (the backend's words) are kept as stored. A bound
read host- or device-bound is fitted again from its stored observations (the rule reads an interval the file does
not store): an inconclusive bound edited to `host` shows as inconclusive."""

from __future__ import annotations

import dataclasses
import json
import statistics
from pathlib import Path
from typing import Any

import pytest

from asyncbench.report import bound as rendering
from asyncbench.results import stats
from asyncbench.results.bound import Bound, BoundKind
from asyncbench.results.model import Result, Samples, VariantResult
from asyncbench.results.schema import Report
from asyncbench.session import reading
from asyncbench.verdicts import bound as fitting
from asyncbench.verdicts import verified
from tests.results.test_bound_held import BREAKS, _fitted, _no_interval, _pairs
from tests.support.bounds import host_bound, result_with
from tests.support.helpers import report_of


def _result(bound: Bound, step_s: float) -> Result:
    """An ok result holding `bound`, its variant's timed samples of `step_s` a step."""
    values = tuple(step_s * (1 + i / 1000) for i in range(12))
    timed = VariantResult(Samples(values, values), stats.summarize(values), stats.summarize(values), None)
    result = result_with(bound)
    return dataclasses.replace(result, variants={**result.variants, bound.variant: timed})


def _written(bound: Bound, pairs, how: str, caveat: str | None, step_s: float, refused: str | None = None) -> tuple[Result, Bound]:
    """The result as `run` writes it: its verification by the real writer, with the timed step of its samples."""
    bound = dataclasses.replace(bound, variant="a")
    result = _result(bound, step_s)
    timed = statistics.median(result.variants["a"].samples.done_s) / bound.steps_per_call
    found = verified.verified(how, pairs, bound, refused, timed_step_s=timed, caveat=caveat)
    checked = dataclasses.replace(bound, verified=found)
    return dataclasses.replace(result, bound={"a": checked}), checked


def _raw(result: Result) -> dict[str, Any]:
    return json.loads(report_of([result]).to_json())


def _loaded(raw: dict[str, Any], tmp_path: Path) -> Bound:
    path = tmp_path / "r.json"
    path.write_text(json.dumps(raw))
    [result] = reading.load_results(path).results
    return result.bound["a"]


CASES = [
    (host_bound("a"), _pairs(0.001, 0.00076), "jit", None, 0.001),  # no note
    (host_bound("a"), _pairs(0.001, 0.0005), "compile", None, 0.001),  # faster than the floor
    (host_bound("a"), _pairs(0.001, 0.0011), "jit", None, 0.001),  # slower than the plain step
    (host_bound("a"), _pairs(0.001, 0.00076), "compile", BREAKS, 0.001),
    (host_bound("a"), _pairs(0.001, 0.00076), "compile", BREAKS, 0.0004),  # the caveat, then the disturbed step
    (host_bound("a"), _pairs(0.001, 0.00076), "jit", None, 0.0004),  # the plain step disturbed
    (_fitted(30, 9, host=1.0, device=0.6), _pairs(0.001, 0.0009), "jit", None, 0.001),  # no device slack
    (_fitted(3, 10), _pairs(0.001, 0.0009), "jit", None, 0.001),  # not judged: no interval
    (_no_interval(host_bound("a")), _pairs(0.001, 0.0009), "graph", None, 0.001),
]


@pytest.mark.parametrize("bound, pairs, how, caveat, step_s", CASES)
def test_a_genuine_verification_renders_exactly_as_written(bound, pairs, how, caveat, step_s, tmp_path):
    result, written = _written(bound, pairs, how, caveat, step_s)
    loaded = _loaded(_raw(result), tmp_path)
    assert loaded.verified is not None
    assert written.verified is not None
    assert loaded.verified.note == written.verified.note
    assert rendering.verified(loaded.verified) == rendering.verified(written.verified)
    assert loaded.verified.past_floor == written.verified.past_floor
    if caveat is not None:
        assert caveat in (loaded.verified.note or "")


def test_a_refused_captures_reason_is_kept_as_stored(tmp_path):
    result, written = _written(host_bound("a"), (), "graph", None, 0.001, refused="not graphed: CUDA graphs need a CUDA device")
    assert _loaded(_raw(result), tmp_path).verified == written.verified


def _slack_reaching_zero() -> Bound:
    """A bound whose device slack's interval reaches 0: the note says the saving in time, 'it saved … a step'."""
    bound = host_bound("a")
    host, device = bound.sides
    return dataclasses.replace(
        bound,
        bound=BoundKind.INCONCLUSIVE,
        sides=(host, dataclasses.replace(device, slack_ci_s=(0.0, 0.0007))),
        ceiling_ci=(1.0, 0.001 / (0.001 - 0.0007)),
    )


def test_edited_figures_in_a_note_are_shown_as_the_stored_pairs_give_them(tmp_path):
    result, written = _written(_slack_reaching_zero(), _pairs(0.001, 0.000334), "jit", None, 0.001)
    assert written.verified is not None
    assert written.verified.note is not None
    genuine = written.verified.note
    assert "it saved 664 µs" in genuine
    raw = _raw(result)
    stored = raw["results"][0]["bound"]["a"]["verified"]
    stored["note"] = genuine.replace("it saved 664 µs", "it saved 9.99 s")
    loaded = _loaded(raw, tmp_path)
    assert loaded.verified is not None
    assert loaded.verified.note == genuine
    assert "9.99 s" not in rendering.verified(loaded.verified)


def test_edited_sides_medians_are_shown_as_the_stored_pairs_give_them(tmp_path):
    result, written = _written(host_bound("a"), _pairs(0.000347, 0.000499), "compile", BREAKS, 0.000349)
    assert written.verified is not None
    assert written.verified.note is not None
    genuine = written.verified.note
    assert "captured 501 µs vs plain 349 µs" in genuine
    raw = _raw(result)
    raw["results"][0]["bound"]["a"]["verified"]["note"] = genuine.replace(
        "captured 501 µs vs plain 349 µs", "captured 100 µs vs plain 900 µs"
    )
    loaded = _loaded(raw, tmp_path)
    assert loaded.verified is not None
    assert loaded.verified.note == genuine
    assert BREAKS in genuine


def _inconclusive() -> Bound:
    """A genuine fit that reads inconclusive: host 100% and device 85% of the step, six noisy rounds."""
    from tests.verdicts.test_bound import STEPS, planted

    observations, _ = planted(1.0, 0.85, rounds=6, seed=1, noise=0.1)
    fitted = fitting.fit("a", observations, True, steps_per_call=STEPS)
    assert fitted.bound == BoundKind.INCONCLUSIVE
    return fitted


@pytest.mark.parametrize("kind", ["host", "device"])
def test_an_inconclusive_bound_edited_to_host_or_device_shows_as_its_observations_read(kind, tmp_path):
    raw = _raw(result_with(_inconclusive()))
    raw["results"][0]["bound"]["a"]["bound"] = kind  # which the sides' intervals alone cannot refute
    assert _loaded(raw, tmp_path).bound == BoundKind.INCONCLUSIVE


@pytest.mark.parametrize("host, device", [(1.0, 0.6), (0.6, 1.0)])
def test_a_genuine_host_or_device_bound_reads_as_written(host, device, tmp_path):
    fitted = _fitted(30, 4, host=host, device=device)
    assert fitted.bound in (BoundKind.HOST, BoundKind.DEVICE)
    stored = Report.from_dict(_raw(result_with(fitted)), "r.json").results[0].bound["a"]
    # as written, with the interval of the paired difference its reading was read from, which the file does not store
    # and the reader's refit makes again
    assert _loaded(_raw(result_with(fitted)), tmp_path) == dataclasses.replace(stored, difference_ci=fitted.difference_ci)
