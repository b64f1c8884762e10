"""Pytest's hooks: the skip rules of the `gpu`, `jax`, `mxnet`, `postgres`, `browser` and `slurm` markers, and the fake
backend fixture."""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import pytest

from tests.support.helpers import FakeBackend


def _cuda_available() -> bool:
    if importlib.util.find_spec("torch") is None:
        return False
    import torch

    return torch.cuda.is_available()


#: `make test` sets ASYNCBENCH_REQUIRE=jax,mxnet: tests of those backends must run there, not skip
REQUIRED = {name.strip() for name in os.environ.get("ASYNCBENCH_REQUIRE", "").split(",") if name.strip()}


def _backend_missing(name: str) -> str | None:
    from asyncbench.backends import get_backend

    return get_backend(name).unavailable_reason()


#: the PostgreSQL server the `postgres` tests use (`make postgres` starts one; `make test` names it)
POSTGRES = os.environ.get("ASYNCBENCH_TEST_POSTGRES")


def pytest_configure(config: pytest.Config) -> None:
    """Under `pytest -n`, no case waits for a calm CPU (measure.reference.CALM_WAIT_VARIABLE: the workers keep both
    cores busy, so each fresh process waited its whole limit once, 80 s of a 226 s part of the suite on one worker;
    the `alone` tests, one at a time, keep the wait), and each worker process's PostgreSQL tests get a schema of
    their own in the test database (named in the URL's search_path, before any test module reads it): each test
    empties its store first, and two workers sharing one schema dropped each other's tables mid-test."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:
        os.environ.setdefault("ASYNCBENCH_CALM_WAIT_S", "0")
    if not (POSTGRES and worker):
        return
    import sqlalchemy as sa

    schema = f"asyncbench_test_{worker}"
    try:
        engine = sa.create_engine(POSTGRES, connect_args={"connect_timeout": 10})
        with engine.begin() as connection:
            connection.execute(sa.text(f"CREATE SCHEMA IF NOT EXISTS {schema}"))
        engine.dispose()
    except sa.exc.OperationalError:
        return  # an unreachable server: its tests fail as they would without a worker
    joined = "&" if "?" in POSTGRES else "?"
    os.environ["ASYNCBENCH_TEST_POSTGRES"] = f"{POSTGRES}{joined}options=-csearch_path%3D{schema}"


CHROMIUM = os.environ.get("ASYNCBENCH_CHROMIUM", "/usr/bin/chromium")


def _missing(name: str) -> str | None:
    if name == "browser":
        if not os.path.exists(CHROMIUM):
            return f"no Chromium at {CHROMIUM} (make chromium)"
        return None if importlib.util.find_spec("playwright") else "playwright not installed (pip install -e '.[test]')"
    if name == "postgres":
        return None if POSTGRES else "no PostgreSQL server named (make postgres, then ASYNCBENCH_TEST_POSTGRES=postgresql://...)"
    if name == "slurm":
        if importlib.util.find_spec("submitit") is None:
            return "submitit not installed (pip install -e '.[test]')"
        return None if shutil.which("slurmctld") and os.path.exists("/etc/slurm/slurm.conf") else "no local Slurm (make slurm)"
    return _backend_missing(name)


#: markers whose tests share one server or cluster between them (the one Slurm controller the session fixture
#: starts): under `pytest -n --dist loadgroup`, each such set was to run on one process, one test after another
#: (make test distributes by file, `--dist loadfile`: under loadgroup (pytest 9.2, pytest-xdist 3.8) the Slurm
#: group did not hold, and one process's test stopping slurmctld failed the other's jobs. Every test on the real
#: Slurm is in one file now, tests/e2e/cluster/test_slurm.py, but the one that stops the controller: marked `alone`)
SHARED_SERVERS = ("slurm",)


def _group(item: pytest.Item) -> str:
    """The xdist group `item` runs in: its shared server's, else its file's (a module-scoped fixture, such as an
    ab run several tests read, is then made once, not once per process)."""
    uses = set(item.keywords) | set(getattr(item, "fixturenames", ()))
    return next((name for name in SHARED_SERVERS if name in uses), item.nodeid.partition("::")[0])


#: what marks a file's `alone` tests in its text: `make test` runs that phase on the files holding it (ALONE_FILES)
ALONE_MARK = "mark.alone"


def _alone_elsewhere(items: list[pytest.Item]) -> list[str]:
    """The `alone` tests whose file's text lacks ALONE_MARK (marked from elsewhere): make test's phase of them would
    never collect them."""
    files = {Path(str(item.fspath)) for item in items if "alone" in item.keywords}
    hidden = {path for path in files if ALONE_MARK not in path.read_text(encoding="utf-8")}
    return [item.nodeid for item in items if Path(str(item.fspath)) in hidden and "alone" in item.keywords]


@pytest.hookimpl(tryfirst=True)  # before `-m alone` / `-m "not alone"` selects by the markers added here
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    hidden = _alone_elsewhere(items)
    if hidden:
        raise pytest.UsageError(f"`alone` tests marked from outside their file (make test would skip them): {hidden[:3]}")
    for item in items:
        item.add_marker(pytest.mark.xdist_group(_group(item)))
    for name in ("jax", "mxnet", "postgres", "browser", "slurm"):
        reason = _missing(name)
        if reason is None:
            continue
        if name in REQUIRED:
            raise pytest.UsageError(f"ASYNCBENCH_REQUIRE names {name}, but it cannot run here: {reason}")
        for item in items:
            if name in item.keywords:
                item.add_marker(pytest.mark.skip(reason=reason))
    if _cuda_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def fake_backend() -> FakeBackend:
    return FakeBackend()


@pytest.fixture(autouse=True)
def _no_machine_reference_on_the_simulated_device(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The machine's reference (measure.reference: a fixed product between a case's rounds, the CPU's speed) on the
    stream test device measures the simulator's modelled sleeps, not the machine: 0.09 s a product on its inline CPU,
    25 of a test's 26 s. The streams tests assert what the device does, never the reference: it is left out there
    (its own tests run it on real backends)."""
    if request.node.get_closest_marker("streams") is None:
        return
    from asyncbench.measure import reference

    real = reference.taker_for

    def taker_for(backend, device, early_rounds=6):
        return None if backend.name == "streamsim" else real(backend, device, early_rounds)

    monkeypatch.setattr(reference, "taker_for", taker_for)
