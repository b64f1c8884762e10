"""JAX in the processes asyncbench starts: the parent never starts it, its worker is its own, the user's
process keeps JAX's defaults, and its profiler leaves nothing behind.

Each check runs in a fresh interpreter: whether jax is imported, and how it
was configured, is process state (and JAX's threads stay out of this one).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from asyncbench.backends.jax_backend import WORKER_ENVIRONMENT, JaxBackend
from asyncbench.workloads import BUILT_IN

pytestmark = pytest.mark.jax
ROOT = Path(__file__).resolve().parents[2]


def python(code: str, **env: str) -> dict:
    """Run `code` in a fresh interpreter; it prints one JSON object last."""
    environment = {key: value for key, value in os.environ.items() if key != "JAX_ENABLE_X64"}
    environment.update(PYTHONPATH=str(ROOT), **env)
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300, env=environment)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_listing_jax_devices_starts_no_jax_in_this_process():
    """jax.devices() starts every platform: on a GPU machine, CUDA contexts in the parent."""
    found = python("""
        import json, sys
        from asyncbench.backends import get_backend
        statuses = get_backend("jax").probe()
        print(json.dumps({"imported": "jax" in sys.modules, "devices": [s.device for s in statuses if s.available]}))
    """)
    assert found["imported"] is False
    assert "cpu" in found["devices"]


def test_no_gpu_is_explained_in_jaxs_own_words():
    found = python("""
        import json
        from asyncbench.backends.jax_backend import JaxBackend, _devices_here
        gpu = [s for s in JaxBackend().probe() if s.device.startswith("cuda")][0]
        print(json.dumps({"detail": gpu.detail, "error": _devices_here().get("gpu_error")}))
    """)
    assert found["error"]
    assert found["error"] in found["detail"]


def test_jax_cases_get_a_worker_of_their_own_that_does_not_preallocate_gpu_memory():
    assert JaxBackend().worker_environment() == {"XLA_PYTHON_CLIENT_PREALLOCATE": "false"}
    assert WORKER_ENVIRONMENT["XLA_PYTHON_CLIENT_PREALLOCATE"] == "false"


def test_a_case_device_is_jaxs_default_device_while_the_case_runs():
    found = python("""
        import json
        from asyncbench.backends.jax_backend import JaxBackend, _jax
        backend = JaxBackend()
        with backend.activate("cpu:1"):
            inside = [str(d) for d in _jax().numpy.ones(3).devices()]
        print(json.dumps({"inside": inside, "second": str(backend._device("cpu:1"))}))
    """)
    assert found["inside"] == [found["second"]]


def test_the_users_process_keeps_jaxs_float32_default():
    found = python("""
        import json
        from asyncbench.backends.jax_backend import JaxBackend, _jax
        JaxBackend().ones((2,), "float32", "cpu")
        print(json.dumps({"dtype": str(_jax().numpy.zeros(3).dtype)}))
    """)
    assert found["dtype"] == "float32"


def test_float64_on_jax_is_skipped_unless_the_user_enabled_it(monkeypatch):
    monkeypatch.delenv("JAX_ENABLE_X64", raising=False)
    if "jax" in sys.modules:
        pytest.skip("jax is imported in this process: its own setting decides")
    matmul = BUILT_IN["matmul"]
    reason = matmul.skip_reason(JaxBackend(), "cpu", {**matmul.defaults(quick=True), "dtype": "float64"})
    assert reason is not None
    assert "JAX_ENABLE_X64=1" in reason
    monkeypatch.setenv("JAX_ENABLE_X64", "1")
    assert matmul.skip_reason(JaxBackend(), "cpu", {**matmul.defaults(quick=True), "dtype": "float64"}) is None


def test_built_in_workloads_compute_float32_products_in_full_precision():
    found = python("""
        import json
        from asyncbench.backends.jax_backend import JaxBackend, _jax
        jax = _jax()
        before = jax.config.jax_default_matmul_precision
        with JaxBackend().full_precision():
            inside = jax.config.jax_default_matmul_precision
        print(json.dumps({"before": before, "inside": inside}))
    """)
    assert found["before"] is None
    assert found["inside"] == "highest"


def test_a_failed_jax_trace_leaves_no_temporary_folder(tmp_path):
    found = python(
        """
        import json, os, tempfile
        from asyncbench.backends.profilers import JaxProfiler
        profiler = JaxProfiler()
        try:
            with profiler:
                raise ValueError("the traced run failed")
        except ValueError:
            pass
        print(json.dumps({"left": os.listdir(tempfile.gettempdir())}))
        """,
        TMPDIR=str(tmp_path),
    )
    assert not [name for name in found["left"] if name.startswith("asyncbench-jax-trace-")]


def test_random_arrays_of_one_shape_share_one_compiled_generator():
    """Compiling jax.random.normal costs 0.3-0.9 s on a CPU: a case set up with the shape of an earlier one (--quick's
    matmul, barrier and conversion) reuses its generator, and still gets its own stream from its own key."""
    found = python("""
        import json, logging
        from asyncbench.backends.jax_backend import JaxBackend
        compiled = []
        class Count(logging.Handler):
            def emit(self, record):
                if "Finished XLA compilation of jit(generate)" in record.getMessage():
                    compiled.append(record.getMessage())
        for name in ("jax._src.dispatch", "jax._src.interpreters.pxla", "jax._src.compiler"):
            logging.getLogger(name).addHandler(Count())
        import jax
        jax.config.update("jax_log_compiles", True)
        backend = JaxBackend()
        first, second, other = (backend.random(shape, "float32", "cpu") for shape in ((64, 64), (64, 64), (32, 64)))
        a, b, c = first(), second(), other()
        print(json.dumps({"compiled": len(compiled), "same_start": bool((a == b).all()), "next_differs": bool((first() != a).any())}))
    """)
    assert found["compiled"] == 2  # (64, 64) once for both, (32, 64) once
    assert found["same_start"]
    assert found["next_differs"]


def test_the_barrier_waits_for_everything_queued_and_wakes_no_worker_when_nothing_is():
    """A device-wide wait that woke one of XLA's worker threads for each sample cost ~100-180 µs a sample (a quarter of
    a sample of 20 tiny steps); the barrier runs inline when the device is idle and queues behind its work otherwise.
    The woken workers are counted, not timed: each wake is a voluntary context switch of a thread that is not this one."""
    found = python("""
        import json, os, threading
        from asyncbench.backends.jax_backend import JaxBackend, _jax
        jax = _jax()
        backend = JaxBackend()
        big = jax.device_put(jax.numpy.ones((1024, 1024), dtype="float32"), jax.devices("cpu")[0])
        product = jax.jit(lambda m: m @ m)
        product(big).block_until_ready()
        backend.barrier("cpu")
        ordered = 0
        for _ in range(10):
            queued = [product(big) for _ in range(3)]
            backend.barrier("cpu")
            ordered += all(array.is_ready() for array in queued)
        me = threading.get_native_id()

        def others_switches():
            total = 0
            for tid in os.listdir("/proc/self/task"):
                if int(tid) != me:
                    with open(f"/proc/self/task/{tid}/status") as status:
                        total += sum(int(line.split()[1]) for line in status if line.startswith("voluntary_ctxt_switches"))
            return total

        before = others_switches()
        for _ in range(2000):
            backend.barrier("cpu")
        print(json.dumps({"ordered": ordered, "woken": others_switches() - before}))
    """)
    assert found["ordered"] == 10  # every product queued before the barrier had run when it returned
    assert found["woken"] < 200, found  # the product that was the barrier woke workers 1265 times in 2000 here


def test_a_sample_ends_on_its_result_only_where_nothing_it_dropped_is_still_queued():
    """A sample ends on the arrays its step returned (as a hand loop ends on its last result, without issuing the
    barrier's computation inside the sample) only where the barrier's computation, issued after the clock, ran at
    once: a product the step issued and dropped is still in the sample's done time. No such end on a GPU's stream."""
    found = python("""
        import json, time
        from asyncbench.backends.jax_backend import JaxBackend, _jax
        from asyncbench.measure.timing import take_sample
        jax = _jax()
        backend = JaxBackend()
        device = jax.devices("cpu")[0]
        big = jax.device_put(jax.numpy.ones((1024, 1024), dtype="float32"), device)
        tiny = jax.device_put(jax.numpy.ones((1, 2), dtype="float32"), device)
        product = jax.jit(lambda m: m @ m)
        product(big).block_until_ready()
        ends = backend.result_wait("cpu")
        sync = lambda: backend.barrier("cpu")
        def product_alone():
            started = time.perf_counter()
            product(big).block_until_ready()
            return time.perf_counter() - started
        alone = sorted(product_alone() for _ in range(5))[2]

        def dropped():
            product(big)
            return tiny + 1

        kept = product(big)
        kept.block_until_ready()
        queued_then = sorted(take_sample(dropped, sync, None, result_wait=ends)[1] for _ in range(5))[2]
        product(big)
        behind = ends.settled()
        backend.barrier("cpu")
        started = time.perf_counter()
        waited_tree = ends.wait((tiny + 1, {"kept": product(big)}))  # a tree of results: each leaf waited for
        tree = time.perf_counter() - started
        print(json.dumps({
            "alone": alone, "dropped": queued_then, "behind": behind, "idle": ends.settled(), "tree": tree, "waited_tree": waited_tree,
            "none": ends.wait(None), "gpu": backend.result_wait("cuda:0") is None,
        }))
    """)
    assert found["dropped"] > 0.5 * found["alone"], found  # the dropped product was waited for, not the tiny result alone
    assert found["behind"] is False
    assert found["idle"] is True
    assert found["waited_tree"] is True
    assert found["tree"] > 0.5 * found["alone"], found
    assert found["none"] is False  # a step that returned nothing of JAX's ends at the barrier
    assert found["gpu"]
