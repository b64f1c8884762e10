"""The cluster tests' real single-node Slurm (tests/support/slurm.sh), started once for the tests that use it."""

from __future__ import annotations

import subprocess

import pytest

from tests.support.cluster_plans import SLURM_SCRIPT


@pytest.fixture(scope="session")
def slurm():
    """The local Slurm's daemons, started for the tests that use it and stopped after them."""
    subprocess.run(["bash", str(SLURM_SCRIPT), "start"], check=True, timeout=180)
    yield
    subprocess.run(["bash", str(SLURM_SCRIPT), "stop"], check=False, timeout=60)
