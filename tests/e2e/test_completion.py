"""Shell completion of `-w` and `-b` (bash, zsh, fish through click's shell_complete): built-in workloads, backends,
and the steps of a `FILE.py:` read from its source, never imported; a broken or hostile file completes to nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from asyncbench import cli
from asyncbench.workloads import plugins, source_names
from tests.support.cli import ROOT

STEPS = """\
import torch  # never imported by completion: the file is read, not run
import asyncbench
from asyncbench import Workload, step

open(__file__ + ".imported", "w").close()


@asyncbench.step
def train_step(backend, device, params):
    return lambda: None


@step(backends=("torch",))
def eval_step(backend, device, params):
    return lambda: None


def plain_step(backend, device, params=None):
    return lambda: None


async def awaited_step(backend, device, params):
    return None


def helper(x):
    return x


def _private(backend, device, params):
    return None


class Mine(Workload):
    name = "mine"


class Yours(Mine):
    name = "yours"


made = step(helper)
"""
NAMES = ["train_step", "eval_step", "plain_step", "awaited_step", "Mine", "Yours", "made"]


def complete(words: str, shell: str = "bash", cwd: Path | None = None) -> list[str]:
    """What `asyncbench WORDS<TAB>` offers in `shell` (the last word is the one being completed), as click's
    completion script asks for it."""
    parts = words.split(" ")
    env = {"_ASYNCBENCH_COMPLETE": f"{shell}_complete", "COMP_WORDS": words}
    env["COMP_CWORD"] = parts[-1] if shell == "fish" else str(len(parts) - 1)
    old = Path.cwd()
    os.chdir(cwd or old)
    try:
        result = CliRunner().invoke(cli.main, [], env=env, prog_name="asyncbench")
    finally:
        os.chdir(old)
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output and result.exception is None or isinstance(result.exception, SystemExit)
    if shell == "bash":
        return [line.split(",", 1)[1] for line in result.output.splitlines() if line]
    if shell == "zsh":
        lines = result.output.splitlines() if result.output.strip() else []
        return [lines[i + 1].replace("\\:", ":") for i in range(0, len(lines), 3)]
    return [line.split("\t")[0].split(",", 1)[1] for line in result.output.splitlines() if line]


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_backend_and_builtin_workload_names_complete(shell):
    assert complete("asyncbench run -b nu", shell) == ["numpy"]
    assert complete("asyncbench run -w mat", shell) == ["matmul"]
    assert complete("asyncbench ab --backend to", shell) == ["torch"]
    assert complete("asyncbench run --workload sync", shell) == ["sync_async"]


def test_every_backend_on_an_empty_word():
    from asyncbench.backends import BACKENDS

    assert complete("asyncbench run -b ") == list(BACKENDS)


@pytest.fixture
def steps_dir(tmp_path) -> Path:
    (tmp_path / "steps.py").write_text(STEPS, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_a_files_steps_complete_after_its_colon(steps_dir, shell):
    assert complete("asyncbench run -w steps.py:", shell, steps_dir) == [f"steps.py:{name}" for name in NAMES]
    assert complete("asyncbench run -w steps.py:tr", shell, steps_dir) == ["steps.py:train_step"]
    assert not (steps_dir / "steps.py.imported").exists()


def test_bash_completes_after_the_colon_it_breaks_words_at(steps_dir):
    """bash splits `steps.py:tr` into `steps.py`, `:` and `tr` (':' is in COMP_WORDBREAKS) and replaces only the
    word after the colon: the names come back without the `steps.py:` bash already has."""
    assert complete("asyncbench run -w steps.py :", cwd=steps_dir) == NAMES
    assert complete("asyncbench run -w steps.py : tr", cwd=steps_dir) == ["train_step"]
    assert complete("asyncbench run -w steps.py:tr", cwd=steps_dir) == ["steps.py:train_step"]  # COMP_WORDBREAKS without ':'
    assert not (steps_dir / "steps.py.imported").exists()


def test_a_file_in_a_folder_completes_with_its_path(steps_dir):
    (steps_dir / "bench").mkdir()
    (steps_dir / "bench" / "steps.py").write_text(STEPS, encoding="utf-8")
    assert complete("asyncbench run -w bench/steps.py:ev", "zsh", steps_dir) == ["bench/steps.py:eval_step"]


def test_the_names_read_from_source_are_those_import_finds(tmp_path):
    """What completion offers is what `run -w FILE.py` names once it has imported the file (plugins.workload_names)."""
    source = STEPS.replace("import torch", "import json").replace('open(__file__ + ".imported", "w").close()', "")
    path = tmp_path / "same.py"
    path.write_text(source, encoding="utf-8")
    imported = plugins.workload_names(plugins.load_module(str(path)))
    assert source_names.workload_names(source) == imported == NAMES


def _fifo(folder: Path) -> None:
    os.mkfifo(folder / "fifo.py")


#: a step each hostile file holds beside what makes it unreadable: nothing is offered from such a file
A_STEP = "def train_step(backend, device, params):\n    return None\n"
HOSTILE = {
    "syntax.py": A_STEP + "def other(backend, device, params:\n",
    "binary.py": A_STEP.encode() + b"\xff\xfe\x00garbage",
    "nul.py": A_STEP + "x = 1\x00\n",
    "deep.py": A_STEP + "x = " + "(" * 100_000 + ")" * 100_000 + "\n",
    "unary.py": A_STEP + "x = " + "-" * 1_000_000 + "1\n",  # the parser's stack: MemoryError
    "huge.py": A_STEP + "# " + "x" * source_names.MAX_SOURCE_BYTES + "\n",
    "folder.py": None,
    "fifo.py": _fifo,
}


@pytest.mark.parametrize("name", [*HOSTILE, "missing.py"])
def test_a_broken_or_hostile_file_completes_to_nothing(tmp_path, name):
    content = HOSTILE.get(name)
    if content is None and name == "folder.py":
        (tmp_path / name).mkdir()
    elif callable(content):
        content(tmp_path)
    elif isinstance(content, bytes):
        (tmp_path / name).write_bytes(content)
    elif content is not None:
        (tmp_path / name).write_text(content, encoding="utf-8")
    for shell in ("bash", "zsh", "fish"):
        assert complete(f"asyncbench run -w {name}:", shell, tmp_path) == []


def test_nothing_for_a_module_reference_or_an_unknown_prefix():
    assert complete("asyncbench run -w os.path:") == []
    assert complete("asyncbench run -w zzz") == []
    assert complete("asyncbench run -b zzz") == []


def test_completing_a_files_steps_imports_no_framework(steps_dir):
    """The one subprocess: a fresh interpreter's sys.modules after `-w steps.py:<TAB>` (the file imports torch)."""
    probe = (
        "import json, sys\n"
        "from asyncbench.cli import main\n"
        "try:\n    main([], prog_name='asyncbench')\nexcept SystemExit:\n    pass\n"
        "print('LOADED=' + json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'jax', 'cupy', 'mxnet'))))\n"
    )
    env = {**os.environ, "_ASYNCBENCH_COMPLETE": "zsh_complete", "COMP_WORDS": "asyncbench run -w steps.py:", "COMP_CWORD": "3"}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=steps_dir, env=env, timeout=60)
    assert "steps.py:train_step" in done.stdout, done.stdout + done.stderr
    loaded = next(line for line in done.stdout.splitlines() if line.startswith("LOADED="))
    assert json.loads(loaded.removeprefix("LOADED=")) == []
    assert not (steps_dir / "steps.py.imported").exists()


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_the_completion_script_names_the_program(shell):
    result = CliRunner().invoke(cli.main, [], env={"_ASYNCBENCH_COMPLETE": f"{shell}_source"}, prog_name="asyncbench")
    assert result.exit_code == 0
    assert "_ASYNCBENCH_COMPLETE" in result.output
