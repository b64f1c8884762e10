"""The census's table of hooked calls and their kinds (results.syncs.HOOKED_KINDS), which a results file's points
are held to, is each of asyncbench's own backends' hooks: a hook added or reclassified without it would have its
own files refused (or a forged kind read)."""

from __future__ import annotations

import importlib.util

import pytest

from asyncbench.results.syncs import HOOKED_KINDS


def _held(hooks) -> None:
    assert hooks
    for hook in hooks:
        assert hook.call in HOOKED_KINDS, hook.call
        assert str(HOOKED_KINDS[hook.call]) == hook.kind, hook.call


def test_every_jax_hook_is_in_the_table_with_its_kind():
    pytest.importorskip("jax")
    from asyncbench.backends.jax_backend import JaxBackend

    _held(JaxBackend().sync_hooks("cpu"))


def test_every_torch_hook_is_in_the_table_with_its_kind():
    torch = pytest.importorskip("torch")
    from asyncbench.backends import torch_syncs

    _held(torch_syncs.cuda_hooks(torch))


@pytest.mark.skipif(importlib.util.find_spec("cupy") is None, reason="cupy is not installed")
def test_every_cupy_hook_is_in_the_table_with_its_kind():
    from asyncbench.backends.cupy_backend import CupyBackend

    _held(CupyBackend().sync_hooks("cuda:0"))


@pytest.mark.skipif(importlib.util.find_spec("mxnet") is None, reason="mxnet is not installed")
def test_every_mxnet_hook_is_in_the_table_with_its_kind():
    from asyncbench.backends.mxnet_backend import MxnetBackend

    _held(MxnetBackend().sync_hooks("cpu"))
