"""`ab` keeps one process per side at a time: a side's process for other cases (another framework's, frozen with
its CUDA context) is closed before the side's next process runs, so a GPU case has two contexts on its GPU (one
per side, which pairing in two processes needs), not four. (A GPU that admits one process is refused in one line:
tests/session/test_sides.py.)"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from asyncbench.engine import side_process

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
