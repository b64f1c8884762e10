"""One side of a paired gate: the worker process that sets a case up and samples it, and its handle.

Each side is a worker process (isolation.Worker) started alike: its own
interpreter and environment, with its source tree first on sys.path once
the harness is imported, so user workloads and the user's package come from
that side's revision. A fresh one is started for every block
(engine.paired), importing its cases' frameworks before anything is
measured; between its calls it is frozen (SIGSTOP), so an idle side cannot
spin a thread pool, collect garbage or run an engine thread while the other
side measures.

A frozen process keeps what it holds, a CUDA context too, and a gate keeps
one side worker per side, interpreter and variables (`SideWorkers`, the
gate's pool): torch's and JAX's cases had four processes on one GPU. So
each side runs one process at a time (`seats`): a side worker that starts
or renews its process closes the side's other one (a renewed process's predecessor ends while it imports its
frameworks, and is gone before it sets a case up). A GPU case then has two
contexts on its GPU, one per side, which pairing round by round in two
processes needs (a GPU that admits one process is refused before anything
runs: session.sides.check_gpus).
"""

from __future__ import annotations

import gc
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from asyncbench.backends import get_backend
from asyncbench.engine import case_workers, isolation, measuring, runner
from asyncbench.measure import census, perturbation
from asyncbench.measure.timing import take_sample
from asyncbench.results.bound import bound_to_dict, shares_host_cores
from asyncbench.results.model import Case
from asyncbench.results.syncs import census_to_dict
from asyncbench.workloads import plugins

# --- in the worker process ------------------------------------------------------------------------------------

_case: dict[str, Any] = {}


def serve(command: str, payload: Any, on_progress: Any = None) -> Any:
    """A side's worker: ("prepare", (tree, backends)) → None once the backends' frameworks are imported;
    ("setup", (case, tree)) → variants or a skip reason; ("sample", variant) → its clocks; ("verify", None) → what
    is wrong with the variants' results, or None; ("census", rounds) → where each variant's step waited, over that
    many census rounds (`ab --syncs`: {variant: results.syncs.census_to_dict}); ("bound", None) → what bounds each
    variant's step, from perturbation rounds taken now (`ab --bound`: {"bounds": {variant: results.bound.bound_to_dict},
    "note": why there are none}); ("teardown", None) → None;
    ("environment", backends) → what this side runs on (its interpreter's versions)."""
    if command == "environment":
        from asyncbench.engine import environment

        return environment.capture(payload)
    if command == "prepare":
        return _prepare(*payload)
    if command == "setup":
        return _setup(*payload)
    if command == "sample":
        return _sample(payload)
    if command == "census":
        return _census(payload)
    if command == "bound":
        return _bound()
    if command == "verify":
        verify = _case["prepared"].verify if _case else None
        return verify() if verify is not None else None
    return _teardown()


def tree_first(path: Sequence[str], tree: str, cwd: str) -> list[str]:
    """sys.path for code that must come from one side's `tree`: the tree first, and no entry for the folder the
    command was started in (`cwd`, and '' or '.', which resolve to it), which `python -m asyncbench` puts first and
    a worker inherits: a module that side's revision lacks then failed to import under the console script but came
    from the head's working tree under `python -m` (a base without the user's package measured the head's)."""
    here, own = os.path.realpath(cwd), os.path.realpath(tree)
    kept = [entry for entry in path if os.path.realpath(os.path.join(here, entry)) not in (here, own)]  # '' is `cwd`
    return [tree, *kept]


def _own_tree_first(tree: str | None) -> None:
    if tree:
        sys.path[:] = tree_first(sys.path, tree, os.getcwd())


def _prepare(tree: str | None, backends: Sequence[str]) -> None:
    """What a fresh process does before its block: put its tree first, import the frameworks its cases use."""
    _own_tree_first(tree)
    case_workers.import_frameworks(backends)  # both sides at once, before anything is measured


def _setup(case: Case, tree: str | None) -> dict[str, Any]:
    _own_tree_first(tree)  # after the harness is imported: the user's code comes from this side's tree
    _teardown()
    workload = plugins.find(case.workload)
    backend = get_backend(case.backend)
    reason = workload.skip_reason(backend, case.device, case.params)
    if reason:
        return {"skipped": reason}
    stack = runner.scope(backend, case, workload)
    prepared = workload.setup(backend, case.device, case.params)
    if prepared.close is not None:
        stack.callback(prepared.close)
    timed = prepared.device_timed
    timers = {name: backend.timer(case.device) if timed else None for name in prepared.variants}
    per_call = workload.steps_per_call(case.params)
    _case.update(stack=stack, prepared=prepared, timers=timers, backend=backend, device=case.device, steps_per_call=per_call, case=case)
    _case["result_wait"] = backend.result_wait(case.device)  # each side's samples end as `run`'s do
    for _ in range(case.settings.warmup):
        for name in prepared.variants:
            _sample(name)
    gc.collect()
    gc.disable()  # as in `run`: no collection inside a sample; one pass of the youngest generation after each
    return {"variants": list(prepared.variants), "asynchronous": backend.is_asynchronous(case.device)}


def _sample(name: str) -> tuple[float, float, float | None]:
    prepared = _case["prepared"]
    clocks = take_sample(
        prepared.variants[name], prepared.sync, _case["timers"][name], prelude=prepared.preludes.get(name), result_wait=_case["result_wait"]
    )
    gc.collect(0)
    return clocks


def _census(rounds: int) -> dict[str, Any]:
    """The census of the case set up here (`ab --syncs`), in rounds of its own, as `run --syncs` takes it."""
    prepared, backend, device = _case["prepared"], _case["backend"], _case["device"]
    taker = census.taker_for(backend, device, backend.is_asynchronous(device))
    if taker is not None:
        for _ in range(rounds):
            taker.round(prepared.variants, prepared.sync, preludes=prepared.preludes)
    taken = census.of_case(taker, list(prepared.variants), backend.name, device, _case["steps_per_call"])
    return {name: census_to_dict(found) for name, found in taken.items()}


def _bound() -> dict[str, Any]:
    """Each variant's bound of the case set up here (`ab --bound`), from perturbation rounds of its own taken now, as
    `run --bound` takes them after its last timed round: its first rounds, then on until every slack's interval is
    precise enough or their budget is spent (measure.perturbation's stop rule), fitted as `run --bound` fits them."""
    case, prepared, backend, per_call = _case["case"], _case["prepared"], _case["backend"], _case["steps_per_call"]
    asynchronous = backend.is_asynchronous(case.device)
    options = measuring.CaseOptions(bound=True)
    # the side's rounds come back to back after its block, with no case time beside them to hold them to: their
    # budget alone (BOUND_TIME_FACTOR × max_time_s), off the gate's clock
    taker, no_delay = measuring.perturbation_rounds(
        options, backend, case, prepared, asynchronous, per_call, perturbation.SCHEDULE, held_to_cost=False
    )
    while taker is not None and taker.owed(taker.taken):
        taker.round(prepared.variants, prepared.sync, preludes=prepared.preludes)
    found, unbound = measuring.fitted_bounds(
        options, prepared, list(prepared.variants), taker, asynchronous, no_delay, per_call, shares_cores=shares_host_cores(case.device)
    )
    return {"bounds": {name: bound_to_dict(bound) for name, bound in found.items()}, "note": unbound}


def _teardown() -> None:
    stack = _case.pop("stack", None)
    _case.clear()
    gc.enable()
    if stack is not None:
        stack.close()
    gc.collect()


# --- in the parent ----------------------------------------------------------------------------------------------


@dataclass
class SideWorker:
    """One side's worker process, renewed for every block."""

    name: str
    tree: str | None
    python: str
    environment: Mapping[str, str]
    #: each side's worker whose process runs, shared by the gate's side workers: one process per side at a time
    seats: dict[str, SideWorker] = field(default_factory=dict)
    worker: isolation.Worker = field(init=False)
    _leaving: list[isolation.Worker] = field(init=False, default_factory=list)  # renewed away, not yet joined

    def __post_init__(self) -> None:
        self.worker = isolation.Worker(serve, self.python, self.environment)

    def _seat(self) -> None:
        """Close the side's other process (another interpreter's or framework's cases), frozen but holding its
        memory and any CUDA context, before this one runs."""
        seated = self.seats.get(self.name)
        if seated is not None and seated is not self:
            seated.close()
        self.seats[self.name] = self

    def call(self, command: str, payload: Any, timeout_s: float) -> Any:
        self._seat()
        try:
            return self.worker.call((command, payload), timeout_s)
        finally:
            self.worker.pause()

    def send(self, command: str, payload: Any) -> None:
        """Hand a call to the process without waiting: `receive` gets its answer."""
        self._seat()
        self.worker.send((command, payload))

    def receive(self, timeout_s: float) -> Any:
        try:
            return self.worker.receive(timeout_s)
        finally:
            self.worker.pause()

    def renew(self, backends: Sequence[str]) -> None:
        """End the process (and all the case held) and start a fresh one, importing the `backends`' frameworks;
        `ready` waits for it. Both sides start at once: on a machine of two or more cores their starts overlap.
        The old process is asked to exit and left to do so while the new one imports (a torch process took about
        half a second to end, joined before the next started: a twentieth of a block of configs/ci-gate.yaml);
        `ready` waits for it too, so the side holds one process, and any GPU memory, before a case is set up."""
        self.worker.ask_to_exit()
        self._leaving.append(self.worker)
        self._seat()
        self.worker = isolation.Worker(serve, self.python, self.environment)
        self.worker.send(("prepare", (self.tree, tuple(backends))))

    def ready(self, timeout_s: float) -> None:
        try:
            self.worker.receive(timeout_s)
        finally:
            self.worker.pause()
            self._let_go()

    def close(self) -> None:
        self._let_go()
        self.worker.close()

    def _let_go(self) -> None:
        """Wait for the processes `renew` asked to exit (terminated, then killed, if they do not)."""
        while self._leaving:
            self._leaving.pop().close()


class SideWorkers:
    """A gate's side workers: one per side, interpreter and start-up variables, as `run`'s case workers are one per
    interpreter and variables (engine.case_workers), each side running one process at a time (`seats`)."""

    def __init__(self, sides: Mapping[str, tuple[str | None, str, Mapping[str, str]]]):
        """`sides`: each side's name -> its tree (None: none of its own), its interpreter, and its variables as given
        (--base-env / --head-env)."""
        self._sides = sides
        self._workers: dict[tuple[str, str, tuple[tuple[str, str], ...]], SideWorker] = {}
        self._seats: dict[str, SideWorker] = {}

    def for_case(self, side: str, case: Case) -> SideWorker:
        """The side's worker for the case: its backend's interpreter where the side runs this one (another Python,
        --base-python, is kept); its backend's variables, a CPU case's keeping its framework off the GPUs as `run`'s
        workers do (JAX_PLATFORMS=cpu for JAX), then the side's own."""
        tree, python, variables = self._sides[side]
        backend = get_backend(case.backend)
        python = python if python != sys.executable else (backend.interpreter() or python)
        environment = {**case_workers.environment_for(backend, case_workers.uses_gpu(case)), **variables}
        key = (side, python, tuple(sorted(environment.items())))
        if key not in self._workers:
            self._workers[key] = SideWorker(side, tree, python, environment, seats=self._seats)
        return self._workers[key]

    def close(self) -> None:
        for side_worker in self._workers.values():
            side_worker.close()
