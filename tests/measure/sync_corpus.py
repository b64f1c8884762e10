"""A corpus of planted synchronizations for `run --syncs` on JAX and MXNet on a CPU (both asynchronous there).

Each planted step issues a chain of products (`_chain`), then waits once in one way, on a line marked
`# planted: NAME`; PLANTED says what the census must find there (kind, the call's name, waits per step). The
`free` steps never wait: the census must find nothing in them; `*_chain` is every planted step's twin without its
wait, whose done − issue is what the wait should cost (benchmarks/syncs.py). Run as a user's workload (`-w
tests/measure/sync_corpus.py:JaxCorpus`), in the backend's own worker, so MXNet's steps run in its environment.

Only this file's own lines are user lines here: the steps reach their arrays through `A`, set by `setup`.
"""

from __future__ import annotations

import io
import operator
import types
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from asyncbench import INT, Param, Prepared, Workload
from asyncbench.backends.base import Backend

SINK = io.StringIO()
#: what the steps work on: the framework's modules, the chain's input (set by setup, in the worker)
A = types.SimpleNamespace()
#: waits a loop plants per step
LOOP = 3
#: the frame fallback's plant multiplies matrices this many times wider (64× the work: a wait well above its threshold,
#: frames.FALLBACK_MIN_WAIT_S), not a longer chain: a queue of some 50 JAX ops makes the next dispatch itself wait
FALLBACK_WIDER = 4


@dataclass(frozen=True)
class Planted:
    """What the census must find on a planted step's marked line."""

    kind: str
    call: str
    calls_per_step: float = 1


def _chain(x: Any = None) -> Any:
    x = A.x if x is None else x
    y = x
    for _ in range(A.chain):
        y = A.np.matmul(y, x) / A.size
    return y


# ---- JAX: every kind its hooks cover, and one the frame fallback finds ---------------------------------------------


def jax_item() -> Any:
    y = _chain()
    return y[0, 0].item()  # planted: jax_item


def jax_float() -> Any:
    y = _chain()
    return float(y[0, 0])  # planted: jax_float


def jax_int() -> Any:
    y = _chain()
    return int(y[0, 0])  # planted: jax_int


def jax_numpy() -> Any:
    y = _chain()
    return A.numpy.asarray(y)  # planted: jax_numpy


def jax_tolist() -> Any:
    y = _chain()
    return y[0, :4].tolist()  # planted: jax_tolist


def jax_print() -> Any:
    y = _chain()
    print(y[0, :4], file=SINK)  # planted: jax_print
    return y


def jax_format() -> Any:
    y = _chain()
    return f"{y[0, 0]:.3f}"  # planted: jax_format


def jax_block() -> Any:
    y = _chain()
    return y.block_until_ready()  # planted: jax_block


def jax_block_tree() -> Any:
    y = _chain()
    return A.jax.block_until_ready({"y": y})  # planted: jax_block_tree


def jax_device_get() -> Any:
    y = _chain()
    return A.jax.device_get(y[0, :4])  # planted: jax_device_get


def jax_branch() -> Any:
    y = _chain()
    if y[0, 0] > 0:  # planted: jax_branch
        return y
    return -y


def jax_index() -> Any:
    y = _chain()
    return operator.index(y[0, 0].astype("int32") * 0)  # planted: jax_index


def jax_nonzero() -> Any:
    y = _chain()
    return A.jnp.nonzero(y[0] > 0)  # planted: jax_nonzero


def jax_mask() -> Any:
    y = _chain()
    return y[y > 0]  # planted: jax_mask


def jax_loop() -> Any:
    for _ in range(LOOP):
        y = _chain()
        y[0, 0].item()  # planted: jax_loop
    return y


def jax_dlpack() -> Any:
    y = _chain(A.big)
    return A.numpy.from_dlpack(y)  # planted: jax_dlpack


def jax_chain() -> Any:
    return _chain()


def jax_free() -> Any:
    y = _chain()
    z = y[0, :4] + 1
    return A.jnp.sum(z) * y.shape[0]


JAX_PLANTED = {
    "jax_item": Planted("conversion", "jax.Array.item"),
    "jax_float": Planted("conversion", "jax.Array.__float__"),
    "jax_int": Planted("conversion", "jax.Array.__int__"),
    "jax_numpy": Planted("conversion", "numpy.asarray(jax.Array)"),
    "jax_tolist": Planted("conversion", "jax.Array.tolist"),
    "jax_print": Planted("print", "jax.Array.__str__"),
    "jax_format": Planted("print", "jax.Array.__format__"),
    "jax_block": Planted("explicit wait", "jax.Array.block_until_ready"),
    "jax_block_tree": Planted("explicit wait", "jax.block_until_ready"),
    "jax_device_get": Planted("transfer", "jax.device_get"),
    "jax_branch": Planted("control flow", "jax.Array.__bool__"),
    "jax_index": Planted("control flow", "jax.Array.__index__"),
    "jax_nonzero": Planted("control flow", "jax.numpy.nonzero"),
    "jax_mask": Planted("control flow", "jax.Array[mask]"),
    "jax_loop": Planted("conversion", "jax.Array.item", LOOP),
    # no hook: np.from_dlpack calls the array's __dlpack__, which waits (the frame fallback's)
    "jax_dlpack": Planted("unattributed", "jax._src.array.ArrayImpl.__dlpack__"),
}

# ---- MXNet: its hooks' kinds (the numpy interface's arrays, mx.np.ndarray) ------------------------------------------


def mx_item() -> Any:
    y = _chain()
    return y[0, 0].item()  # planted: mx_item


def mx_float() -> Any:
    y = _chain()
    return float(y[0, 0])  # planted: mx_float


def mx_int() -> Any:
    y = _chain()
    return int(y[0, 0])  # planted: mx_int


def mx_asnumpy() -> Any:
    y = _chain()
    return y.asnumpy()  # planted: mx_asnumpy


def mx_asscalar() -> Any:
    y = _chain()
    return y[0, 0].as_nd_ndarray().asscalar()  # planted: mx_asscalar


def mx_tolist() -> Any:
    y = _chain()
    return y[0, :4].tolist()  # planted: mx_tolist


def mx_print() -> Any:
    y = _chain()
    print(y[0, :4], file=SINK)  # planted: mx_print
    return y


def mx_repr() -> Any:
    y = _chain()
    return repr(y[0, :4])  # planted: mx_repr


def mx_format() -> Any:
    y = _chain()
    return f"{y[0, 0]:.3f}"  # planted: mx_format


def mx_wait_to_read() -> Any:
    y = _chain()
    y.wait_to_read()  # planted: mx_wait_to_read
    return y


def mx_waitall() -> Any:
    y = _chain()
    A.mx.npx.waitall()  # planted: mx_waitall
    return y


def mx_nd_waitall() -> Any:
    y = _chain()
    A.mx.nd.waitall()  # planted: mx_nd_waitall
    return y


def mx_branch() -> Any:
    y = _chain()
    if y[0, 0] > 0:  # planted: mx_branch
        return y
    return -y


def mx_loop() -> Any:
    for _ in range(LOOP):
        y = _chain()
        y[0, 0].item()  # planted: mx_loop
    return y


def mx_chain() -> Any:
    return _chain()


def mx_free() -> Any:
    y = _chain()
    z = y[0, :4] + 1
    return A.np.sum(z) * y.shape[0]


MX_PLANTED = {
    "mx_item": Planted("conversion", "mxnet.np.ndarray.item"),
    "mx_float": Planted("conversion", "mxnet.np.ndarray.__float__"),
    "mx_int": Planted("conversion", "mxnet.np.ndarray.__int__"),
    "mx_asnumpy": Planted("conversion", "mxnet.NDArray.asnumpy"),
    "mx_asscalar": Planted("conversion", "mxnet.NDArray.asscalar"),
    "mx_tolist": Planted("conversion", "mxnet.np.ndarray.tolist"),
    "mx_print": Planted("print", "mxnet.np.ndarray.__str__"),
    "mx_repr": Planted("print", "mxnet.np.ndarray.__repr__"),
    "mx_format": Planted("print", "mxnet.np.ndarray.__format__"),
    "mx_wait_to_read": Planted("explicit wait", "mxnet.NDArray.wait_to_read"),
    "mx_waitall": Planted("explicit wait", "mxnet.npx.waitall"),
    "mx_nd_waitall": Planted("explicit wait", "mxnet.nd.waitall"),
    "mx_branch": Planted("control flow", "mxnet.np.ndarray.__bool__"),
    "mx_loop": Planted("conversion", "mxnet.np.ndarray.item", LOOP),
}

STEPS: Mapping[str, Callable[[], Any]] = {
    name: step for name, step in globals().items() if callable(step) and name.startswith(("jax_", "mx_")) and not name.endswith("_PLANTED")
}


class _Corpus(Workload):
    """The planted steps of one backend, each a variant, and its sync-free step."""

    planted: Mapping[str, Planted] = {}
    #: the sync-free steps: the chain alone (every planted step's twin without its wait), and a few more ops
    free: tuple[str, ...] = ()
    params = (
        Param("size", INT, 256, "matrix side", minimum=8, maximum=4096),
        Param("chain", INT, 4, "products chained before the wait", minimum=1, maximum=1000),
    )

    def setup(self, backend: Backend, device: str, params: Mapping[str, Any]) -> Prepared:
        import numpy

        A.numpy, A.np, A.size, A.chain = numpy, backend.namespace(), params["size"], params["chain"]
        A.x = backend.random((A.size, A.size), "float32", device)()
        A.big = backend.random((FALLBACK_WIDER * A.size, FALLBACK_WIDER * A.size), "float32", device)()
        if backend.name == "jax":
            import jax

            A.jax, A.jnp = jax, jax.numpy
        else:
            import mxnet

            A.mx = mxnet
        backend.barrier(device)
        return Prepared(variants={name: STEPS[name] for name in (*self.planted, *self.free)}, sync=lambda: backend.barrier(device))


class JaxCorpus(_Corpus):
    name = "jax_corpus"
    summary = "planted synchronizations on JAX"
    planted = JAX_PLANTED
    free = ("jax_chain", "jax_free")
    variants = (*JAX_PLANTED, *free)


class MxnetCorpus(_Corpus):
    name = "mxnet_corpus"
    summary = "planted synchronizations on MXNet"
    planted = MX_PLANTED
    free = ("mx_chain", "mx_free")
    variants = (*MX_PLANTED, *free)
