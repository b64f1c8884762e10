"""Full-precision scopes (issue 36, findings 3 and 6): torch's whichever precision API the user's code used, CuPy's
through its compute type, and what the results record about them."""

from __future__ import annotations

import types
from typing import Any

import pytest

from asyncbench.backends.torch_backend import TorchBackend

torch = pytest.importorskip("torch")
needs_new_api = pytest.mark.skipif(not hasattr(torch.backends.cudnn, "conv"), reason="torch < 2.9 has only the legacy API")

#: torch 2.13's defaults of the settings a scope touches (legacy matmul "highest" and cuDNN TF32 on, the new API unset)
NEW_DEFAULTS = {"cuda.matmul": "none", "mkldnn.matmul": "none", "cudnn.conv": "tf32", "cudnn.rnn": "tf32"}


def _setting(path: str) -> Any:
    found: Any = torch.backends
    for part in path.split("."):
        found = getattr(found, part)
    return found


@pytest.fixture(autouse=True)
def _torch_defaults():
    """Each test starts from torch's defaults and leaves them (the precision state is the process's)."""
    yield
    torch.set_float32_matmul_precision("highest")
    torch.backends.cudnn.allow_tf32 = True
    if hasattr(torch.backends.cudnn, "conv"):
        torch.backends.fp32_precision = "none"
        torch.backends.cudnn.fp32_precision = "none"
        for path, value in NEW_DEFAULTS.items():
            _setting(path).fp32_precision = value


@needs_new_api
@pytest.mark.parametrize("user_setting", ["cuda.matmul", "generic"])
def test_torch_full_precision_holds_after_a_user_workload_set_the_new_fp32_precision_api(user_setting):
    if user_setting == "generic":
        torch.backends.fp32_precision = "tf32"
    else:
        torch.backends.cuda.matmul.fp32_precision = "tf32"
    with pytest.raises(RuntimeError, match="mix of the legacy and new APIs"):
        torch.get_float32_matmul_precision()  # what the scope read first and raised on
    with TorchBackend().full_precision():
        assert torch.backends.cuda.matmul.fp32_precision == "ieee"
        assert torch.backends.cudnn.conv.fp32_precision == "ieee"
        assert torch.backends.cudnn.rnn.fp32_precision == "ieee"
        assert torch.backends.mkldnn.matmul.fp32_precision == "ieee"
        assert torch.backends.cuda.matmul.allow_tf32 is False  # cuBLAS's own check of the two APIs agrees inside
        assert torch.get_float32_matmul_precision() == "highest"
    assert torch.backends.cuda.matmul.fp32_precision == "tf32"  # the user's setting, back as it was
    assert torch.backends.cudnn.conv.fp32_precision == "tf32"


@needs_new_api
def test_torch_full_precision_leaves_a_legacy_user_and_the_defaults_as_they_were():
    with TorchBackend().full_precision():
        assert torch.get_float32_matmul_precision() == "highest"
        assert torch.backends.cudnn.conv.fp32_precision == "ieee"
    # not "ieee": a setting left unset still inherits, and the legacy getters still answer (no mix made)
    assert {path: _setting(path).fp32_precision for path in NEW_DEFAULTS} == NEW_DEFAULTS
    assert torch.backends.cudnn.allow_tf32 is True
    torch.set_float32_matmul_precision("high")
    with TorchBackend().full_precision():
        assert torch.backends.cuda.matmul.fp32_precision == "ieee"
    assert torch.get_float32_matmul_precision() == "high"
    assert torch.backends.cuda.matmul.fp32_precision == "tf32"


class _LegacyTorch:
    """torch 2.1-2.8 as the scope sees it: the legacy API only (`cudnn` has no `conv`, `cuda.matmul` no
    fp32_precision)."""

    def __init__(self) -> None:
        self.precision = "high"
        matmul = types.SimpleNamespace(allow_tf32=True)
        self.backends = types.SimpleNamespace(cudnn=types.SimpleNamespace(allow_tf32=True), cuda=types.SimpleNamespace(matmul=matmul))
        self.backends.mkldnn = types.SimpleNamespace()

    def get_float32_matmul_precision(self) -> str:
        return self.precision

    def set_float32_matmul_precision(self, value: str) -> None:
        self.precision = value


def test_torch_full_precision_on_a_torch_with_the_legacy_api_only():
    from asyncbench.backends.torch_backend import _full_precision

    legacy = _LegacyTorch()
    with _full_precision(legacy):
        assert legacy.precision == "highest"
        assert legacy.backends.cudnn.allow_tf32 is False
    assert legacy.precision == "high"
    assert legacy.backends.cudnn.allow_tf32 is True


#: CuPy's compute types (cupy/_core/_routines_linalg.pxd): DEFAULT computes float32 products in CUBLAS_COMPUTE_32F
COMPUTE_TYPE_DEFAULT, COMPUTE_TYPE_TF32 = 1, 7


def _fake_cupy(compute_types: bool = True) -> Any:
    """CuPy as the backend sees it: one compute type per dtype (float32 and complex64 share one), as CUPY_TF32=1 leaves
    it, and the runtime's version; `compute_types=False`: a CuPy without the setter."""
    types_by_dtype = {"float32": COMPUTE_TYPE_TF32}
    core = types.SimpleNamespace(_routines_linalg=types.SimpleNamespace(COMPUTE_TYPE_DEFAULT=COMPUTE_TYPE_DEFAULT))
    if compute_types:
        core.get_compute_type = types_by_dtype.__getitem__
        core.set_compute_type = types_by_dtype.__setitem__
    runtime = types.SimpleNamespace(runtimeGetVersion=lambda: 12040)
    return types.SimpleNamespace(_core=core, cuda=types.SimpleNamespace(runtime=runtime), compute_types=types_by_dtype)


def test_cupy_full_precision_sets_float32_products_to_full_precision_whatever_cupy_tf32_says(monkeypatch):
    from asyncbench.backends.cupy_backend import CupyBackend

    cupy = _fake_cupy()
    monkeypatch.setattr(CupyBackend, "_cupy", lambda self: cupy)
    with CupyBackend().full_precision():
        assert cupy.compute_types["float32"] == COMPUTE_TYPE_DEFAULT
    assert cupy.compute_types["float32"] == COMPUTE_TYPE_TF32  # the process's own setting, back


@pytest.mark.parametrize("has_setter", [True, False])
def test_cupy_facts_record_cupy_tf32_and_what_float32_products_compute_in(monkeypatch, has_setter):
    from asyncbench.backends.cupy_backend import CupyBackend

    monkeypatch.setenv("CUPY_TF32", "1")
    monkeypatch.setattr(CupyBackend, "_cupy", lambda self: _fake_cupy(has_setter))
    facts = CupyBackend().facts()
    assert facts["CUPY_TF32"] == "1"
    if has_setter:
        assert "TF32 off" in facts["float32_products"]
        assert "built-in workloads" in facts["float32_products"]
    else:  # no scope: the results say plainly that every product computes as CUPY_TF32 says
        assert facts["float32_products"] == "as CUPY_TF32 says, for every workload (TF32 on: CUPY_TF32=1)"
        with CupyBackend().full_precision():
            pass  # and the scope is empty rather than an error
