"""The pytest plugin (asyncbench.pytest_plugin): the `asyncbench` fixture measures a step per step with intervals, its
`expect` checks fail a test as a gate fails (inconclusive too, unless allowed: then a warning), the marker gives a
test's calls their options, `--asyncbench-max-time` bounds each measurement; importing the plugin is cheap."""

from __future__ import annotations

import dataclasses
import importlib.metadata
import subprocess
import sys
from pathlib import Path

import pytest

from asyncbench import pytest_plugin
from asyncbench.results.model import Check, Result, Samples, Status, Verdict

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]
#: the plugin is loaded by its entry point once the package declares one; before, by name
AUTOLOADED = any(entry.name == "asyncbench" for entry in importlib.metadata.entry_points(group="pytest11"))
#: and without the hypothesis plugin, whose start takes seconds in each inner run (this file uses none)
LOAD = [*([] if AUTOLOADED else ["-p", "asyncbench.pytest_plugin"]), "-p", "no:hypothesispytest", "-p", "no:cacheprovider"]

TESTS = """
import numpy
import pytest

from asyncbench import step as as_step


def step(backend, device, params):
    x = backend.ones((16, 16), "float32", device)
    return lambda: x @ x


def test_measures_a_step_per_step(asyncbench):
    result = asyncbench(step, backend="numpy")
    assert result.steps == 20 and result.variant == "sync_every=0"
    assert 0 < result.done_s.ci_low <= result.done_s.median <= result.done_s.ci_high
    assert 0 < result.issue_s.median and result.device_s is None
    assert result.done_s.n >= 6 and result.result.sampling.max_time_s == 0.25  # --asyncbench-max-time
    per_sample = result.result.variants["sync_every=0"].done_s.median
    assert result.done_s.median == pytest.approx(per_sample / 20)
    assert result.metrics["step_s_k0"] > 0


def test_a_failing_check_fails_the_test(asyncbench):
    asyncbench(step, backend="numpy", expect=["done_s < 1ns"])


@pytest.mark.asyncbench(expect=["issue_s.median < 1ns"], max_time_s=0.2)
def test_the_marker_s_check_fails_a_callable_s_test(asyncbench):
    a = numpy.ones((8, 8))
    asyncbench(lambda: a @ a)  # a callable of no arguments is the step itself, on numpy unless told


def test_a_step_for_another_backend_is_skipped(asyncbench):
    asyncbench(as_step(backends=("torch",))(step), backend="numpy")


def test_a_misspelt_check_is_its_one_line(asyncbench):
    asyncbench(step, backend="numpy", expect=["dne_s < 1ms"])
"""


def test_the_fixture_measures_and_gates_in_a_pytest_run(pytester):
    pytester.makepyfile(test_steps=TESTS)
    outcome = pytester.runpytest(*LOAD, "--asyncbench-max-time", "0.25", "-rs")
    outcome.assert_outcomes(passed=1, failed=3, skipped=1)
    said = outcome.stdout.str()
    # bad input is the check's one line (did you mean...), no traceback through the plugin's modules
    misspelt = said[said.index("test_a_misspelt_check_is_its_one_line _") :]
    assert "asyncbench: " in misspelt
    assert "done_s" in misspelt
    assert "python_face.py" not in misspelt
    # the check's own reading: the per-step figure, its interval, and by how much it missed
    assert "FAIL done_s < 1ns: per step (20 steps a sample): done_s.median[sync_every=0] = " in said
    assert "× the threshold" in said
    assert "FAIL issue_s.median < 1ns: per step (20 steps a sample): issue_s.median[sync_every=0]" in said
    assert 'step[numpy,cpu,sync_every=0]: skipped: step declares @asyncbench.step(backends=("torch",)): not run on numpy' in said


def _check(verdict: Verdict, expect: str = "done_s < 1ms") -> Check:
    return Check(expect, verdict, f"done_s.median = 2 ms [1.9–2.1], expected < 1 ms ({verdict})")


def test_a_failing_or_unmeasured_check_fails_and_a_passing_one_does_not():
    assert pytest_plugin.judge([_check(Verdict.PASS)], allow_inconclusive=False) == (None, ())
    for verdict in (Verdict.FAIL, Verdict.NOT_MEASURED):
        why, allowed = pytest_plugin.judge([_check(Verdict.PASS, "illusion > 1"), _check(verdict)], allow_inconclusive=True)
        assert why is not None
        assert "1 of 2 asyncbench check(s) did not pass" in why
        assert f"{str(verdict).upper()} done_s < 1ms: done_s.median = 2 ms" in why
        assert allowed == ()


def test_an_inconclusive_check_fails_unless_allowed_then_it_warns():
    why, allowed = pytest_plugin.judge([_check(Verdict.INCONCLUSIVE)], allow_inconclusive=False)
    assert why is not None
    assert "INCONCLUSIVE done_s < 1ms" in why
    assert allowed == ()
    why, allowed = pytest_plugin.judge([_check(Verdict.INCONCLUSIVE)], allow_inconclusive=True)
    assert why is None
    assert allowed == ("INCONCLUSIVE done_s < 1ms: done_s.median = 2 ms [1.9–2.1], expected < 1 ms (inconclusive)",)


def test_an_allowed_inconclusive_check_is_a_warning_and_the_test_goes_on(monkeypatch):
    from asyncbench.engine.runner import summarize
    from asyncbench.session import step_measurement

    row = Result("step[numpy,cpu]", "step", "tests:step", "numpy", "cpu", {}, Status.OK)
    variants = summarize({"sync_every=0": Samples(issue_s=(1e-3,) * 6, done_s=(2e-3,) * 6)})
    measured = step_measurement.Measurement(result=row, steps=20, variants=variants, checks=(_check(Verdict.INCONCLUSIVE),))
    monkeypatch.setattr(step_measurement, "measure", lambda step, **options: measured)
    with pytest.warns(pytest_plugin.InconclusiveCheck, match=r"step\[numpy,cpu\]: INCONCLUSIVE done_s < 1ms"):
        assert pytest_plugin.Bench(1.0, {"allow_inconclusive": True})(lambda: None) is measured
    with pytest.raises(pytest.fail.Exception, match="INCONCLUSIVE done_s < 1ms"):
        pytest_plugin.Bench(1.0, {})(lambda: None)


def test_the_time_option_comes_from_the_command_line_else_the_ini_file_else_the_default(pytester):
    pytester.makeini(f"[pytest]\n{pytest_plugin.INI} = 3\n")
    pytester.makepyfile(test_time="def test_time(asyncbench):\n    print('MAX', asyncbench.max_time_s)\n")
    assert "MAX 3.0" in pytester.runpytest(*LOAD, "-s").stdout.str()
    assert "MAX 0.5" in pytester.runpytest(*LOAD, "-s", "--asyncbench-max-time", "0.5").stdout.str()
    pytester.makeini("[pytest]\n")
    assert f"MAX {pytest_plugin.DEFAULT_MAX_TIME_S}" in pytester.runpytest(*LOAD, "-s").stdout.str()


def test_the_marker_takes_keyword_options_only(pytester):
    pytester.makepyfile(
        test_marked="import pytest\n\n@pytest.mark.asyncbench(exepct=['done_s < 1ms'])\ndef test_x(asyncbench):\n    pass\n"
    )
    outcome = pytester.runpytest(*LOAD)
    outcome.assert_outcomes(errors=1)
    assert "takes keyword options only" in outcome.stdout.str()
    assert "exepct" in outcome.stdout.str()


def test_importing_the_plugin_imports_no_framework_nor_the_measuring_modules():
    script = (
        "import sys, asyncbench.pytest_plugin; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'jax', 'numpy', 'scipy') "
        "or m.startswith(('asyncbench.session', 'asyncbench.engine', 'asyncbench.backends'))))"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120, check=True)
    assert done.stdout.strip() == "[]"


def test_a_bad_expect_unit_fails_once_not_chained_to_itself(pytester):
    """A check with a unit that does not fit (`done_s < 1 parsec`) failed with the right line, but pytest printed it,
    "During handling of the above exception, another exception occurred:", and it again: it is raised once."""
    pytester.makepyfile(
        test_unit="def test_unit(asyncbench):\n"
        "    asyncbench(lambda: sum(range(100)), backend='numpy', expect=['done_s < 1 parsec'], max_time_s=0.1)\n"
    )
    outcome = pytester.runpytest(*LOAD)
    outcome.assert_outcomes(failed=1)
    said = outcome.stdout.str()
    assert "During handling of the above exception" not in said
    # the failure's line, once in its report (the short summary's copy, whole or cut at the terminal's width, aside)
    report = said.split("short test summary info")[0]
    assert report.count("unit 'parsec' does not fit done_s") == 1, said


def test_a_bound_check_a_synchronous_step_cannot_have_is_refused_before_measuring(monkeypatch):
    """A trial: `expect=["bound == device"]` on a numpy step measured the whole case, then failed NOT MEASURED
    ("synchronous: the host is the device"), where `validate` refuses the same check up front: so does the fixture."""
    from asyncbench.session import python_face

    def measured(*args, **kwargs):
        raise AssertionError("the case was measured")

    monkeypatch.setattr(python_face, "run_plan", measured)
    with pytest.raises(pytest.fail.Exception) as failed:
        pytest_plugin.Bench(0.1, {})(lambda: sum(range(10)), backend="numpy", expect=["bound == device"])
    said = str(failed.value)
    assert said.startswith("asyncbench: expect: 'bound == device' is a check on what bounds the step, and numpy on cpu runs synchronously")
    assert "a run would say 'not measured'" in said


def test_a_measurement_s_bound_is_its_variant_s():
    """`result.bound`: what bounds the measured variant's step (the guide's attribute), None where nothing asked."""
    from asyncbench.session.step_measurement import Measurement
    from tests.support.bounds import device_bound
    from tests.support.helpers import ok_result

    plain = ok_result("m[torch,cpu]")
    [timed] = plain.variants.values()
    made = device_bound("sync_every=0")
    bounded = Measurement(result=dataclasses.replace(plain, bound={"sync_every=0": made}), steps=20, variants={"sync_every=0": timed})
    assert bounded.bound is made
    assert Measurement(result=plain, steps=20, variants={"sync_every=0": timed}).bound is None
