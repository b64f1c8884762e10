"""The hostile corpus (tests/hostile/expected.yaml): bad options, malformed and tampered files, through the real CLI.

Each case is one command line in a fresh, empty folder of its own: `python -m asyncbench ...` in a fresh interpreter,
or, for the groups that only read files (IN_PROCESS), the same command line through the CLI in this process
(tests.support.cli.in_process: the same command group, exit status and streams, without an interpreter's start and
imports, 0.4 s a case, half of the corpus's time). The contract every case checks is
written at the top of expected.yaml: exit 2, one line on stderr (a few `location: message` lines for a file with
several mistakes), no traceback, nothing written anywhere in the folder (files compared byte for byte, the store's
rows counted), no sentinel path outside it created, and no secret echoed. The files under cases/ are made by
make_cases.py from the real files in cases/good/.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.cli import asyncbench, in_process

ROOT = Path(__file__).resolve().parents[2]
#: the corpus: its cases, expected.yaml and make_cases.py, which makes the cases
HERE = ROOT / "tests" / "hostile"
CASES = HERE / "cases"
EXPECTED: dict[str, Any] = yaml.safe_load((HERE / "expected.yaml").read_text(encoding="utf-8"))
#: a path outside every case's folder that no case may create (files in cases/ name it as their target)
PWNED = Path("/tmp/asyncbench-hostile-pwned")
LONG = "a" * 10_000
#: a file larger than this is compared by size and time of change, not by its bytes (a case's sparse bomb)
BIG = 50_000_000
#: what the words of a case's argv and files may name (besides "{file}"): a long word, a name of a megabyte, an
#: integer of 5000 digits (over Python's own 4300-digit limit on reading one), YAML nested 100,000 deep
FILLS = {
    "{long}": LONG,
    "{mega}": "m" * 1_000_000,
    "{digits}": "9" * 5000,
    "{deep_yaml}": "[" * 100_000 + "]" * 100_000,
    "{deep_block_yaml}": "".join(" " * depth + "- \n" for depth in range(0, 4_000, 2)),
}
TIMEOUT_S = 120
#: the groups whose cases only read the files they are given (results, ab files, stores, history) and refuse them:
#: run in this process. The rest start a fresh interpreter each: their commands run workloads or git, start workers
#: or Slurm jobs, change PATH, or read bombs (YAML nested 100,000 deep, a megabyte's name) whose harm, were a case to
#: fail, must stay in a process of its own, with its timeout.
IN_PROCESS = frozenset({"record-results", "read", "record-ab", "record", "history", "report", "merge"})
#: the most lines a file with several mistakes may take on stderr
SEVERAL = 10


def _cases() -> list[tuple[str, dict[str, Any]]]:
    cases = []
    for group, body in EXPECTED.items():
        defaults = body.get("defaults", {})
        for case in body["cases"]:
            merged = {**defaults, **case}
            name = case.get("id") or Path(case["file"]).name.removesuffix(".json")
            cases.append((f"{group}/{name}", {**merged, "group": group}))
    return cases


CORPUS = _cases()


def test_the_corpus_is_large_its_ids_unique_and_every_file_is_used():
    ids = [name for name, _ in CORPUS]
    assert len(ids) >= 100
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})
    named = " ".join(str(case.get("file", "")) + " " + " ".join(map(str, case.get("argv", []))) for _, case in CORPUS)
    files = [p.relative_to(CASES).as_posix() for p in (CASES / "results").iterdir()] + [
        p.relative_to(CASES).as_posix() for p in (CASES / "ab").iterdir()
    ]
    unused = [f for f in files if f not in named]
    sweeps = [p.name for p in (CASES / "sweeps").iterdir() if not any(c.get("file") == p.name for _, c in CORPUS)]
    assert not unused, unused
    assert not sweeps, sweeps


# --- the case's folder -------------------------------------------------------------------------------------------


def _asyncbench(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str, str]:
    """The CLI in a fresh interpreter; a case that does not answer in TIMEOUT_S is killed with its children.
    (Its own Popen, not tests.support.cli's runner: the case's environment is built whole by _environment, and a
    case that hangs must be killed as a process group, children and all, which subprocess.run's timeout does not.)"""
    process = subprocess.Popen(
        [sys.executable, "-m", "asyncbench", *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        out, err = process.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        pytest.fail(f"no answer in {TIMEOUT_S} s (it ran, or waited, instead of refusing)")
    return process.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def _environment(case: dict[str, Any], bin_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("ASYNCBENCH_HISTORY", "PYTEST_CURRENT_TEST")}
    env["PYTHONPATH"] = str(ROOT)
    if case.get("no_slurm"):
        env["PATH"] = os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent)])
    env.update({k: str(v) for k, v in (case.get("env") or {}).items()})
    return env


def _store_files(case: dict[str, Any]) -> set[str]:
    """The store's file and SQLite's own files beside it: compared by their rows, not their bytes."""
    store = case.get("store")
    return {f"{store}{suffix}" for suffix in ("", "-journal", "-wal", "-shm")} if store else set()


def _snapshot(folder: Path, skip: set[str]) -> dict[str, str]:
    """Every path under `folder` (but .git's insides) with a hash of its bytes; `skip` paths by presence only."""
    seen = {}
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder).as_posix()
        if relative == ".git" or relative.startswith(".git/"):
            continue
        if path.is_symlink():
            seen[relative] = "link -> " + os.readlink(path)
        elif path.is_dir():
            seen[relative + "/"] = "folder"
        elif relative in skip:
            seen[relative] = "store"
        elif path.stat().st_size > BIG:  # a sparse bomb: its size and time of change, not gigabytes of zeros
            seen[relative] = f"{path.stat().st_size} bytes, changed {path.stat().st_mtime_ns}"
        else:
            seen[relative] = hashlib.sha256(path.read_bytes()).hexdigest()
    return seen


def _rows(store: Path) -> dict[str, int] | None:
    if not store.is_file():
        return None
    connection = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        tables = [row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {table: connection.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0] for table in tables}
    except sqlite3.DatabaseError as exc:  # overwritten by something else
        return {f"not a store any more ({exc})": -1}
    finally:
        connection.close()


def _argv(case: dict[str, Any], cwd: Path) -> list[str]:
    """The case's words, with "@SRC[=DST]" copied into the folder, "{file}" and "{long}" filled in."""
    words = []
    for word in case["argv"]:
        word = _filled(str(word).replace("{file}", str(case.get("file", ""))))
        if word.startswith("@"):
            source, _, target = word[1:].partition("=")
            target = target or source
            destination = cwd / target
            destination.parent.mkdir(parents=True, exist_ok=True)
            if (CASES / source).is_dir():
                shutil.copytree(CASES / source, destination)
            else:
                shutil.copyfile(CASES / source, destination)
            word = target
        words.append(word)
    return words


def _filled(text: str) -> str:
    for word, fill in FILLS.items():
        text = text.replace(word, fill)
    return text


@pytest.fixture(scope="session")
def template_store(tmp_path_factory) -> Path:
    """A small real SQLite store: the good results file recorded once."""
    folder = tmp_path_factory.mktemp("store")
    shutil.copyfile(CASES / "good" / "results.json", folder / "results.json")
    done = asyncbench("record", "results.json", "--history", "h.sqlite", cwd=folder, timeout=TIMEOUT_S)
    assert done.returncode == 0, done.stderr
    return folder / "h.sqlite"


@pytest.fixture(scope="session")
def template_repo(tmp_path_factory) -> Path:
    """A git repository with one commit holding ab's config (bench.yaml, as the ab cases write it)."""
    folder = tmp_path_factory.mktemp("repo")
    (folder / "bench.yaml").write_text(EXPECTED["ab"]["defaults"]["files"]["bench.yaml"], encoding="utf-8")
    git = ["git", "-c", "user.name=hostile", "-c", "user.email=hostile@example.invalid", "-c", "init.defaultBranch=main"]
    for command in (["init", "-q"], ["add", "bench.yaml"], ["commit", "-q", "-m", "bench"]):
        subprocess.run([*git, *command], cwd=folder, check=True, capture_output=True)
    return folder


@pytest.fixture(scope="session")
def bin_dir(tmp_path_factory) -> Path:
    """A PATH without Slurm's commands: git only."""
    folder = tmp_path_factory.mktemp("bin")
    git = shutil.which("git")
    if git:
        (folder / "git").symlink_to(git)
    return folder


def _lines_are_the_contract(err: str, several: bool) -> str | None:
    """None when stderr is one error line (click's usage errors too), or a few `location: message` lines."""
    lines = err.strip().splitlines()
    if not lines:
        return "nothing on stderr"
    if len(lines) == 1:
        return None
    if not several:
        return f"{len(lines)} lines on stderr, not one: {lines[0][:100]!r} ..."
    if len(lines) > SEVERAL:
        return f"{len(lines)} lines on stderr (at most {SEVERAL} for one file's mistakes)"
    loose = [line for line in lines if ": " not in line]
    return f"a line that is not 'location: message': {loose[0][:100]!r}" if loose else None


@pytest.mark.parametrize("case", [case for _, case in CORPUS], ids=[name for name, _ in CORPUS])
def test_hostile_input_is_refused_in_one_line_and_nothing_is_written(case, tmp_path, template_store, template_repo, bin_dir):
    if case.get("readonly") and os.geteuid() == 0:
        pytest.skip("root writes into read-only folders: run as another user")
    cwd = tmp_path / "case"
    cwd.mkdir()
    if case.get("git"):
        shutil.copytree(template_repo, cwd, dirs_exist_ok=True, symlinks=True)
    if case.get("store"):
        shutil.copyfile(template_store, cwd / case["store"])
    for name, text in (case.get("files") or {}).items():
        (cwd / name).parent.mkdir(parents=True, exist_ok=True)
        (cwd / name).write_text(_filled(text), encoding="utf-8")
    for name, size in (case.get("sparse") or {}).items():
        with open(cwd / name, "wb") as handle:  # a hole of `size` bytes: no disk taken, but every byte reads as 0
            handle.truncate(size)
    for name in case.get("dirs") or ():
        (cwd / name).mkdir(parents=True)
    args = _argv(case, cwd)
    for name in case.get("readonly") or ():
        (cwd / name).mkdir(parents=True, exist_ok=True)
        (cwd / name).chmod(0o555)
    outside = [Path(p) for p in case.get("absent") or () if Path(p).is_absolute()] + [PWNED]
    for path in outside:
        path.unlink(missing_ok=True)  # our own sentinel, left by an earlier case that failed
    store = cwd / case["store"] if case.get("store") else None
    skip = _store_files(case)
    before, rows_before = _snapshot(cwd, skip), (_rows(store) if store else None)

    if case["group"] in IN_PROCESS and not case.get("no_slurm"):
        done = in_process(*args, cwd=cwd, env={k: str(v) for k, v in (case.get("env") or {}).items()})
        code, out, err = done.returncode, done.stdout, done.stderr
    else:
        code, out, err = _asyncbench(args, cwd, _environment(case, bin_dir))

    after, rows_after = _snapshot(cwd, skip), (_rows(store) if store else None)
    for name in case.get("readonly") or ():
        (cwd / name).chmod(0o755)
    said = f"\n--- exit {code}; stderr:\n{err[-2000:]}\n--- stdout:\n{out[-1000:]}"
    problems = []
    if "Traceback" in err + out:
        last = [line for line in err.strip().splitlines() if line.strip()][-1:] or ["?"]
        problems.append(f"a traceback ({last[0][:150]})")
    expected_code = case.get("exit", 2)
    if code != expected_code:
        problems.append(f"exit {code}, not {expected_code}")
    for secret in case.get("secrets") or ():
        if secret in out + err:
            problems.append(f"the secret {secret!r} was printed")
    shape = _lines_are_the_contract(err, bool(case.get("several")))
    if shape and not any(p.startswith("a traceback") for p in problems):
        problems.append(shape)
    fragments = case.get("message") or []
    fragments = [fragments] if isinstance(fragments, str) else list(fragments)
    if case.get("file") and not case["argv"][1].startswith("@sweeps/"):
        fragments.append(str(case["file"]))
    told = err.replace(str(case["file"]), "") if case.get("file") else err  # a fragment must be in what is said of the file
    missing = [f for f in fragments if f not in (err if f == case.get("file") else told)]
    if missing:
        first = next((line for line in err.strip().splitlines()[::-1] if line.strip()), "")
        problems.append(f"the message lacks {missing!r} (it said: {first[:160]!r})")
    if out.strip():
        problems.append(f"stdout is not empty ({out.strip().splitlines()[0][:100]!r})")
    if after != before:
        new = sorted(set(after) - set(before))
        gone = sorted(set(before) - set(after))
        changed = sorted(k for k in set(before) & set(after) if before[k] != after[k])
        problems.append(f"the folder changed: new {new[:5]}, gone {gone[:5]}, changed {changed[:5]}")
    if rows_before != rows_after:
        before_rows, after_rows = rows_before or {}, rows_after or {}
        moved = [
            f"{t} {before_rows.get(t)} -> {after_rows.get(t)}"
            for t in {**before_rows, **after_rows}
            if before_rows.get(t) != after_rows.get(t)
        ]
        problems.append(f"the store changed: {', '.join(moved)}")
    for path in outside:
        if path.exists():
            problems.append(f"{path} was created")
    for path in case.get("absent") or ():
        if not Path(path).is_absolute() and (cwd / path).exists():
            problems.append(f"{path} was created")
    assert not problems, "; ".join(problems) + said


# --- the files the corpus changes are good before they are changed ----------------------------------------------


def test_the_good_files_record_and_the_good_sweep_gathers(tmp_path):
    for name in ("results.json", "results-other.json", "ab.json"):
        shutil.copyfile(CASES / "good" / name, tmp_path / name)
    shutil.copytree(CASES / "good" / "sweep", tmp_path / "sweep")
    env = {**{k: v for k, v in os.environ.items() if k != "ASYNCBENCH_HISTORY"}, "PYTHONPATH": str(ROOT)}
    code, out, err = _asyncbench(["record", "results.json", "results-other.json", "ab.json", "--history", "h.sqlite"], tmp_path, env)
    assert code == 0, err
    assert _rows(tmp_path / "h.sqlite")["asyncbench_runs"] == 3
    code, out, err = _asyncbench(["gather", "sweep", "--no-wait", "--no-progress"], tmp_path, env)
    assert code == 3, err  # its one job ended with no results: an error row, not bad input
    assert "Traceback" not in err
