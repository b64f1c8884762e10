"""One expansion (Experiment.cases) and one identity (Experiment.case_id) for every reader of a plan: running it
(expansion.expand), cutting it into jobs (jobs.split) and listing a job's cases (jobs.planned) agree case for case, and
the ids are the ones results files and history stores already key on."""

from __future__ import annotations

from asyncbench.backends import BACKENDS
from asyncbench.engine import expansion, jobs
from asyncbench.results.plan import case_parts
from asyncbench.spec import config
from tests.support.helpers import FakeBackend

PLAN = """
defaults: {backends: [numpy, torch, cupy], devices: [cpu, "cuda:0"]}
experiments:
  - workload: sync_async
    params: {n_ops: 2000}
    params_for: {torch: {n_ops: 500}}
    sweep: {dtype: [float32, float64]}
  - workload: multi_device
"""

#: the ids this plan had before the expansion was written once (asyncbench at 36d3163, expansion.plan and jobs.planned)
IDS = [
    "sync_async[numpy,cpu,n_ops=2000,dtype=float32]",
    "sync_async[torch,cpu,n_ops=500,dtype=float32]",
    "sync_async[torch,cuda:0,n_ops=500,dtype=float32]",
    "sync_async[cupy,cuda:0,n_ops=2000,dtype=float32]",
    "sync_async[numpy,cpu,n_ops=2000,dtype=float64]",
    "sync_async[torch,cpu,n_ops=500,dtype=float64]",
    "sync_async[torch,cuda:0,n_ops=500,dtype=float64]",
    "sync_async[cupy,cuda:0,n_ops=2000,dtype=float64]",
    "multi_device[numpy,cpu,size=1000,n_iter=10]",
    "multi_device[torch,cpu,size=1000,n_iter=10]",
    "multi_device[torch,cuda:0]",
    "multi_device[cupy,cuda:0]",
]


def _backends() -> dict[str, FakeBackend]:
    """Fakes that run on the device kinds the real backends do and have cpu and cuda:0: nothing is probed."""
    return {
        name: type(name, (FakeBackend,), {"device_kinds": cls.device_kinds})(devices=("cpu", "cuda:0")) for name, cls in BACKENDS.items()
    }


def test_the_expansion_is_point_then_backend_then_device_without_the_kinds_a_backend_never_runs_on():
    (experiment, _) = config.loads(PLAN, source="t.yaml").experiments
    slots = experiment.cases(lambda backend, spec: BACKENDS[backend].runs_on(spec))
    assert [(s.point["dtype"], s.backend, s.device) for s in slots] == [
        ("float32", "numpy", "cpu"),
        ("float32", "torch", "cpu"),
        ("float32", "torch", "cuda:0"),
        ("float32", "cupy", "cuda:0"),
        ("float64", "numpy", "cpu"),
        ("float64", "torch", "cpu"),
        ("float64", "torch", "cuda:0"),
        ("float64", "cupy", "cuda:0"),
    ]


def test_running_a_plan_cutting_it_into_jobs_and_listing_the_jobs_cases_give_the_same_cases_and_ids():
    plan = config.loads(PLAN, source="t.yaml")
    run = [(case.id, dict(case.params)) for case, _ in expansion.expand(plan, _backends())]
    listed = [(case.id, dict(case.params)) for case in jobs.planned(plan)]
    per_case = [(case.id, dict(case.params)) for _, job in jobs.split(plan, "case") for case in jobs.planned(job)]
    assert [case_id for case_id, _ in run] == IDS
    assert listed == run
    assert per_case == run
    names = [name for name, _ in jobs.split(plan, "case")]
    assert names[:3] == [
        "001-sync_async-numpy-cpu-dtype=float32",
        "002-sync_async-torch-cpu-dtype=float32",
        "003-sync_async-torch-cuda-0-dtype=float32",
    ]
    assert names[-1] == "012-multi_device-cupy-cuda-0"


def test_an_id_reads_back_as_the_experiment_backend_and_device_it_was_made_of():
    assert [case_parts(case_id) for case_id in IDS[:3]] == [
        ("sync_async", "numpy", "cpu"),
        ("sync_async", "torch", "cpu"),
        ("sync_async", "torch", "cuda:0"),
    ]
    assert case_parts("multi_device[cupy,cuda:0]") == ("multi_device", "cupy", "cuda:0")
    assert case_parts("not an id") == ("not an id", "", "")
