"""A full disk while saving: the previous results file stays whole, no temporary file is left, the run goes on, exit 3."""

from __future__ import annotations

import errno
import json
import os

from click.testing import CliRunner

from asyncbench import cli
from asyncbench.results import journal, writing


def test_a_full_disk_never_truncates_the_existing_results(tmp_path, monkeypatch):
    out = tmp_path / "r.json"
    previous = '{"kept": "the previous complete file"}\n'
    out.write_text(previous)

    def disk_full(descriptor):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(writing.os, "fsync", disk_full)
    monkeypatch.setattr(journal, "_sync", disk_full)
    result = CliRunner().invoke(
        cli.main, ["run", "-w", "sync_async", "-w", "matmul", "-b", "numpy", "--quick", "--no-progress", "-o", str(out)]
    )
    assert result.exit_code == 3
    # said once for the journal (not once per case), once for the results file at the end
    assert result.output.count("warning: cannot write") == 1
    assert result.output.count("error: cannot write") == 1
    assert result.output.count("No space left on device") == 2
    assert "Traceback" not in result.output
    assert "2 cases: 2 ok" in result.output  # every case still ran and was shown
    assert out.read_text() == previous
    assert json.loads(out.read_text())
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # no temporary file left behind
