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
