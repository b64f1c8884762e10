"""The NVML guard (host.nvml) against a model of NVML: a fake `pynvml` with two GPUs whose clocks, limits, compute
modes and throttle reasons a test sets. No GPU is needed; the runner's use of it is checked through run_case."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from asyncbench.engine import runner
from asyncbench.host import cuda_ids, nvml
from asyncbench.results.model import Case, Settings
from tests.support.fake_nvml import FakeNvml, OneVariant
from tests.support.helpers import FakeBackend

POWER_CAP, THERMAL = 0x4, 0x40  # nvmlClocksEventReasonSwPowerCap, ...HwThermalSlowdown
IDLE = 0x1  # nvmlClocksEventReasonGpuIdle: a GPU at rest, not a throttle


@pytest.fixture
def fake_nvml(monkeypatch):
    def install(**kwargs: Any) -> FakeNvml:
        fake = FakeNvml(**kwargs)
        monkeypatch.setitem(sys.modules, "pynvml", fake)
        nvml._library.cache_clear()
        return fake

    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    # cuda:N is NVML's GPU N only where CUDA counts in PCI order too, and the driver is not asked here (no CUDA):
    # which GPU is which without either is tests/host/test_nvml_gpu_identity.py's
    monkeypatch.setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
    monkeypatch.setattr(cuda_ids, "driver_identities", lambda: None)
    yield install
    nvml._library.cache_clear()


def test_compute_mode_of_a_gpu_as_cuda_numbers_it_here(fake_nvml, monkeypatch):
    fake_nvml(compute_modes=(0, 3))
    assert nvml.compute_mode(0) == "DEFAULT"
    assert nvml.compute_mode(1) == "EXCLUSIVE_PROCESS"
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")  # this process's cuda:0 is the driver's GPU 1
    assert nvml.compute_mode(0) == "EXCLUSIVE_PROCESS"
    assert nvml.compute_mode(1) is None
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-bbbb,GPU-aaaa")
    assert nvml.compute_mode(1) == "DEFAULT"


def test_without_nvidia_ml_py_nothing_is_read_and_the_reason_says_so(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # `import pynvml` raises ImportError
    nvml._library.cache_clear()
    try:
        assert nvml.guard("cuda:0", 0, 1) is None
        assert nvml.compute_mode(0) is None
        assert nvml.snapshot() == {}
        assert "nvidia-ml-py not installed" in (nvml.unavailable_reason() or "")
    finally:
        nvml._library.cache_clear()


def test_a_cpu_case_is_never_guarded(fake_nvml):
    fake_nvml()
    assert nvml.guard("cpu", 0, 1) is None
    assert nvml.guard("cpu:1", 0, 1) is None


def test_the_environment_snapshot_names_each_gpus_model_mode_and_power_limit(fake_nvml):
    fake_nvml(compute_modes=(0, 3))
    gpus = nvml.snapshot()
    assert list(gpus) == ["cuda:0", "cuda:1"]
    assert gpus["cuda:1"] == {
        "name": "NVIDIA H100 80GB HBM3",
        "compute_mode": "EXCLUSIVE_PROCESS",
        "power_limit_w": 400.0,
        "default_power_limit_w": 700.0,
        "max_sm_clock_mhz": 1980,
    }


def test_the_guard_counts_rounds_and_reads_at_most_every_read_every_s(fake_nvml):
    """Warm-up samples are not rounds, and a reading stands for READ_EVERY_S: the rounds it covers are judged by it."""
    fake = fake_nvml(throttles=(0, 0, THERMAL, IDLE, 0))  # before sampling, then the reads in sampling, then after
    now = [0.0]

    def clock() -> float:
        now[0] += nvml.READ_EVERY_S * 0.6  # a read every second sample
        return now[0]

    guard = nvml.guard("cuda:0", warmup_samples=2, per_round=1, clock=clock)
    assert guard is not None
    for _ in range(2 + 8):  # two warm-up samples, eight rounds of one sample
        guard.before_sample()
    guarded = guard.finish()
    assert fake.reads == 1 + 4 + 1  # before; rounds 0, 2, 4 and 6; after
    assert guarded.rounds == 8
    assert guarded.throttled_rounds == (2, 3)  # the thermal reading of round 2 stood into round 3; idle is no throttle
    assert guarded.reasons == ("HwThermalSlowdown",)
    assert guarded.warning() == (
        "GPU throttled in 2 of 8 rounds (HwThermalSlowdown): rounds 2, 3; their times are slower than the GPU's own"
    )


def test_rounds_of_several_variants_are_counted_as_rounds(fake_nvml, monkeypatch):
    fake_nvml(throttles=(0, 0, 0, POWER_CAP, 0, 0, 0, 0))  # before; three rounds of two samples after one warm-up round
    monkeypatch.setattr(nvml, "READ_EVERY_S", 0.0)
    guard = nvml.guard("cuda:0", warmup_samples=2, per_round=2)
    assert guard is not None
    for _ in range(2 + 3 * 2):
        guard.before_sample()
    guarded = guard.finish()
    assert guarded.rounds == 3
    assert guarded.throttled_rounds == (1,)


def test_idle_alone_is_no_throttle(fake_nvml):
    fake_nvml(throttles=(IDLE, IDLE, IDLE, IDLE))
    guard = nvml.guard("cuda:0", 0, 1)
    assert guard is not None
    guard.before_sample()
    guarded = guard.finish()
    assert guarded.throttled_rounds == ()
    assert guarded.warning() is None
    assert "not throttled" in guarded.note()


def test_a_gpu_case_records_the_gpu_before_and_after_sampling_and_its_throttled_rounds(fake_nvml, monkeypatch):
    fake_nvml(throttles=(0, 0, POWER_CAP, POWER_CAP, 0, 0, 0, 0))  # before; six rounds; after
    monkeypatch.setattr(nvml, "READ_EVERY_S", 0.0)  # a reading before every sample
    settings = Settings(warmup=1, min_samples=6, max_samples=6, max_time_s=5.0)
    case = Case(id="c", experiment="c", workload="one_variant", backend="fake", device="cuda:0", params={}, settings=settings)
    result = runner.run_case(case, OneVariant(), FakeBackend(devices=("cuda:0",)))
    assert result.status == "ok", result.reason
    assert "NVML cuda:0: before sampling SM 1980 MHz, memory 2619 MHz, power limit 700 W, 41 °C, compute mode DEFAULT" in (
        result.note or ""
    )
    assert "after SM 1980 MHz" in (result.note or "")
    assert "GPU throttled in 2 of 6 rounds (SwPowerCap): rounds 1, 2; their times are slower than the GPU's own" in result.warnings
