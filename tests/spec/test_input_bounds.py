"""What a file or a config may hold at most: the bounds of asyncbench.inputs and of a config's values.

The hostile corpus (tests/hostile/expected.yaml: groups read, bombs, configs) shows each through the real CLI;
these are the edges the corpus cannot reach cheaply: a named pipe (read, to its bound), the exact digit and depth
limits, and a user workload's free string param.
"""

from __future__ import annotations

import os
import threading

import pytest

from asyncbench import inputs
from asyncbench.errors import InputError
from asyncbench.spec import config, document, expect, schema
from asyncbench.workloads import BUILT_IN
from asyncbench.workloads.base import INT, SHAPE, STR, Param
from tests.support.cli import asyncbench


def _fifo(tmp_path, payload: bytes):
    path = tmp_path / "pipe.json"
    os.mkfifo(path)

    def write() -> None:
        with open(path, "wb") as handle:
            try:
                handle.write(payload)
            except BrokenPipeError:  # the reader stopped at its bound
                pass

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    return path, writer


def test_a_named_pipe_is_read_as_a_stated_file(tmp_path):
    path, writer = _fifo(tmp_path, b'{"a": 1}')
    assert inputs.read_json(inputs.read_text(path)) == {"a": 1}
    writer.join(5)


def test_a_named_pipe_longer_than_the_bound_is_refused_once_the_bound_is_read(tmp_path):
    path, writer = _fifo(tmp_path, b"x" * 5000)
    with pytest.raises(InputError, match="larger than any file"):
        inputs.read_text(path, limit_bytes=1000)
    writer.join(5)


def test_a_device_is_not_read_at_all(tmp_path):
    with pytest.raises(InputError, match=r"not a regular file \(a character device\)"):
        inputs.read_text("/dev/zero")


def test_integers_are_read_up_to_twenty_digits_and_json_as_deep_as_the_interpreter_goes():
    assert inputs.read_json("[" + "9" * inputs.MAX_INT_DIGITS + "]") == [int("9" * inputs.MAX_INT_DIGITS)]
    with pytest.raises(ValueError, match="an integer of 21 digits"):
        inputs.read_json("[-" + "9" * 21 + "]")
    with pytest.raises(ValueError, match="nested too deeply"):
        inputs.read_json("[" * 100_000 + "]" * 100_000)


def test_a_config_nests_at_most_max_depth_levels(tmp_path):
    def nested(levels: int) -> str:
        return "[" * levels + "1" + "]" * levels

    shallow = tmp_path / "ok.yaml"
    shallow.write_text(f"experiments:\n  - {{workload: sync_async, params: {{shape: [64]}}, extra: {nested(20)}}}\n")
    with pytest.raises(InputError) as refused:
        config.load(shallow)
    assert "nested" not in str(refused.value)  # refused for its unknown key, not its depth
    deep = tmp_path / "deep.yaml"
    deep.write_text(f"experiments:\n  - {{workload: sync_async, extra: {nested(40)}}}\n")
    with pytest.raises(InputError, match=f"nested deeper than {document.MAX_DEPTH} levels"):
        config.load(deep)


def test_a_free_string_param_is_held_to_the_names_vocabulary():
    label = Param("label", STR, "x", "a user workload's free string")
    assert schema.coerce_param(label, "run [1] of 3") == "run [1] of 3"  # brackets are data, shown as written
    for hostile in ("a\x1b[2J", "a\nb", "a\x00", "m" * 1001):
        with pytest.raises(ValueError, match="control character|longer than"):
            schema.coerce_param(label, hostile)


def test_integers_a_run_uses_fit_in_64_bits():
    size = Param("size", INT, 1, "a size")
    assert schema.coerce_param(size, 2**63 - 1) == 2**63 - 1
    for param, value in ((size, 2**63), (Param("shape", SHAPE, [1], "a shape"), [2, 10**30])):
        with pytest.raises(ValueError, match="beyond 64"):
            schema.coerce_param(param, value)
    with pytest.raises(ValueError, match="beyond 64"):
        schema.coerce_setting("max_samples", 2**64)


@pytest.mark.parametrize("number", ["1e999", "-1e999", "inf", "nan"])
def test_a_check_against_no_finite_number_is_refused(number):
    with pytest.raises(ValueError):
        expect.parse(f"done_s.median < {number}", BUILT_IN["matmul"])


def test_a_journal_is_held_to_the_vocabulary_of_the_results_file_it_stands_for(tmp_path):
    """`show r.json` of a run that did not end reads r.json.journal instead: the same names are refused in it."""
    import json
    from pathlib import Path

    good = json.loads((Path(__file__).parents[1] / "hostile" / "cases" / "good" / "results.json").read_text())
    header = {key: value for key, value in good.items() if key != "results"}
    [result] = good["results"]
    result["id"] = "matmul[numpy,cpu]\x1b]0;pwned\x07"
    lines = [json.dumps({"journal": header}), json.dumps(result)]
    (tmp_path / "r.json.journal").write_text("\n".join(lines) + "\n")
    shown = asyncbench("show", "r.json", cwd=tmp_path, timeout=120)
    assert shown.returncode == 2, shown.stderr
    assert "results[0].id: holds a control character" in shown.stderr
    assert "\x1b" not in shown.stdout + shown.stderr.replace("\\x1b", "")
