"""The NVML guard: what a GPU's clocks, power limit, temperature, compute mode and throttle reasons were around a case.

Through NVIDIA's management library (nvidia-ml-py, imported as `pynvml`), imported lazily and only for a case on a
`cuda` device or a GPU machine's environment: NVML opens no CUDA context, so reading it in the parent or beside a
case's own context never takes a GPU from a process under EXCLUSIVE_PROCESS. Where pynvml is not installed or NVML
does not start (no driver), everything here answers None and nothing is recorded.

What a case gets (runner): its GPU's state before and after sampling (a note), and which rounds were taken while the
GPU throttled (a warning naming the rounds and the reasons). The throttle reasons are read before a sample, outside
it, at most once every READ_EVERY_S: a round is judged by the latest reading, and so is the round that follows the
last sample (the reading after sampling). A GPU or driver that does not report throttle reasons (NVMLError_NotSupported)
leaves them unknown, said as such: never "not throttled".

Which GPU `cuda:N` is (host.cuda_ids): the one whose UUID CUDA's driver gives device N, never a position in NVML's
PCI order (CUDA numbers GPUs fastest first by default, and CUDA_VISIBLE_DEVICES reorders them). Where that cannot be
told (a MIG instance, an index in CUDA's default order without the driver's answer, an ambiguous UUID prefix), the
case's note says so (`Unidentified`), the environment records why, and no GPU's figures stand for it.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass
from typing import Any, Callable

from asyncbench.host import cuda_ids
from asyncbench.host.cuda_ids import Gpu

#: NVML's compute modes (nvmlComputeMode_t)
COMPUTE_MODES = {0: "DEFAULT", 1: "EXCLUSIVE_THREAD", 2: "PROHIBITED", 3: "EXCLUSIVE_PROCESS"}
#: the clock event ("throttle") reasons that slow a GPU below what it was asked for (nvmlClocksEventReason*): idle,
#: application clocks and sync boost are left out (a GPU at rest, or the clocks the user chose)
THROTTLE_REASONS = {
    0x4: "SwPowerCap",
    0x8: "HwSlowdown",
    0x20: "SwThermalSlowdown",
    0x40: "HwThermalSlowdown",
    0x80: "HwPowerBrakeSlowdown",
}
# NVML's clock and sensor selectors (nvmlClockType_t, nvmlTemperatureSensors_t)
_CLOCK_SM, _CLOCK_MEM, _TEMPERATURE_GPU = 1, 2, 0
# One throttle-reason read costs tens of microseconds (an ioctl): a case of microsecond samples would spend more time
# reading than measuring, so a reading stands for the rounds of the next 2 ms (a throttle lasts far longer).
READ_EVERY_S = 0.002


@functools.lru_cache(maxsize=1)
def _library() -> tuple[Any, str | None]:
    """(pynvml, None) with NVML started, or (None, why not): once per process."""
    try:
        import pynvml
    except ImportError:
        return None, "nvidia-ml-py not installed (pip install 'asyncbench[gpu]')"
    try:
        pynvml.nvmlInit()
    except Exception as exc:  # noqa: BLE001 - NVMLError_LibraryNotFound, _DriverNotLoaded...: no NVML here
        return None, f"NVML did not start: {type(exc).__name__}: {exc}".strip()
    return pynvml, None


def unavailable_reason() -> str | None:
    """Why NVML cannot be read here, or None where it can."""
    return _library()[1]


def _gpu(nvml: Any, index: int) -> Gpu | None:
    """`cuda:index` to NVML, or None where this process has no such CUDA device."""
    gpus = cuda_ids.nvml_gpus(nvml)
    return gpus[index] if 0 <= index < len(gpus) else None


def _read(read: Callable[[], Any]) -> Any:
    """One NVML query's answer, or None where this GPU or driver does not support it."""
    try:
        return read()
    except Exception:  # noqa: BLE001 - NVMLError_NotSupported, _NoPermission...: one figure missing, not the rest
        return None


def _throttle_bits(nvml: Any, handle: Any) -> int | None:
    """The clock event reasons set now, or None where the GPU or driver does not report them."""
    # renamed "clocks event reasons" in NVML 12.2; the old name stays in older nvidia-ml-py
    read = getattr(nvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or nvml.nvmlDeviceGetCurrentClocksThrottleReasons
    bits = _read(lambda: read(handle))
    return int(bits) if bits is not None else None


def throttle_names(bits: int | None) -> tuple[str, ...] | None:
    """The throttle reasons set in `bits` (THROTTLE_REASONS), in bit order; None where `bits` is unknown (not reported:
    an empty tuple would say "not throttled")."""
    if bits is None:
        return None
    return tuple(name for bit, name in THROTTLE_REASONS.items() if bits & bit)


#: how a reading without throttle reasons is said
REASONS_UNKNOWN = "throttle reasons unknown (the GPU or driver did not report them)"


@dataclass(frozen=True)
class GpuState:
    """One reading of a GPU (None: this GPU or driver does not report it)."""

    sm_clock_mhz: int | None
    memory_clock_mhz: int | None
    power_limit_w: float | None
    temperature_c: int | None
    compute_mode: str | None
    #: None: not reported (unknown, not "not throttled")
    throttle_reasons: tuple[str, ...] | None

    def text(self) -> str:
        figures = [
            f"SM {self.sm_clock_mhz} MHz" if self.sm_clock_mhz is not None else None,
            f"memory {self.memory_clock_mhz} MHz" if self.memory_clock_mhz is not None else None,
            f"power limit {self.power_limit_w:.0f} W" if self.power_limit_w is not None else None,
            f"{self.temperature_c} °C" if self.temperature_c is not None else None,
            f"compute mode {self.compute_mode}" if self.compute_mode else None,
            _reasons_text(self.throttle_reasons),
        ]
        return ", ".join(f for f in figures if f)


def _reasons_text(reasons: tuple[str, ...] | None) -> str:
    if reasons is None:
        return REASONS_UNKNOWN
    return ("throttled: " + ", ".join(reasons)) if reasons else "not throttled"


def _state(nvml: Any, handle: Any) -> GpuState:
    limit_mw = _read(lambda: nvml.nvmlDeviceGetEnforcedPowerLimit(handle))
    mode = _read(lambda: nvml.nvmlDeviceGetComputeMode(handle))
    return GpuState(
        sm_clock_mhz=_read(lambda: int(nvml.nvmlDeviceGetClockInfo(handle, _CLOCK_SM))),
        memory_clock_mhz=_read(lambda: int(nvml.nvmlDeviceGetClockInfo(handle, _CLOCK_MEM))),
        power_limit_w=limit_mw / 1e3 if limit_mw is not None else None,
        temperature_c=_read(lambda: int(nvml.nvmlDeviceGetTemperature(handle, _TEMPERATURE_GPU))),
        compute_mode=COMPUTE_MODES.get(mode, str(mode)) if mode is not None else None,
        throttle_reasons=throttle_names(_throttle_bits(nvml, handle)),
    )


def _index(device: str) -> int | None:
    kind, _, index = device.partition(":")
    return int(index or 0) if kind == "cuda" and (index or "0").isdigit() else None


def _handle(index: int | None) -> tuple[Any, Gpu | None]:
    """(pynvml, `cuda:index` to NVML); the Gpu is None without NVML or without such a CUDA device."""
    nvml, _ = _library()
    return nvml, (_gpu(nvml, index) if nvml is not None and index is not None else None)


def state(device: str) -> GpuState | None:
    """The GPU of `device` (`cuda:N`) now, or None (not a GPU, no NVML, no such GPU, or which GPU it is unknown)."""
    nvml, gpu = _handle(_index(device))
    return _state(nvml, gpu.handle) if gpu is not None and gpu.handle is not None else None


def _compute_mode(nvml: Any, handle: Any) -> str | None:
    mode = _read(lambda: nvml.nvmlDeviceGetComputeMode(handle))
    return COMPUTE_MODES.get(mode, str(mode)) if mode is not None else None


def compute_mode(index: int) -> str | None:
    """The compute mode of `cuda:index` (DEFAULT, EXCLUSIVE_PROCESS, PROHIBITED...), or None where NVML cannot say
    (or which GPU it is is unknown). Under EXCLUSIVE_PROCESS a second process's CUDA context on that GPU fails."""
    nvml, gpu = _handle(index)
    return _compute_mode(nvml, gpu.handle) if gpu is not None and gpu.handle is not None else None


def snapshot() -> dict[str, dict[str, Any]]:
    """Every GPU this process may use, for a results file's environment: model, compute mode, power limit and its
    default (an administrator's cap slows every case), max SM clock; `unknown` (why) for a `cuda:N` whose GPU could
    not be told. Empty where NVML cannot be read."""
    nvml, _ = _library()
    if nvml is None:
        return {}
    return {f"cuda:{index}": _described(nvml, gpu) for index, gpu in enumerate(cuda_ids.nvml_gpus(nvml))}


def _described(nvml: Any, gpu: Gpu) -> dict[str, Any]:
    """One GPU for the environment, or why which GPU it is could not be told."""
    handle = gpu.handle
    if handle is None:
        return {"unknown": gpu.unknown or "which GPU this is could not be told"}
    name = _read(lambda: nvml.nvmlDeviceGetName(handle))
    limit = _read(lambda: nvml.nvmlDeviceGetEnforcedPowerLimit(handle))
    default = _read(lambda: nvml.nvmlDeviceGetPowerManagementDefaultLimit(handle))
    return {
        "name": name.decode() if isinstance(name, bytes) else name,
        "compute_mode": _compute_mode(nvml, handle),
        "power_limit_w": limit / 1e3 if limit is not None else None,
        "default_power_limit_w": default / 1e3 if default is not None else None,
        "max_sm_clock_mhz": _read(lambda: int(nvml.nvmlDeviceGetMaxClockInfo(handle, _CLOCK_SM))),
    }


@dataclass(frozen=True)
class Guarded:
    """What the guard saw around one case's sampling."""

    device: str
    before: GpuState
    after: GpuState
    rounds: int
    #: the rounds (0-based, as sampled) taken while a reading showed a throttle reason
    throttled_rounds: tuple[int, ...]
    #: every throttle reason seen during sampling
    reasons: tuple[str, ...]
    #: the rounds judged by a reading without throttle reasons (not reported): neither throttled nor not
    unknown_rounds: tuple[int, ...] = ()

    def note(self) -> str:
        """The GPU before and after sampling, for the row's note, and the rounds whose throttle reasons are unknown."""
        said = f"NVML {self.device}: before sampling {self.before.text()}; after {self.after.text()}"
        if self.unknown_rounds:
            unknown = len(self.unknown_rounds)
            said += f"; throttle reasons unknown in {unknown} of {self.rounds} rounds (the GPU or driver did not report them)"
        return said

    def warning(self) -> str | None:
        """The throttled rounds and why (None: none throttled)."""
        if not self.throttled_rounds:
            return None
        shown = ", ".join(str(r) for r in self.throttled_rounds[:MAX_ROUNDS_NAMED])
        more = f" and {len(self.throttled_rounds) - MAX_ROUNDS_NAMED} more" if len(self.throttled_rounds) > MAX_ROUNDS_NAMED else ""
        return (
            f"GPU throttled in {len(self.throttled_rounds)} of {self.rounds} rounds ({', '.join(self.reasons)}): "
            f"rounds {shown}{more}; their times are slower than the GPU's own"
        )


#: rounds named in the warning; the count says how many there were
MAX_ROUNDS_NAMED = 20


class RoundGuard:
    """Called before each sample (measure.procedure's `before_sample`): warm-up samples first, then `per_round` samples a
    round. Reads the throttle reasons at most every READ_EVERY_S and marks the round being taken when one is set."""

    def __init__(self, device: str, nvml: Any, handle: Any, warmup_samples: int, per_round: int, clock: Callable[[], float]):
        self._device, self._nvml, self._handle, self._clock = device, nvml, handle, clock
        self._warmup, self._per_round = warmup_samples, max(1, per_round)
        self._calls, self._read_at = 0, float("-inf")
        self._current: tuple[str, ...] | None = ()
        self._marked: dict[int, None] = {}
        self._unknown: dict[int, None] = {}
        self._seen: dict[str, None] = {}
        self.before = _state(nvml, handle)

    def _round(self) -> int:
        return (self._calls - self._warmup) // self._per_round

    def _mark(self, reasons: tuple[str, ...] | None, round_index: int) -> None:
        if round_index < 0:
            return
        if reasons is None:
            self._unknown[round_index] = None
        elif reasons:
            self._marked[round_index] = None
            self._seen.update(dict.fromkeys(reasons))

    def before_sample(self) -> None:
        now = self._clock()
        if self._calls >= self._warmup and now - self._read_at >= READ_EVERY_S:
            self._current, self._read_at = throttle_names(_throttle_bits(self._nvml, self._handle)), now
        if self._calls >= self._warmup:
            self._mark(self._current, self._round())
        self._calls += 1

    def finish(self) -> Guarded:
        after = _state(self._nvml, self._handle)
        rounds = max(0, -(-(self._calls - self._warmup) // self._per_round))  # rounds begun
        self._mark(after.throttle_reasons, rounds - 1)  # the last round ended as the reading after it found
        # a round some reading found throttled is throttled; one only unanswered readings judged is unknown
        unknown = tuple(sorted(r for r in self._unknown if r not in self._marked))
        return Guarded(self._device, self.before, after, rounds, tuple(sorted(self._marked)), tuple(self._seen), unknown)


@dataclass(frozen=True)
class Unidentified:
    """The guard of a case on a `cuda:N` whose GPU could not be told (a MIG instance, an index in CUDA's default order
    without the driver's answer): it reads nothing, and its note says why, so no other GPU's figures stand for it."""

    device: str
    why: str

    def before_sample(self) -> None:
        """Nothing is read: which GPU to read is unknown."""

    def finish(self) -> Unidentified:
        return self

    def note(self) -> str:
        return f"NVML {self.device}: not read: which GPU this is could not be told ({self.why})"

    def warning(self) -> str | None:
        return None


def guard(
    device: str, warmup_samples: int, per_round: int, clock: Callable[[], float] = time.perf_counter
) -> RoundGuard | Unidentified | None:
    """A guard for a case about to sample on `device`; Unidentified where which GPU it is is unknown (its note says
    why); None where there is nothing to say (not a GPU, no NVML, no such CUDA device)."""
    index = _index(device)
    if index is None:
        return None
    nvml, gpu = _handle(index)
    if gpu is None:
        return None
    if gpu.handle is None:
        return Unidentified(device, gpu.unknown or "no reason given")
    return RoundGuard(device, nvml, gpu.handle, warmup_samples, per_round, clock)
