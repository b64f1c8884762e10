"""`run --bound`'s device delays on a CPU (Backend.device_delay): how well a delay asked matches what it costs, alone and
beside a step.

For each delay asked (0.2, 0.5, 1, 2 ms by default), on JAX on a CPU:
- alone: the delay timed apart from the step (QueuedOpDelay.alone_s, what the perturbation rounds record each round:
  what it adds to a busy queue, behind a filler op), `--repeats` times: the median and the spread (min–max);
- beside a step: a device-bound step (`--products` products of `--side`², next to nothing on the host), run
  `--steps` steps a sample with the delay queued before each step call and without, in alternating pairs: the time a
  step grew by, per delay, is what the delay really cost in place (the median over pairs of the difference).
The ratio of the two says how far the length the rounds record (alone) is from what the delay costs in the step.

    python benchmarks/device_delays.py jax

MXNet had one (a `sin` per engine worker) until this measured it: beside a step it cost 0.36-0.93x its length
alone, so the device's slack would have read long, and MXNet has no device delay now (docs/measured.md).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _jax_step(side: int, products: int) -> tuple[Callable[[], Any], Callable[[Any], None]]:
    import jax
    import jax.numpy as jnp

    def chain(m: Any) -> Any:
        out = m
        for _ in range(products):
            out = out @ m
        return out

    a = jnp.ones((side, side), jnp.float32)
    product = jax.jit(chain)
    product(a).block_until_ready()
    return (lambda: product(a)), (lambda out: out.block_until_ready())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("backend", choices=("jax",))
    parser.add_argument("--asked-ms", type=float, nargs="+", default=[0.2, 0.5, 1.0, 2.0])
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--pairs", type=int, default=15)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--side", type=int, default=384)
    parser.add_argument("--products", type=int, default=1, help="products of --side² one after another a step")
    options = parser.parse_args()
    from asyncbench.backends.jax_backend import JaxBackend

    step, finish = _jax_step(options.side, options.products)
    delay, why = JaxBackend().device_delay("cpu")
    assert delay is not None, why

    def sample(before: Callable[[], None] | None) -> float:
        started = time.perf_counter()
        out = None
        for _ in range(options.steps):
            if before is not None:
                before()
            out = step()
        finish(out)
        return (time.perf_counter() - started) / options.steps

    for _ in range(3):
        sample(None)
    alone_step = statistics.median(sample(None) for _ in range(9))
    print(json.dumps({"backend": options.backend, "step_ms": round(alone_step * 1e3, 3), "fixed_ms": round(delay.fixed_s * 1e3, 4)}))
    for asked_ms in options.asked_ms:
        asked = asked_ms / 1e3
        alone = [delay.alone_s(asked) for _ in range(options.repeats)]
        before = delay.before_step(asked)
        grew = []
        for _ in range(options.pairs):
            plain = sample(None)
            delayed = sample(before)
            grew.append(delayed - plain)
        median_alone, in_place = statistics.median(alone), statistics.median(grew)
        print(
            json.dumps(
                {
                    "asked_ms": asked_ms,
                    "alone_ms": round(median_alone * 1e3, 3),
                    "alone_range_ms": [round(min(alone) * 1e3, 3), round(max(alone) * 1e3, 3)],
                    "beside_step_ms": round(in_place * 1e3, 3),
                    "beside_over_alone": round(in_place / median_alone, 3) if median_alone > 0 else None,
                }
            )
        )


if __name__ == "__main__":
    main()
