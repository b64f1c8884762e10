import threading

from asyncbench.workloads.threads import started_pool


def test_every_worker_exists_and_is_initialized_before_the_pool_is_returned():
    initialized = []
    pool = started_pool(
        3, "probe-pool", initializer=lambda tag: initialized.append((threading.current_thread().name, tag)), initargs=("x",)
    )
    try:
        names = {t.name for t in threading.enumerate() if t.name.startswith("probe-pool")}
        assert len(names) == 3
        assert {name for name, _ in initialized} == names
    finally:
        pool.shutdown()
