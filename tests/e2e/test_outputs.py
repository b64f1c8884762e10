"""Output files: every command's checked before anything runs, two outputs never one file, a failed write one line and exit 3."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from asyncbench import cli
from asyncbench.errors import InputError
from asyncbench.results import outputs, writing
from tests.support.cli import asyncbench
from tests.support.helpers import quick_numpy_results


def test_two_names_of_one_file_are_one_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "sub")
    for first, second in (
        ("r.json", "./r.json"),
        ("r.json", str(tmp_path / "r.json")),
        ("sub/x.md", "link/x.md"),
        ("a/../r.json", "r.json"),
    ):
        with pytest.raises(InputError, match=r"the same file is named for two outputs \(-o and --markdown\)"):
            outputs.check_distinct([("-o", first), ("--markdown", second)])
    outputs.check_distinct([("-o", "r.json"), ("--markdown", "r.md"), ("--csv", None)])  # distinct, one not given: fine


@pytest.mark.parametrize(
    "given, said",
    [
        ("missing/r.json", "does not exist"),
        (".", "is a directory"),
        ("sub", "is a directory"),
    ],
)
def test_an_output_that_cannot_be_written_is_refused_naming_its_option(tmp_path, monkeypatch, given, said):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    with pytest.raises(InputError, match=said) as refused:
        outputs.check([("--markdown", "fine.md"), ("-o", given)])
    assert "-o" in str(refused.value)
    assert not list(tmp_path.glob(".*probe"))  # the probe of a writable folder leaves nothing


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
def test_a_read_only_folder_is_refused(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        with pytest.raises(InputError, match="cannot write here"):
            outputs.check([("-o", str(locked / "r.json"))])
    finally:
        locked.chmod(0o700)


def test_a_failed_write_is_one_line_and_false_and_leaves_the_old_file_whole(tmp_path, monkeypatch):
    target = tmp_path / "r.md"
    target.write_text("old\n")

    def disk_full(descriptor):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(writing.os, "fsync", disk_full)
    said: list[str] = []
    assert outputs.write(target, "new\n", said.append) is False
    assert said == [f"asyncbench: error: cannot write {target}: No space left on device"]
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["r.md"]  # no temporary file left
    monkeypatch.undo()
    assert outputs.write(target, "new\n", said.append) is True
    assert target.read_text() == "new\n"


@pytest.mark.parametrize(
    "other, said",
    [
        (("--markdown", "./r.json"), "(-o and --markdown)"),
        (("--csv", "r.json.journal"), "(-o's journal and --csv)"),  # the journal is written while the run goes
    ],
)
def test_run_refuses_two_names_of_one_output_before_anything_runs(tmp_path, other, said):
    done = asyncbench("run", "-w", "matmul", "-b", "numpy", "--quick", "--no-progress", "-o", "r.json", *other, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert f"the same file is named for two outputs {said}" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []  # nothing ran


def test_report_checks_its_output_before_opening_the_history(tmp_path):
    done = asyncbench("report", "-o", "missing/page.html", "--history", "nothing-here.sqlite", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "missing/page.html: -o: directory 'missing' does not exist" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_a_report_that_cannot_be_written_at_the_end_is_one_line_and_exit_3(tmp_path, monkeypatch):
    pytest.importorskip("sqlalchemy")
    recorded = asyncbench("record", str(quick_numpy_results(tmp_path / "r.json")), "--history", "h.sqlite", cwd=tmp_path)
    assert recorded.returncode == 0, recorded.stderr
    page = tmp_path / "page.html"
    page.write_text("the previous page\n")

    def disk_full(descriptor):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(writing.os, "fsync", disk_full)
    done = CliRunner().invoke(cli.main, ["report", "-o", "page.html", "--history", "h.sqlite"])
    assert done.exit_code == 3, done.output
    assert done.output.strip() == "asyncbench: error: cannot write page.html: No space left on device"
    assert page.read_text() == "the previous page\n"


def test_an_output_that_names_an_input_is_refused_however_it_is_spelled(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "sub")
    for output, given in (
        ("h.sqlite", "h.sqlite"),
        ("./h.sqlite", "h.sqlite"),
        ("link/c.yaml", "sub/c.yaml"),
        ("sub/../h.sqlite", str(tmp_path / "h.sqlite")),
    ):
        with pytest.raises(InputError, match=r"-o names the same file as --history, an input of this command") as refused:
            outputs.check_not_inputs([("--markdown", "page.md"), ("-o", output)], [("CONFIG", "other.yaml"), ("--history", given)])
        assert refused.value.location == output
        with pytest.raises(InputError, match="an input of this command"):
            outputs.check([("-o", output)], inputs=[("--history", given)])
    outputs.check_not_inputs([("-o", "r.json"), ("--csv", None)], [("CONFIG", "c.yaml"), ("--history", None)])  # none given: fine
    outputs.check([("-o", "r.json")], inputs=[("CONFIG", "c.yaml")])


@pytest.mark.parametrize(
    "args, said",
    [
        (("c.yaml", "-o", "c.yaml"), "c.yaml: -o names the same file as CONFIG"),
        (("c.yaml", "--markdown", "./c.yaml"), "./c.yaml: --markdown names the same file as CONFIG"),
        (("c.yaml", "-o", "r.json", "--baseline", "r.json"), "r.json: -o names the same file as --baseline"),
        (("c.yaml", "--csv", "h.sqlite", "--record", "--history", "h.sqlite"), "h.sqlite: --csv names the same file as --history"),
    ],
)
def test_run_refuses_an_output_that_names_its_config_baseline_or_store_before_anything_runs(tmp_path, args, said):
    if "--record" in args:
        pytest.importorskip("sqlalchemy")
    config = "experiments:\n  - {workload: matmul, backends: [numpy], devices: [cpu]}\n"
    (tmp_path / "c.yaml").write_text(config)
    (tmp_path / "r.json").write_text("the baseline\n")
    done = asyncbench("run", *args, "--quick", "--no-progress", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert said in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert (tmp_path / "c.yaml").read_text() == config
    assert (tmp_path / "r.json").read_text() == "the baseline\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml", "r.json"]  # nothing ran, no store made


def test_gather_refuses_an_output_that_names_its_baseline_before_reading_the_sweep(tmp_path):
    pytest.importorskip("submitit")
    (tmp_path / "r.json").write_text("the baseline\n")
    done = asyncbench("gather", "no-such-sweep", "--no-wait", "--markdown", "r.json", "--baseline", "./r.json", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "r.json: --markdown names the same file as --baseline" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert (tmp_path / "r.json").read_text() == "the baseline\n"


def test_report_refuses_to_write_its_page_over_the_store(tmp_path):
    pytest.importorskip("sqlalchemy")
    recorded = asyncbench("record", str(quick_numpy_results(tmp_path / "r.json")), "--history", "h.sqlite", cwd=tmp_path)
    assert recorded.returncode == 0, recorded.stderr
    before = (tmp_path / "h.sqlite").read_bytes()
    done = asyncbench("report", "-o", "./h.sqlite", "--history", str(tmp_path / "h.sqlite"), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "./h.sqlite: -o names the same file as --history" in done.stderr
    assert (tmp_path / "h.sqlite").read_bytes() == before


def test_an_output_that_is_a_device_or_a_fifo_is_written_through_never_replaced_and_a_link_is_replaced(tmp_path):
    """`-o /dev/null`, `--csv FIFO`: a device or a FIFO is written as it is. Renaming a new file over the name, as
    root, once turned the machine's /dev/null into a plain file that every later `> /dev/null` filled (and pip then
    read as a constraints file). A link is the other way round: replaced by the output, its target left as it was."""
    import threading

    device = tmp_path / "null"
    os.mknod(device, 0o666 | __import__("stat").S_IFCHR, os.makedev(1, 3))  # a second /dev/null, here
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    taken: list[bytes] = []
    reader = threading.Thread(target=lambda: taken.append(fifo.read_bytes()))
    reader.start()
    (tmp_path / "kept.md").write_text("old")
    (tmp_path / "link.md").symlink_to(tmp_path / "kept.md")
    done = asyncbench(
        "run", "-w", "sync_async", "-b", "numpy", "-d", "cpu", "--quick", "--no-progress", "--set", "n_ops=10",
        "-o", str(device), "--csv", str(fifo), "--markdown", "link.md", cwd=tmp_path,
    )  # fmt: skip
    reader.join(timeout=60)
    assert done.returncode == 0, done.stderr
    assert device.is_char_device()  # all three still what they were
    assert fifo.is_fifo()
    assert not (tmp_path / "link.md").is_symlink()
    assert not (tmp_path / "null.journal").exists()  # no journal beside a device
    assert taken == [taken[0]]
    assert taken[0].startswith(b"id,experiment,")  # the FIFO's reader got the CSV
    assert "sync_async" in (tmp_path / "link.md").read_text()  # the markdown took the link's place
    assert (tmp_path / "kept.md").read_text() == "old"  # and never went through it


PLAN_ONE = "experiments:\n  - {workload: sync_async, backends: [numpy], devices: [cpu], params: {n_ops: 10}}\n"


def _links(folder, *names):
    """Each name a link to a file of its own (`NAME.target`) that holds "precious"."""
    for name in names:
        (folder / f"{name}.target").write_text("precious")
        (folder / name).symlink_to(f"{name}.target")


def _replaced(folder, *names):
    for name in names:
        assert not (folder / name).is_symlink(), name
        assert (folder / name).read_text() not in ("", "precious"), name
        assert (folder / f"{name}.target").read_text() == "precious", f"{name}: written through the link"


def test_every_writer_replaces_an_output_that_is_a_link_and_never_writes_through_it(tmp_path):
    """`sl/out.json -> target.txt`: `run -o`, `--markdown`, `--csv`, `merge -o` and `report -o` each overwrote
    target.txt, keeping the link (a link planted in a shared folder, `out.json -> ~/.bashrc`, was written through).
    Each now renames its new file over the link's own name: the link is gone, its target as it was; a dangling
    link (its target not there) is replaced too, never followed to make a file where it points."""
    (tmp_path / "p.yaml").write_text(PLAN_ONE)
    _links(tmp_path, "out.json", "out.md", "out.csv")
    (tmp_path / "dangling.json").symlink_to("nowhere/x.json")
    for output in ("out.json", "dangling.json"):
        done = asyncbench(
            "run", "p.yaml", "--quick", "--no-progress", "-o", output, "--markdown", "out.md", "--csv", "out.csv", cwd=tmp_path
        )
        assert done.returncode == 0, done.stderr
    _replaced(tmp_path, "out.json", "out.md", "out.csv")
    assert json.loads((tmp_path / "dangling.json").read_text())["results"]
    assert not (tmp_path / "nowhere").exists()
    shard = asyncbench("run", "p.yaml", "--quick", "--no-progress", "--shard", "1/1", "-o", "shard.json", cwd=tmp_path)
    assert shard.returncode == 0, shard.stderr
    _links(tmp_path, "merged.json")
    done = asyncbench("merge", "shard.json", "-o", "merged.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    _replaced(tmp_path, "merged.json")
    pytest.importorskip("sqlalchemy")
    pytest.importorskip("plotly")
    recorded = asyncbench("record", str(quick_numpy_results(tmp_path / "r.json")), "--history", "h.sqlite", cwd=tmp_path)
    assert recorded.returncode == 0, recorded.stderr
    _links(tmp_path, "page.html")
    done = asyncbench("report", "-o", "page.html", "--history", "h.sqlite", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    _replaced(tmp_path, "page.html")


def test_a_link_is_followed_only_where_it_is_the_systems_name_for_a_stream(tmp_path, monkeypatch):
    """/dev/stdout, /dev/fd/1, /proc/self/fd/1 name the stream (`-o /dev/stdout > r.json` replaces r.json, as it
    did; renamed over, /dev/stdout would have become a plain file); a link elsewhere is replaced, even one to a
    device, and its target is never written."""
    for name in ("/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"):
        assert writing.is_stream_link(Path(name)), name
    (tmp_path / "null").symlink_to("/dev/null")
    assert not writing.is_special(tmp_path / "null")
    writing.check_writable(tmp_path / "null")
    writing.atomic_write(tmp_path / "null", "results")
    assert (tmp_path / "null").read_text() == "results"
    assert not (tmp_path / "null").is_symlink()
    with open(tmp_path / "redirected.json", "w") as stdout:
        done = subprocess.run(
            [sys.executable, "-c", "from asyncbench.results import writing; writing.atomic_write('/dev/stdout', 'whole')"],
            stdout=stdout, check=True,
        )  # fmt: skip
    assert done.returncode == 0
    assert (tmp_path / "redirected.json").read_text() == "whole"
