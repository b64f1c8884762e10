"""The planted corpus for torch on CUDA (stream_sync_corpus.py) on the stream test device, through the runner with the
census on (CaseOptions.syncs, as `run --syncs` sets it): every planted wait found at its line with its kind, its call and
its waits per step, its time blocked about the simulated work it drained, and the sync-free step with none.

The device's waits are real (the host sleeps until the hold kernel ahead has run), so a wait's time is known. A
planted line removed from its step fails its test (test_a_step_without_its_planted_wait_shows_none checks that the
census finds nothing once the wait is gone)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from asyncbench.engine import runner
from asyncbench.engine.measuring import CaseOptions
from asyncbench.results.model import OK, Case, Result, Settings
from asyncbench.results.syncs import SyncKind
from asyncbench.workloads import BUILT_IN
from asyncbench.workloads.base import Workload
from tests.measure import stream_sync_corpus
from tests.measure.stream_sync_corpus import DEBUG_MODE_MISSES, FREE, HOLD_S, PLANTED, StreamCorpus
from tests.support.planted import planted_line
from tests.support.stream_device import StreamSimBackend

pytestmark = pytest.mark.streams

CORPUS = Path(stream_sync_corpus.__file__)
#: six timed rounds: the census takes one after each (six, the fewest with a 95% interval)
SETTINGS = Settings(warmup=1, min_samples=6, max_samples=6, max_time_s=30.0, max_rel_noise=1.0)
#: a wait blocks for the hold ahead of it less the little the host spent issuing it, plus the scheduler's delays in
#: waking the stream's thread and then the host: generous on a loaded 2-core machine, still far from a wait that
#: drained nothing (0) or two holds (2 × HOLD_S)
LOW, HIGH = 0.6 * HOLD_S, 1.8 * HOLD_S


def run_corpus(workload: Workload, device: str = "cuda:0", params: dict[str, Any] | None = None, settings: Settings = SETTINGS) -> Result:
    backend = StreamSimBackend(gpus=1)
    try:
        case = Case(
            id=f"{workload.name}[streamsim,{device}]",
            experiment=workload.name,
            workload=workload.name,
            backend="streamsim",
            device=device,
            params={**workload.defaults(quick=True), **(params or {})},
            settings=settings,
        )
        result = runner.run_case(case, workload, backend, CaseOptions(syncs=True))
    finally:
        backend.close()
    assert result.status == OK, result.reason
    return result


@pytest.fixture(scope="module")
def corpus() -> Result:
    return run_corpus(StreamCorpus())


def test_every_planted_wait_is_found_at_its_line_with_its_kind_call_and_count(corpus):
    for name, expected in PLANTED.items():
        census = corpus.syncs[name]
        assert census.rounds >= 6
        points = [(p.file, p.line, str(p.kind), p.call, p.calls_per_step) for p in census.points]
        want = (str(CORPUS), planted_line(CORPUS, name), expected.kind, expected.call, expected.calls_per_step)
        assert points == [want], f"{name}: {points}"


def test_each_wait_blocks_about_the_simulated_work_it_drained(corpus):
    for name, expected in PLANTED.items():
        (point,) = corpus.syncs[name].points
        per_wait = point.wait_s_per_step / expected.calls_per_step
        assert LOW <= per_wait <= HIGH, f"{name}: {per_wait * 1e3:.1f} ms per wait, {HOLD_S * 1e3:.0f} ms drained"
        assert point.wait_ci_s is not None
        assert point.wait_ci_s[0] <= point.wait_s_per_step <= point.wait_ci_s[1]


def test_the_sync_free_step_shows_no_wait(corpus):
    for name in FREE:
        census = corpus.syncs[name]
        assert census.rounds >= 6
        assert census.points == (), [(p.where, p.call) for p in census.points]
        assert "hooks" in census.coverage


def test_the_corpus_plants_every_kind_and_the_waits_torchs_debug_mode_misses():
    calls = {(p.kind, p.call) for p in PLANTED.values()}
    assert len(calls) >= 8
    assert {p.kind for p in PLANTED.values()} == {str(kind) for kind in SyncKind} - {str(SyncKind.UNKNOWN), str(SyncKind.QUEUE_FULL)}
    assert set(DEBUG_MODE_MISSES) <= set(PLANTED)


class _Unplanted(StreamCorpus):
    """The corpus with its waits taken out of two steps: each queues its work and returns."""

    def setup(self, backend, device, params):
        prepared = super().setup(backend, device, params)
        queued = stream_sync_corpus._queued
        return dataclasses.replace(prepared, variants={"item": queued, "event_wait": queued})


def test_a_step_without_its_planted_wait_shows_none():
    result = run_corpus(_Unplanted())
    assert {name: census.points for name, census in result.syncs.items()} == {"item": (), "event_wait": ()}


#: the fewest rounds a case runs: on the synchronous CPU no census round is taken, whatever the count (25 s at six)
FEWEST = dataclasses.replace(SETTINGS, min_samples=2, max_samples=2, warmup=0)


def test_the_synchronous_cpu_of_the_device_takes_no_census():
    result = run_corpus(StreamCorpus(), device="cpu", settings=FEWEST)
    for census in result.syncs.values():
        assert census.rounds == 0
        assert census.points == ()
        assert "runs synchronously on cpu" in census.coverage


def test_conversion_on_the_device_names_each_variants_own_line_once_per_iteration():
    """The seeds' conversion workload, as torch on CUDA runs it: `.item()`, `.numpy()` (to_host, a wait reached inside
    the backend) and `print` each wait once per iteration at their lines in workloads/conversion.py, and every
    variant once more at its final `.item()`."""
    from asyncbench.workloads import conversion

    result = run_corpus(BUILT_IN["conversion"], params={"size": 64, "n_iter": 4})
    source = str(Path(conversion.__file__))
    lines = Path(source).read_text().splitlines()

    def line(text: str, after: str) -> int:
        start = next(i for i, t in enumerate(lines) if after in t)
        return next(i for i, t in enumerate(lines[start:], start + 1) if text in t)

    loops = {
        "item": (line("y[0, 0].item()", "def run_item()"), SyncKind.CONVERSION, "streamsim.Array.item"),
        "numpy": (line("to_host(y)", "def run_numpy()"), SyncKind.CONVERSION, "to_host → streamsim.Array.host_values"),
        "print": (line("print(y[0, :PRINTED_ELEMENTS], file=sink)", "def run_print()"), SyncKind.PRINT, "streamsim.Array.__str__"),
    }
    for variant, census in result.syncs.items():
        final = line("return y[0, 0].item()", f"def run_{variant}()")
        found = {(p.line, p.kind, p.call.rpartition(".StreamSimBackend.")[2], p.calls_per_step) for p in census.points}
        expected = {(final, SyncKind.CONVERSION, "streamsim.Array.item", 1)}
        if variant in loops:
            at, kind, call = loops[variant]
            expected.add((at, kind, call, 4))
        assert found == expected, variant
        assert {p.file for p in census.points} == {source}


def test_barrier_on_the_device_names_its_device_wait_and_its_stream_wait():
    from asyncbench.workloads import barrier

    result = run_corpus(BUILT_IN["barrier"], params={"size": 64, "background_ops": 4})
    source = str(Path(barrier.__file__))
    lines = Path(source).read_text().splitlines()
    start = next(i for i, t in enumerate(lines) if "def run_waitall" in t)
    waitall_line = next(i for i, t in enumerate(lines[start:], start + 1) if t.strip() == "backend.barrier(device)")
    wait_one_line = next(i for i, t in enumerate(lines, 1) if t.strip().startswith("backend.wait(y)"))
    (waitall,) = result.syncs["waitall"].points
    (wait_one,) = result.syncs["wait_one"].points
    assert (waitall.file, waitall.line, waitall.kind, waitall.calls_per_step) == (source, waitall_line, SyncKind.EXPLICIT, 1)
    assert waitall.call.endswith("streamsim.Device.synchronize")
    assert (wait_one.file, wait_one.line, wait_one.kind, wait_one.calls_per_step) == (source, wait_one_line, SyncKind.EXPLICIT, 1)
    assert wait_one.call.endswith("streamsim.Stream.synchronize")


def _one_item_a_step(backend: Any, device: str, params: Any) -> Any:
    x = backend.ones((8, 8), "float32", device)

    def step() -> Any:
        backend.hold(device, HOLD_S / 4)
        return (x + 1).sum().item()  # planted: one item a step

    return step


def test_a_step_forms_census_counts_per_step_of_the_users_not_per_sample_nor_its_own_waits():
    """A step-form sample runs `steps` of the user's steps: the census read 20 waits "per step" for one `.item()` in
    the step, and listed the step form's own `sync_every` barrier as a line of the user's (step_form.py)."""
    from asyncbench.workloads.step_form import step

    workload = step(name="one_item", steps=4, sync_every=(0, 1))(_one_item_a_step)
    result = run_corpus(workload, params={"steps": 4, "sync_every": [0, 1]})
    line = planted_line(Path(__file__), "one item a step")
    for variant, found in result.syncs.items():
        assert found.steps_per_call == 4
        assert [(point.file, point.line, point.calls_per_step) for point in found.points] == [(__file__, line, 1)], variant
        assert found.syncs_per_step == 1
