"""The runner's logic, driven by a fake backend (nothing here is a measurement)."""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Any, Iterator, Mapping

import pytest

from asyncbench.engine import expansion, runner
from asyncbench.measure import harness_cost
from asyncbench.results.model import ERROR, OK, SKIPPED, Settings
from asyncbench.spec import config
from asyncbench.workloads import BUILT_IN
from asyncbench.workloads.base import INT, Metric, Param, Prepared, Workload
from tests.support.cli import invoke
from tests.support.helpers import FakeBackend

FAST = Settings(warmup=0, min_samples=2, max_samples=2, max_time_s=1.0)


class Counting(Workload):
    name = "counting"
    summary = "counts calls"
    params = (Param("n", INT, 3, "calls per sample", quick=1, minimum=1),)
    variants = ("one", "two")
    metrics = (Metric("calls", "", "total calls"),)

    def __init__(self, fail_in_setup: bool = False):
        self.calls = 0
        self.fail_in_setup = fail_in_setup

    def setup(self, backend, device, params) -> Prepared:
        if self.fail_in_setup:
            raise MemoryError("out of memory (simulated)")

        def run():
            self.calls += params["n"]

        return Prepared(variants={"one": run, "two": run}, sync=lambda: backend.barrier(device))

    def run_metrics(self, params: Mapping[str, Any], variants) -> dict[str, float | None]:
        return {"calls": float(self.calls)}

    def reading(self, result) -> str:
        return f"{result.metrics['calls']} calls"


@pytest.fixture
def counting():
    return Counting()


def experiment(name="exp", workload="counting", devices=("cpu",), params=None) -> config.Experiment:
    return config.Experiment(
        name=name,
        workload=workload,
        backends=("fake",),
        devices=devices,
        params={**Counting().defaults(), **(params or {})},
        settings=FAST,
    )


def test_case_id_names_only_changed_params(counting):
    plain, changed = experiment(), experiment(params={"n": 7})
    assert plain.case_id("torch", "cuda:0", plain.params, counting.defaults()) == "exp[torch,cuda:0]"
    assert changed.case_id("torch", "cpu", changed.params, counting.defaults()) == "exp[torch,cpu,n=7]"
    assert expansion.case_of(changed, counting, "torch", "cpu", changed.points()[0]).id == "exp[torch,cpu,n=7]"


def test_plan_resolves_auto_skips_absent_and_dedupes(counting, fake_backend):
    cfg = config.Config("c", "<t>", (experiment(devices=("auto", "cpu", "cuda:2")),))
    planned = list(expansion.expand(cfg, {"fake": fake_backend}, {"counting": counting}))
    assert [(c.device, reason) for c, reason in planned] == [("cpu", None), ("cuda:2", "no fake GPU")]


def test_run_measures_every_variant_and_reports_each_result(counting, fake_backend, monkeypatch):
    monkeypatch.setattr(runner, "get_backend", lambda name: fake_backend)
    seen = []
    results = runner.run(config.Config("c", "<t>", (experiment(),)), on_result=seen.append, workloads={"counting": counting})
    assert seen == results
    (result,) = results
    assert result.status == OK
    assert set(result.variants) == {"one", "two"}
    assert all(v.done_s.n == 2 and v.device_s is None for v in result.variants.values())
    # 2 timed samples + 1 memory run per variant, n=3 calls each
    assert result.metrics["calls"] == 2 * 3 * 3
    # and the harness's own cost, probed once on this backend and device before the case (harness_cost)
    assert fake_backend.barriers == 2 * 3 + harness_cost.SYNCS_PER_PROBE
    assert result.harness is not None
    assert result.harness.n == 3 * harness_cost.NOOP_SAMPLES


def test_a_failing_case_is_an_error_row_and_the_next_case_runs(monkeypatch, fake_backend):
    failing, fine = Counting(fail_in_setup=True), Counting()
    failing.name = "failing"
    monkeypatch.setattr(runner, "get_backend", lambda name: fake_backend)
    cfg = config.Config("c", "<t>", (experiment("bad", "failing"), experiment("good")))
    bad, good = runner.run(cfg, workloads={"failing": failing, "counting": fine})
    assert bad.status == ERROR
    assert "MemoryError: out of memory (simulated)" in bad.reason
    assert good.status == OK


def test_missing_backend_and_unsupported_dtype_are_skipped(monkeypatch, counting):
    monkeypatch.setattr(runner, "get_backend", lambda name: FakeBackend(missing="fake not installed"))
    (result,) = runner.run(config.Config("c", "<t>", (experiment(),)), workloads={"counting": counting})
    assert result.status == SKIPPED
    assert result.reason == "fake not installed"

    from asyncbench.backends import get_backend

    matmul = BUILT_IN["matmul"]
    assert matmul.skip_reason(get_backend("numpy"), "cpu", {"dtype": "bfloat16"}) == "numpy has no bfloat16"


def test_interrupt_propagates_after_finished_cases_were_delivered(monkeypatch, fake_backend, counting):
    monkeypatch.setattr(runner, "get_backend", lambda name: fake_backend)
    delivered = []

    def interrupt_second(index, total, case):
        if index == 1:
            raise KeyboardInterrupt

    cfg = config.Config("c", "<t>", (experiment("a"), experiment("b")))
    with pytest.raises(KeyboardInterrupt):
        runner.run(cfg, on_start=interrupt_second, on_result=delivered.append, workloads={"counting": counting})
    assert [r.experiment for r in delivered] == ["a"]


def test_a_case_with_checks_stops_once_they_are_decided(counting, fake_backend, monkeypatch):
    from asyncbench.results.model import StopReason, Verdict
    from asyncbench.spec import expect

    monkeypatch.setattr(runner, "get_backend", lambda name: fake_backend)
    settings = Settings(warmup=0, min_samples=6, max_samples=1000, max_time_s=1e9, max_rel_noise=10.0)
    decided = dataclasses.replace(experiment(), settings=settings, expect=(expect.parse("done_s.median < 1000s", counting),))
    (result,) = runner.run(config.Config("c", "<t>", (decided,)), workloads={"counting": counting})
    # at the run's 1% split over 15 looks and two variants (99.967%), 13 rounds are the first with an interval: the
    # case takes them before anything stops it, and looks there first (before: at 14, the schedule's next look)
    assert result.sampling.rounds == 13
    assert result.sampling.stopped_by == StopReason.NOISE
    assert [c.verdict for c in result.checks] == [Verdict.PASS]
    (check,) = result.checks
    assert check.family_error == 0.01
    assert check.confidence == pytest.approx(1 - 0.01 / 15 / 2)  # a clock check over both variants: split again


def test_a_cpu_only_selection_never_plans_a_cupy_case():
    from asyncbench.backends import get_backend
    from asyncbench.spec import config, overrides

    plan = overrides.apply_overrides(config.default_suite(), devices=["cpu"], workloads=["matmul"])
    cases = list(expansion.expand(plan, {name: get_backend(name) for name in plan.experiments[0].backends}))
    assert "cupy" not in {case.backend for case, _ in cases}
    assert {"numpy", "torch"} <= {case.backend for case, _ in cases}


def test_each_worker_imports_its_frameworks_while_the_run_is_planned_and_only_then_gets_a_case(monkeypatch):
    """Planning lists devices (JAX in a child process: 0.8 s); a worker started only for the first case would begin
    its own start and imports after that. The case is handed over once the imports are answered."""
    from asyncbench.engine import case_workers, isolation
    from asyncbench.spec import overrides

    events: list[str] = []
    real_send, real_receive, real_plan = isolation.Worker.send, isolation.Worker.receive, expansion.expand

    def send(self, args):
        events.append(f"send {type(args[0]).__name__}")
        return real_send(self, args)

    def receive(self, timeout_s, on_progress=None):
        answer = real_receive(self, timeout_s, on_progress)
        events.append(f"answer {type(answer).__name__}")
        return answer

    def plan(*args):
        events.append("plan")
        yield from real_plan(*args)

    monkeypatch.setattr(isolation.Worker, "send", send)
    monkeypatch.setattr(isolation.Worker, "receive", receive)
    monkeypatch.setattr(expansion, "expand", plan)
    quick = overrides.apply_overrides(config.default_suite(), workloads=["matmul"], backends=["numpy"], devices=["cpu"], quick=True)
    (result,) = runner.run(quick, runner.RunOptions(isolate=True))
    assert result.status == OK
    assert events == ["send ImportFrameworks", "plan", "answer NoneType", "send Case", "answer Result"]
    assert runner.run_case_in_worker(case_workers.ImportFrameworks(("numpy", "no-such-backend"))) is None


def test_a_run_starts_its_workers_before_it_captures_the_environment(monkeypatch, tmp_path):
    """Capturing the environment imports torch in the run's own process (1.5 s): the workers' start and imports
    overlap it instead of following it."""
    from asyncbench.engine import environment, isolation

    events: list[str] = []
    real_send, real_capture = isolation.Worker.send, environment.capture

    def send(self, args):
        events.append(f"send {type(args[0]).__name__}")
        return real_send(self, args)

    def capture(*args):
        events.append("capture")
        return real_capture(*args)

    monkeypatch.setattr(isolation.Worker, "send", send)
    monkeypatch.setattr(environment, "capture", capture)
    argv = ["run", "-w", "matmul", "-b", "numpy", "-d", "cpu", "--quick", "--no-progress", "-o", str(tmp_path / "r.json")]
    done = invoke(*argv)
    assert done.exit_code == 0, done.output
    assert events == ["send ImportFrameworks", "capture", "send Case"]


# --- built-in settings (TF32 off) for built-in workloads only, decided by where a workload came from ------------

USER_WORKLOAD = """
from asyncbench.workloads.base import Prepared, Workload


class Mine(Workload):
    name = "mine"
    summary = "the user's own float32 products"
    variants = ("product",)

    def setup(self, backend, device, params):
        x = backend.random((8, 8), "float32", device)()
        return Prepared(variants={"product": lambda: x * x}, sync=lambda: backend.barrier(device))
"""


class PrecisionRecording(FakeBackend):
    """A fake backend that records, at every array it makes, whether the runner had entered full_precision
    (Backend.full_precision: float32 products without TF32, which the runner enters around built-in workloads)."""

    def __init__(self) -> None:
        super().__init__()
        self.inside = False
        self.precise: list[bool] = []

    @contextlib.contextmanager
    def full_precision(self) -> Iterator[None]:
        self.inside = True
        try:
            yield
        finally:
            self.inside = False

    def random(self, shape, dtype, device):
        self.precise.append(self.inside)
        return super().random(shape, dtype, device)


def test_a_user_workload_loaded_from_a_config_runs_at_its_own_precision_not_the_built_ins(tmp_path, monkeypatch):
    """The TF32 rule through the real registry: `asyncbench run config.yaml` loads the user's workload from its file
    (plugins.load), and the runner must still not switch TF32 off for it. Loading used to add the workload to the
    registry the runner took for "built in", so a user's products ran with TF32 off while the results file said
    they ran as the user set them."""
    (tmp_path / "mine.py").write_text(USER_WORKLOAD)
    (tmp_path / "c.yaml").write_text(
        "defaults: {backends: [numpy], devices: [cpu], warmup: 0, min_samples: 2, max_samples: 2, max_time_s: 1}\n"
        "experiments:\n  - workload: mine.py:Mine\n"
    )
    plan = config.load(tmp_path / "c.yaml")  # as `run` loads it: the user's file is imported here
    backend = PrecisionRecording()
    monkeypatch.setattr(runner, "get_backend", lambda name: backend)
    (result,) = runner.run(plan)
    assert result.status == OK, result.reason
    assert backend.precise  # the workload made its arrays on the recording backend
    assert not any(backend.precise)


def test_only_the_built_in_registrys_own_workloads_run_at_full_precision(tmp_path):
    from asyncbench.results.model import Case
    from asyncbench.workloads import plugins

    (tmp_path / "mine.py").write_text(USER_WORKLOAD)
    key = plugins.canonical("mine.py:Mine", tmp_path)
    mine = plugins.find(key)
    assert key not in BUILT_IN  # loading never adds to the built-in registry
    assert mine not in BUILT_IN.values()
    with pytest.raises(TypeError):
        BUILT_IN["matmul"] = mine  # type: ignore[index]

    def precise(workload_key: str, workload: Workload) -> bool:
        backend = PrecisionRecording()
        case = Case(id="c", experiment="c", workload=workload_key, backend="fake", device="cpu", params={}, settings=FAST)
        with runner.scope(backend, case, workload):
            return backend.inside

    assert precise("matmul", BUILT_IN["matmul"])
    assert not precise(key, mine)
    assert not precise("matmul", mine)  # a user's workload under a built-in's name is still the user's
    assert not precise(key, BUILT_IN["matmul"])  # a file that hands back a built-in is still the user's file


def test_a_case_warms_up_for_the_engines_minimum_where_it_asks_for_a_warm_up(counting, fake_backend, monkeypatch):
    """A fast step's first milliseconds run slow (measure.timing.WARMUP_MIN_S): the engine asks every case's warm-up
    to last that long; the untimed rounds past the settings' warm-up take no sample."""
    from asyncbench.engine import measuring
    from asyncbench.measure import timing

    asked: list[float] = []
    real_measure = measuring.measure

    def spy(variants, sync, make_timer, procedure, on_progress=None):
        asked.append(procedure.warmup_min_s)
        return real_measure(variants, sync, make_timer, procedure, on_progress)

    monkeypatch.setattr(measuring, "measure", spy)
    monkeypatch.setattr(runner, "get_backend", lambda name: fake_backend)
    warmed = dataclasses.replace(experiment(), settings=dataclasses.replace(FAST, warmup=1))
    (result,) = runner.run(config.Config("c", "<t>", (warmed,)), workloads={"counting": counting})
    assert asked == [timing.WARMUP_MIN_S]
    assert timing.WARMUP_MIN_S > 0
    assert all(v.done_s.n == 2 for v in result.variants.values())
    # 2 timed samples and 1 memory run per variant, and the warm-up's many more rounds
    assert result.metrics["calls"] > 2 * 3 * 3 + 2 * 3 * 10
