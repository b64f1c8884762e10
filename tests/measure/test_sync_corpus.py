"""The planted corpus (sync_corpus.py) through `runner.run` with RunOptions(syncs=True) on JAX and MXNet on a CPU, in the backend's
own worker as a run does: every planted wait found at its line, with its kind, its call and its waits per step, and
the sync-free steps with none. And the seeds' workloads read through the census: conversion's variants name their
lines in workloads/conversion.py, barrier's two waits theirs in workloads/barrier.py.

Marked `jax` / `mxnet` (skipped where the framework is missing, required under `make test`). A planted line removed
from a step fails its test: the census would find nothing there."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from asyncbench.engine import runner
from asyncbench.measure.census import FALLBACK_KINDS
from asyncbench.results.model import OK, Result, Settings
from asyncbench.results.syncs import Census, SyncKind
from asyncbench.spec import config
from asyncbench.workloads import conversion, plugins
from tests.measure import sync_corpus
from tests.measure.sync_corpus import JAX_PLANTED, MX_PLANTED
from tests.support.planted import planted_line

CORPUS = Path(sync_corpus.__file__)
#: six timed rounds (the census takes one after each: six, the fewest with a 95% interval), short products
SETTINGS = Settings(warmup=1, min_samples=6, max_samples=6, max_time_s=30.0, max_rel_noise=1.0)
CASES = {
    "jax": ("JaxCorpus", JAX_PLANTED, sync_corpus.JaxCorpus.free),
    "mxnet": ("MxnetCorpus", MX_PLANTED, sync_corpus.MxnetCorpus.free),
}
BACKENDS = [pytest.param("jax", marks=pytest.mark.jax), pytest.param("mxnet", marks=pytest.mark.mxnet)]


def run_syncs(workload: str, backend: str, params: dict | None = None, settings: Settings = SETTINGS) -> Result:
    experiment = _experiment(workload.rpartition(":")[2] or workload, workload, backend, params, settings)
    (result,) = runner.run(config.Config("t", "<t>", (experiment,)), runner.RunOptions(isolate=True, syncs=True))
    assert result.status == OK, result.reason
    return result


#: the workloads of the tests below, each with the params it is read at (the corpus's class is the backend's own)
WORKLOADS = {
    "corpus": {"size": 256, "chain": 3},
    "conversion": {"size": 128, "n_iter": 4},
    "barrier": {"size": 128, "background_ops": 4},
    "training_memory": {"n_batches": 4, "batch_size": 32, "sync_every": [1, 2, 0]},
}


def _experiment(name: str, workload: str, backend: str, params: dict | None = None, settings: Settings = SETTINGS) -> config.Experiment:
    return config.Experiment(
        name=name,
        workload=workload,
        backends=(backend,),
        devices=("cpu",),
        params={**plugins.find(workload).defaults(quick=True), **(params or {})},
        settings=settings,
    )


@pytest.fixture(scope="module")
def ran() -> Callable[[str, str], Result]:
    """A backend's case of each of WORKLOADS, from one run with the census (made once a module, when a test first
    asks): one worker runs them all, as in a run of several experiments, and imports the framework once (JAX's
    import and first compile, MXNet's interpreter: seconds each), not once a test."""
    runs: dict[str, dict[str, Result]] = {}

    def of(backend: str, name: str) -> Result:
        if backend not in runs:
            workloads = {**{key: key for key in WORKLOADS}, "corpus": f"{CORPUS}:{CASES[backend][0]}"}
            experiments = tuple(_experiment(key, workloads[key], backend, params) for key, params in WORKLOADS.items())
            results = runner.run(config.Config("t", "<t>", experiments), runner.RunOptions(isolate=True, syncs=True))
            runs[backend] = {result.experiment: result for result in results}
        result = runs[backend][name]
        assert result.status == OK, result.reason
        return result

    return of


@pytest.fixture
def corpus(ran) -> Callable[[str], Result]:
    return lambda backend: ran(backend, "corpus")


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_planted_wait_is_found_at_its_line_with_its_kind_call_and_count(backend, corpus):
    result = corpus(backend)
    _, planted, _ = CASES[backend]
    found = {}
    for name, expected in planted.items():
        census = result.syncs[name]
        assert census.rounds >= 6
        points = [(p.file, p.line, str(p.kind), p.call, p.calls_per_step) for p in census.points]
        found[name] = points
        want = (str(CORPUS), planted_line(CORPUS, name), expected.kind, expected.call, expected.calls_per_step)
        assert points == [want], f"{name}: {points}"
    kinds = {planted[name].kind for name in found}
    assert len(kinds) >= 5 if backend == "jax" else len(kinds) >= 4


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_planted_wait_costs_time_with_an_interval(backend, corpus):
    result = corpus(backend)
    for name in CASES[backend][1]:
        (point,) = result.syncs[name].points
        assert point.wait_s_per_step > 0
        assert point.wait_ci_s is not None
        assert point.wait_ci_s[0] <= point.wait_s_per_step <= point.wait_ci_s[1]
        assert len(point.wait_s_rounds) == result.syncs[name].rounds


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_sync_free_step_shows_no_wait(backend, corpus):
    result = corpus(backend)
    for name in CASES[backend][2]:
        free: Census = result.syncs[name]
        assert free.points == (), [p.where for p in free.points]
        assert free.rounds >= 6
        assert "hooks and the frame fallback" in free.coverage


def test_the_corpus_plants_at_least_twelve_kinds_of_wait_between_jax_and_mxnet():
    calls = {(p.kind, p.call) for p in (*JAX_PLANTED.values(), *MX_PLANTED.values())}
    assert len(calls) >= 12
    # every kind, on JAX alone, but backpressure, which no line plants once (test_a_full_queue_is_backpressure_...)
    assert {str(kind) for kind in SyncKind} - {str(SyncKind.QUEUE_FULL)} <= {p.kind for p in JAX_PLANTED.values()}


@pytest.mark.parametrize("backend", BACKENDS)
def test_conversion_names_each_variants_own_line(backend, ran):
    result = ran(backend, "conversion")
    source = Path(conversion.__file__)
    lines = source.read_text().splitlines()

    def line(text: str, after: str) -> int:
        start = next(i for i, t in enumerate(lines) if after in t)
        return next(i for i, t in enumerate(lines[start:], start + 1) if text in t)

    final = {name: line("return y[0, 0].item()", f"def run_{name}()") for name in ("none", "item", "numpy", "print")}
    per_iteration = {
        "item": (line("y[0, 0].item()", "def run_item()"), SyncKind.CONVERSION),
        "numpy": (line("to_host(y)", "def run_numpy()"), SyncKind.CONVERSION),
        "print": (line("print(y[0, :PRINTED_ELEMENTS], file=sink)", "def run_print()"), SyncKind.PRINT),
    }
    for variant, census in result.syncs.items():
        where = {(p.file, p.line): p for p in census.points}
        assert set(where) <= {(str(source), final[variant]), *((str(source), n) for n, _ in per_iteration.values())}
        assert where[(str(source), final[variant])].calls_per_step == 1  # every variant's one final .item()
        if variant in per_iteration:
            at, kind = per_iteration[variant]
            point = where[(str(source), at)]
            assert (point.calls_per_step, point.kind) == (4, kind)  # one per iteration
            assert point.wait_s_per_step > 0
        assert len(census.points) == (2 if variant in per_iteration else 1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_barrier_names_its_device_wait_and_its_one_result_wait(backend, ran):
    from asyncbench.workloads import barrier

    result = ran(backend, "barrier")
    source = str(Path(barrier.__file__))
    lines = Path(source).read_text().splitlines()
    waitall_at = next(i for i, t in enumerate(lines) if "def run_waitall" in t)
    waitall_line = next(i for i, t in enumerate(lines[waitall_at:], waitall_at + 1) if t.strip() == "backend.barrier(device)")
    wait_one_line = next(i for i, t in enumerate(lines, 1) if t.strip().startswith("backend.wait(y)"))
    # the hooked waits: the frame fallback may add a dispatch that waited behind the background products (a full queue)
    (waitall,) = [p for p in result.syncs["waitall"].points if p.kind != SyncKind.UNKNOWN]
    (wait_one,) = [p for p in result.syncs["wait_one"].points if p.kind != SyncKind.UNKNOWN]
    assert (waitall.file, waitall.line, waitall.kind, waitall.calls_per_step) == (source, waitall_line, SyncKind.EXPLICIT, 1)
    assert (wait_one.file, wait_one.line, wait_one.kind, wait_one.calls_per_step) == (source, wait_one_line, SyncKind.EXPLICIT, 1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_training_memory_waits_for_its_loss_as_often_as_sync_every_says(backend, ran):
    from asyncbench.workloads import training_memory

    result = ran(backend, "training_memory")
    source = Path(training_memory.__file__)
    lines = source.read_text().splitlines()
    start = next(i for i, t in enumerate(lines) if "def _array_epoch" in t)
    loss_line = next(i for i, t in enumerate(lines[start:], start + 1) if t.strip() == "loss.item()")

    def hooked(every: int) -> list:
        """The census's hooked points: the frame fallback may add JAX's queue, whose 31st computation in flight makes
        the next dispatch wait (an op's line in the step, `unattributed`), wherever the queue fills in a round."""
        return [point for point in result.syncs[f"sync_every={every}"].points if point.kind not in FALLBACK_KINDS]

    for every, waits in ((1, 4), (2, 2)):
        (point,) = hooked(every)
        assert (point.file, point.line, point.kind, point.calls_per_step) == (str(source), loss_line, SyncKind.CONVERSION, waits)
    assert hooked(0) == []


def test_numpy_has_nothing_to_find_and_says_so():
    experiment = config.Experiment(
        name="conversion",
        workload="conversion",
        backends=("numpy",),
        devices=("cpu",),
        params={**plugins.find("conversion").defaults(quick=True), "size": 64, "n_iter": 2},
        settings=SETTINGS,
    )
    (result,) = runner.run(config.Config("t", "<t>", (experiment,)), runner.RunOptions(syncs=True))
    assert set(result.syncs) == {"none", "item", "numpy", "print"}
    for census in result.syncs.values():
        assert (census.points, census.rounds) == ((), 0)
        assert census.coverage == "numpy runs synchronously: nothing waits for a device"


def test_without_syncs_a_result_has_no_census():
    experiment = config.Experiment(
        name="conversion",
        workload="conversion",
        backends=("numpy",),
        devices=("cpu",),
        params={**plugins.find("conversion").defaults(quick=True), "size": 64, "n_iter": 2},
        settings=SETTINGS,
    )
    (result,) = runner.run(config.Config("t", "<t>", (experiment,)))
    assert result.syncs == {}


def test_run_syncs_on_the_command_line_stores_the_census(tmp_path):
    """`asyncbench run --syncs -o FILE`: the results file carries each variant's census, and reads back."""
    from asyncbench.results.schema import Report
    from tests.support.cli import asyncbench

    out = tmp_path / "r.json"
    done = asyncbench("run", "-w", "conversion", "-b", "numpy", "--quick", "--syncs", "--no-progress", "-o", str(out))
    assert done.returncode == 0, done.stderr
    (result,) = Report.load(out).results
    assert set(result.syncs) == {"none", "item", "numpy", "print"}
    assert all(c.coverage == "numpy runs synchronously: nothing waits for a device" for c in result.syncs.values())


FLOOD = """\
import jax.numpy as jnp

import asyncbench


@asyncbench.step(sync_every=(0,), steps=1)
def flood(backend, device, params):
    x = jnp.ones((256, 256)) / 256

    def step():
        y = x
        for _ in range(96):
            y = jnp.tanh(y @ x)  # dispatch: the 31st computation in flight waits for room in XLA's queue
        return y

    return step
"""


@pytest.mark.jax
def test_a_full_queue_is_backpressure_shown_at_its_line_and_no_sync_of_the_step(tmp_path):
    """A step that only dispatches, faster than the device computes, waits at its dispatch once JAX's queue is full:
    a new user's clean step failed `syncs_per_step == 0` in 5 of 9 runs on those waits, read as syncs of the step."""
    (tmp_path / "flood.py").write_text(FLOOD)
    result = run_syncs(f"{tmp_path / 'flood.py'}:flood", "jax")
    (census,) = result.syncs.values()
    line = FLOOD.splitlines().index(next(t for t in FLOOD.splitlines() if "31st computation" in t)) + 1
    assert [(p.line, p.kind) for p in census.points] == [(line, SyncKind.QUEUE_FULL)]
    assert census.syncs_per_step == 0
    assert census.round_totals()[0] == (0.0,) * census.rounds


def test_the_readme_and_the_measured_page_quote_the_corpus_as_it_is():
    """README quoted 28 planted waits of 27 kinds and docs/measured.md 15 JAX and 13 MXNet waits, where the corpus
    plants (and the recall measured found) 16 and 14: each count is the corpus's own."""
    root = CORPUS.parents[2]
    planted = [*JAX_PLANTED.values(), *MX_PLANTED.values()]
    calls = len({(one.kind, one.call) for one in planted})
    kinds = len({one.kind for one in planted})
    readme = " ".join((root / "README.md").read_text(encoding="utf-8").split())
    measured = " ".join((root / "docs" / "measured.md").read_text(encoding="utf-8").split())
    assert f"every one of {len(planted)} planted waits ({calls} calls of {kinds} kinds)" in readme
    assert f"{len(JAX_PLANTED)} JAX and {len(MX_PLANTED)} MXNet waits, {len(planted)} in all, of {calls} calls in {kinds} kinds" in measured
    assert f"JAX {len(JAX_PLANTED)}/{len(JAX_PLANTED)} and MXNet {len(MX_PLANTED)}/{len(MX_PLANTED)}" in measured
