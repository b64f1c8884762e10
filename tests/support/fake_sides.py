"""Fake `ab` sides for the engine's pairing tests (engine.paired, engine.gate_time): each fresh process of a side
draws a bias of its own and each sample adds noise, so that the engine's own Pairing, blocks, looks and intervals
decide on data whose truth the test knows; a clock that moves only when a side says so, and a case that only says
how long it needs.
"""

from __future__ import annotations

import math
import random
import time
from typing import Any

from asyncbench.results import blocks
from asyncbench.results.model import Case, Settings
from asyncbench.workloads.base import Prepared, Workload

#: what a fake sample measures before its process's bias, its noise and the head's change: a short step
SAMPLE_S = 1e-3


class FakeWork(Workload):
    """The workload both fake sides claim to run: never set up, the sides answer for it."""

    name = "fake-work"
    variants = ("step",)

    def setup(self, backend: Any, device: str, params: Any) -> Prepared:  # pragma: no cover - never set up here
        raise NotImplementedError


class BiasedSide:
    """A side whose every fresh process draws its own bias; `change` slows the head's work."""

    def __init__(self, name: str, rng: random.Random, bias_sd: float, noise_sd: float, change: float = 0.0, heavy: bool = False):
        self.name, self.tree = name, None
        self.rng, self.bias_sd, self.noise_sd, self.change, self.heavy = rng, bias_sd, noise_sd, change, heavy
        self.bias = 0.0
        self.processes = 0
        self.problem: str | None = None
        self.sleep_s = 0.0

    def renew(self, backend: str) -> None:
        self.processes += 1
        self.bias = self.rng.gauss(0, self.bias_sd)
        if self.heavy and self.rng.random() < 0.2:  # a process stuck for its whole life, as seen with torch on 2 busy cores
            self.bias += self.rng.expovariate(1.0)

    def ready(self, timeout_s: float) -> None:
        pass

    def send(self, command: str, payload: Any) -> None:
        self.pending = (command, payload)

    def receive(self, timeout_s: float) -> Any:
        return self.call(*self.pending, timeout_s)

    def call(self, command: str, payload: Any, timeout_s: float) -> Any:
        if command == "setup":
            return {"variants": ["step"], "asynchronous": False}
        if command == "verify":
            return self.problem
        if command == "sample":
            time.sleep(self.sleep_s)
            done = SAMPLE_S * (1 + self.change) * math.exp(self.bias + self.rng.gauss(0, self.noise_sd))
            return done, done, None
        return None

    def close(self) -> None:
        pass


def fake_case() -> Case:
    """The one case both fake sides are paired on."""
    return Case("fake-work[numpy,cpu]", "e", "fake-work", "numpy", "cpu", {}, Settings(warmup=0, timeout_s=10))


class Clock:
    """A perf_counter that moves only when a fake side samples: a gate's timing to the block, whatever the machine."""

    def __init__(self) -> None:
        self.now_s = 0.0

    def __call__(self) -> float:
        return self.now_s


class Needing:
    """A stand-in for a case that says how long it needs (Pairing.seconds_needed) after `n_blocks` blocks."""

    def __init__(self, n_blocks: int, needed_s: float):
        self.n_blocks, self.needed_s = n_blocks, needed_s

    def seconds_needed(self) -> float:
        return self.needed_s

    def budget(self) -> blocks.BlockBudget:
        return blocks.BlockBudget(0.005, 1)
