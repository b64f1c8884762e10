"""`ab` keeps one process per side at a time: a side's process for other cases (another framework's, frozen with
its CUDA context) is closed before the side's next process runs, so a GPU case has two contexts on its GPU (one
per side, which pairing in two processes needs), not four. A GPU that admits one process is refused in one line."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from asyncbench.backends import cuda_devices
from asyncbench.engine import side_process
from asyncbench.errors import InputError
from asyncbench.results.model import Case, Settings
from asyncbench.session import sides

LEDGERED = '''
import os
from pathlib import Path

from asyncbench.workloads.base import Prepared, Workload


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"


class Ledgered(Workload):
    """Opens "the GPU" in a ledger at set-up: fails when more than the two sides' processes hold it."""

    name = "ledgered"
    summary = "counts the live processes that set a case up"
    variants = ("run",)

    def setup(self, backend, device, params):
        ledger = Path(os.environ["ASYNCBENCH_TEST_GPU_LEDGER"])
        (ledger / str(os.getpid())).touch()
        live = sorted(pid for path in ledger.iterdir() if _alive(pid := int(path.name)))
        if len(live) > 2:
            raise RuntimeError(f"{len(live)} processes hold the GPU: {live}")
        return Prepared(variants={"run": lambda: sum(range(2000))}, sync=lambda: None)
'''


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_a_gate_of_two_frameworks_keeps_two_processes_not_four(tmp_path, monkeypatch):
    """numpy's and JAX's cases run in side workers of different variables; before, the numpy pair stayed (frozen)
    while the JAX pair measured: four processes set up on one device."""
    from asyncbench.session import paired
    from asyncbench.session.requests import ABRequest, Outputs, Selection

    ledger = tmp_path / "ledger"
    ledger.mkdir()
    monkeypatch.setenv("ASYNCBENCH_TEST_GPU_LEDGER", str(ledger))
    (tmp_path / "ledgered.py").write_text(LEDGERED)
    selection = Selection(workloads=(f"{tmp_path / 'ledgered.py'}:Ledgered",), backends=("numpy", "jax"), devices=("cpu",), quick=True)
    saved = tmp_path / "ab.json"
    request = ABRequest(
        selection=selection,
        base_env={"ASYNCBENCH_TEST_SIDE": "base"},
        gate_time_s=10.0,
        gate_time_max_s=10.0,
        progress=False,
        outputs=Outputs(str(saved)),
    )
    paired.run(request, lambda line: None)
    rows = {case["id"]: (case["status"], case.get("reason")) for case in json.loads(saved.read_text())["cases"]}
    assert len(rows) == 2
    assert all(status == "ok" for status, _ in rows.values()), rows


def test_renewing_a_side_closes_the_side_s_other_process_and_leaves_the_other_side_alone():
    seats: dict[str, side_process.SideWorker] = {}
    numpy_base = side_process.SideWorker("base", None, sys.executable, {}, seats=seats)
    jax_base = side_process.SideWorker("base", None, sys.executable, {"JAX_PLATFORMS": "cpu"}, seats=seats)
    head = side_process.SideWorker("head", None, sys.executable, {}, seats=seats)
    try:
        for side in (numpy_base, head):
            side.renew([])
            side.ready(60.0)
        assert numpy_base.worker.pid is not None
        jax_base.renew([])
        jax_base.ready(60.0)
        assert numpy_base.worker.pid is None  # closed: its process is gone
        assert head.worker.pid is not None
        assert jax_base.worker.pid is not None
    finally:
        for side in (numpy_base, jax_base, head):
            side.close()


def _case(device: str) -> Case:
    return Case(f"m[torch,{device}]", "m", "matmul", "torch", device, {}, Settings())


def test_ab_refuses_a_gpu_case_on_a_gpu_that_admits_one_process_in_one_line(monkeypatch):
    monkeypatch.setattr(cuda_devices, "compute_modes", lambda: {0: "default", 1: "exclusive_process"})
    with pytest.raises(InputError) as refused:
        sides.check_gpus([_case("cpu"), _case("cuda:0")])
    message = str(refused.value)
    assert message.startswith("cuda:1 admits one process at a time (compute mode EXCLUSIVE_PROCESS), and ab measures m[torch,cuda:0]")
    assert "\n" not in message
    sides.check_gpus([_case("cpu")])  # no GPU case: nothing to refuse
    monkeypatch.setattr(cuda_devices, "compute_modes", lambda: {0: "default"})
    sides.check_gpus([_case("cuda:0")])
    assert os.environ.get("CUDA_VISIBLE_DEVICES") != ""  # nothing here hid the GPUs to get there
