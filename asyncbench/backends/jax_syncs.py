"""Where JAX's host waits for its device (`run --syncs`): the entry points the census wraps.

jax.Array's concrete class is jaxlib's ArrayImpl: its conversions, printing, truth value, index and
`block_until_ready` are hooked, with `jax.device_get`, `jax.block_until_ready` and `jnp.nonzero`; the `_value`
property every conversion reads catches a wait reached inside jax (masked indexing), named by the jax function the
user's line called. NumPy reads a jax.Array through the buffer protocol, in C, with no `__array__` call to hook:
`numpy.asarray` and `numpy.array` are hooked for a jax.Array argument instead.
"""

from __future__ import annotations

from typing import Any

from asyncbench.backends.handles import SyncHook


def hooks(jax: Any) -> tuple[SyncHook, ...]:
    """The hooks, given the configured jax module (jax_backend._jax)."""
    import numpy
    from jax._src.array import ArrayImpl

    conversions = ("item", "tolist", "__array__", "__float__", "__int__", "__complex__")

    def of_jax(value: Any = None, *args: Any, **kwargs: Any) -> bool:
        return isinstance(value, ArrayImpl)

    def masked(array: Any, index: Any = None, *args: Any) -> bool:
        return isinstance(index, ArrayImpl) and index.dtype == bool

    return (
        # NumPy reads a jax.Array through the buffer protocol, in C: no __array__ call to hook
        *(SyncHook(numpy, name, "conversion", f"numpy.{name}(jax.Array)", of_jax) for name in ("asarray", "array")),
        SyncHook(ArrayImpl, "block_until_ready", "explicit wait", "jax.Array.block_until_ready"),
        SyncHook(jax, "block_until_ready", "explicit wait", "jax.block_until_ready"),
        *(SyncHook(ArrayImpl, name, "conversion", f"jax.Array.{name}") for name in conversions),
        SyncHook(ArrayImpl, "__bool__", "control flow", "jax.Array.__bool__"),
        SyncHook(ArrayImpl, "__index__", "control flow", "jax.Array.__index__"),
        SyncHook(jax.numpy, "nonzero", "control flow", "jax.numpy.nonzero"),
        SyncHook(ArrayImpl, "__getitem__", "control flow", "jax.Array[mask]", masked),
        *(SyncHook(ArrayImpl, name, "print", f"jax.Array.{name}") for name in ("__repr__", "__str__", "__format__")),
        SyncHook(jax, "device_get", "transfer", "jax.device_get"),
        SyncHook(ArrayImpl, "_value", "conversion", "jax.Array._value"),
    )
