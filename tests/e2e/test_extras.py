"""A missing optional extra is one line naming the command that installs it, exit 2, before anything runs.

Each command runs in a fresh interpreter whose PYTHONPATH starts with a folder holding a stub of the package,
whose import raises ModuleNotFoundError as a missing package's does: the real package stays installed for the
other tests, and the stub also stands for a package that is found but cannot be imported (a broken wheel).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from asyncbench import extras
from tests.support.cli import ROOT, asyncbench

#: a results file `record` takes: the store's packages are what is missing, not a good file
GOOD_RESULTS = ROOT / "tests" / "hostile" / "cases" / "good" / "results.json"
#: a PostgreSQL URL nothing listens at: the check must come before any connection is tried
NOWHERE_POSTGRES = "postgresql://nobody@127.0.0.1:9/none"
#: a case small enough that a run that wrongly goes ahead still ends soon
TINY = ["run", "-w", "matmul", "-b", "numpy", "-d", "cpu", "--quick", "--no-progress", "--set", "size=16"]


def run_without(module: str, argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """`asyncbench ARGV` in a fresh interpreter in which `module` cannot be imported."""
    stubs = cwd / "stubs"
    package = stubs / module.split(".")[0]
    package.mkdir(parents=True, exist_ok=True)
    name = module.split(".")[0]
    (package / "__init__.py").write_text(f"raise ModuleNotFoundError({f'No module named {name!r}'!r}, name={name!r})\n")
    path = os.pathsep.join([str(stubs), str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    return asyncbench(*argv, cwd=cwd, env={"PYTHONPATH": path})


HISTORY = "pip install 'asyncbench[history]'"
CASES = [
    # (argv, the module made unimportable, what the line says needs it, which package, the install command)
    ([*TINY, "--record", "-o", "r.json"], "sqlalchemy", "run --record needs SQLAlchemy", HISTORY),
    ([*TINY, "--record", "-o", "r.json", "--history", NOWHERE_POSTGRES], "psycopg", "run --record needs psycopg", HISTORY),
    (["record", "good.json"], "sqlalchemy", "record needs SQLAlchemy", HISTORY),
    (["history"], "sqlalchemy", "history needs SQLAlchemy", HISTORY),
    (["history", "--history", NOWHERE_POSTGRES], "psycopg", "history needs psycopg", HISTORY),
    (["report", "-o", "page.html"], "sqlalchemy", "report needs SQLAlchemy", HISTORY),
    (["report", "-o", "page.html"], "plotly", "report needs plotly", HISTORY),
    (["gather", "sweep-folder"], "submitit", "gather needs submitit", "pip install 'asyncbench[cluster]'"),
    (["gather", "sweep-folder", "--record"], "sqlalchemy", "gather --record needs SQLAlchemy", HISTORY),
    (
        [*TINY, "--executor", "local"],
        "submitit",
        "running as jobs (executor local or slurm) needs submitit",
        "pip install 'asyncbench[cluster]'",
    ),
    (
        ["run", "-w", "sync_async", "-b", "numpy", "-d", "cpu", "--quick", "--no-progress", "--set", "n_ops=1,2", "--plot", "p.png"],
        "matplotlib",
        "--plot needs matplotlib",
        "pip install 'asyncbench[plot]'",
    ),
    (["show", "r.json", "--plot", "p.png"], "matplotlib", "--plot needs matplotlib", "pip install 'asyncbench[plot]'"),
]


@pytest.mark.parametrize("argv, module, needs, install", CASES, ids=[f"{c[2].split(' needs ')[0]}-without-{c[1]}" for c in CASES])
def test_a_missing_extra_is_one_line_naming_how_to_install_it(argv, module, needs, install, tmp_path):
    shutil.copyfile(GOOD_RESULTS, tmp_path / "good.json")  # `record` reads its files before it checks its packages
    done = run_without(module, argv, tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"asyncbench: error: {needs}"), lines[0]
    assert install in lines[0], lines[0]
    assert done.stdout == ""  # nothing measured, nothing shown
    assert not (tmp_path / "r.json").exists()
    assert not (tmp_path / "r.json.journal").exists()
    assert not (tmp_path / ".asyncbench").exists()  # no store made, no sweep folder


def test_the_history_extra_missing_is_one_line_with_the_checkouts_command(tmp_path):
    """After `make run` (no history extra) `run --record` names the one install it needs, and a checkout's command
    for it: change points need nothing more (Otava's analysis ships inside asyncbench)."""
    done = run_without("sqlalchemy", [*TINY, "--record"], tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"asyncbench: error: run --record needs SQLAlchemy, which is not installed: {HISTORY} (in asyncbench's checkout: make history)"
    )


def test_importable_says_no_for_a_package_that_is_found_but_does_not_import(tmp_path, monkeypatch):
    (tmp_path / "broken_extra").mkdir()
    (tmp_path / "broken_extra" / "__init__.py").write_text("raise ImportError('libsomething.so: cannot open shared object file')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(extras.EXTRAS, "broken_extra", extras.Extra("broken_extra", "Broken", "pip install broken"))
    assert not extras.importable("broken_extra")
    assert not extras.importable("no_such_module_anywhere")
    assert extras.importable("yaml")
    with pytest.raises(extras.MissingExtra, match=r"^thing needs Broken, which is not installed: pip install broken$"):
        extras.require("thing", "yaml", "broken_extra")


def test_every_install_command_names_an_extra_that_pyproject_declares():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11 on
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    named = {m for extra in extras.EXTRAS.values() for m in re.findall(r"asyncbench\[(\w+)\]", extra.install)}
    assert named
    assert named <= set(declared)
    for extra in extras.EXTRAS.values():  # each package is in the extra its line names
        if "asyncbench[" in extra.install:
            wanted = re.search(r"asyncbench\[(\w+)\]", extra.install)[1]
            assert extra.module.split(".")[0].lower() in " ".join(declared[wanted]).lower()


def test_record_says_what_is_wrong_with_a_file_before_what_is_not_installed(tmp_path):
    """A file `record` cannot take is said at once, before the store's packages are imported (the change points'
    analysis imports SciPy's statistics, seconds on a slow runner), even where one of them is missing."""
    (tmp_path / "bad.json").write_text("{}", encoding="utf-8")
    done = run_without("sqlalchemy", ["record", "bad.json"], tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("asyncbench: error: bad.json"), line
    assert "SQLAlchemy" not in line
    assert not (tmp_path / ".asyncbench").exists()
