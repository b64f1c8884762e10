"""asyncbench's pytest plugin (entry point `pytest11`): the `asyncbench` fixture, its marker and its time option.

    def test_matmul(asyncbench):
        x = numpy.ones((256, 256))
        result = asyncbench(lambda: x @ x, backend="numpy", expect=["done_s < 1ms"])
        assert result.done_s.median < 1e-3

The fixture measures a step as `asyncbench run` does (session.step_measurement:
issue, done and device clocks per step, 95% intervals, adaptive stopping),
in the test's own process, and returns a Measurement. `expect=[...]` checks,
in a config's syntax, are judged from the intervals as a gate judges them:
FAIL (and NOT MEASURED) fails the test with the check's reading, and so does
INCONCLUSIVE unless `allow_inconclusive=True` — then the test goes on with
an InconclusiveCheck warning, as `run --allow-inconclusive` passes with the
verdict still said: a skip would stop the test's own asserts after the
measurement, and hide a slowdown its next run decides. A case that could
not run here (the backend not installed, no GPU) skips the test with the
reason; a case that errored fails it with the reason.

`@pytest.mark.asyncbench(expect=[...], backend=..., ...)` gives every call
of the fixture in the test those options (a call's own win; its `expect`
adds to the marker's). How long each measurement may sample: the call's
`max_time_s`, else `--asyncbench-max-time`, else the ini option
`asyncbench_max_time`, else DEFAULT_MAX_TIME_S.

Loaded in every pytest run once installed, so importing this module
imports nothing but pytest (already loaded): the fixture imports the
measuring modules when a test asks for it, and the plugin changes nothing
for a test that does not.
"""

from __future__ import annotations

import warnings
from typing import Any, Mapping, Sequence

import pytest

from asyncbench.errors import InputError

# A test's measurement samples 1 s by default, not `run`'s 10: a suite may measure dozens of steps, and a second of
# rounds gives a microsecond step's median an interval within a few percent on a 2-core CI machine.
DEFAULT_MAX_TIME_S = 1.0
OPTION = "--asyncbench-max-time"
INI = "asyncbench_max_time"
MARKER = "asyncbench"
#: the options a call (and the marker) takes, besides the step itself
OPTIONS = ("backend", "device", "params", "max_time_s", "expect", "allow_inconclusive")


class InconclusiveCheck(UserWarning):
    """An `expect` check whose interval did not decide it, in a test that allows that (allow_inconclusive=True)."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("asyncbench", "asyncbench measurements (the asyncbench fixture)")
    group.addoption(
        OPTION,
        type=float,
        default=None,
        metavar="SECONDS",
        help=f"How long each asyncbench measurement samples at most (default: the ini option {INI}, else "
        f"{DEFAULT_MAX_TIME_S:g} s); a call's max_time_s wins. Example: pytest {OPTION} 5",
    )
    parser.addini(INI, f"How long each asyncbench measurement samples at most, in seconds (default {DEFAULT_MAX_TIME_S:g}).", default=None)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(expect=[...], backend=..., device=..., params=..., max_time_s=..., allow_inconclusive=...): options for "
        "every call of the asyncbench fixture in the test, e.g. @pytest.mark.asyncbench(expect=['done_s < 1ms'])",
    )


def _max_time_s(config: pytest.Config) -> float:
    """The command line's, else the ini file's, else DEFAULT_MAX_TIME_S; a UsageError for an ini value not a number."""
    given = config.getoption(OPTION)
    if given is not None:
        return float(given)
    written = config.getini(INI)
    if not written:
        return DEFAULT_MAX_TIME_S
    try:
        return float(written)
    except ValueError:
        raise pytest.UsageError(f"{INI} = {written!r}: expected a number of seconds, e.g. {INI} = 2") from None


def judge(checks: Sequence[Any], allow_inconclusive: bool) -> tuple[str | None, tuple[str, ...]]:
    """What a measurement's checks do to its test: (why it fails, or None; the warnings it goes on with). FAIL and
    NOT MEASURED fail it, INCONCLUSIVE too unless allowed (then a warning each), as a gate judges them
    (verdicts.checks.failed)."""
    from asyncbench.results.model import Verdict
    from asyncbench.session.step_measurement import verdict_line
    from asyncbench.verdicts.checks import failed

    failing = [check for check in checks if failed(check, allow_inconclusive)]
    allowed = tuple(verdict_line(check) for check in checks if allow_inconclusive and check.verdict == Verdict.INCONCLUSIVE)
    if not failing:
        return None, allowed
    why = f"{len(failing)} of {len(checks)} asyncbench check(s) did not pass:\n" + "\n".join(f"  {verdict_line(c)}" for c in failing)
    return why, allowed


class Bench:
    """The fixture's value: call it with a step (and options) to measure it; see the module's docstring."""

    def __init__(self, max_time_s: float, marked: Mapping[str, Any]):
        self.max_time_s = max_time_s
        self.marked = dict(marked)
        #: every measurement this test made, in order
        self.measurements: list[Any] = []

    def __repr__(self) -> str:
        return f"<asyncbench fixture: max_time_s={self.max_time_s:g}, marker options {self.marked}>"

    def __call__(
        self,
        step: Any,
        *,
        backend: str | None = None,
        device: str | None = None,
        params: Mapping[str, Any] | None = None,
        max_time_s: float | None = None,
        expect: Sequence[str] = (),
        allow_inconclusive: bool | None = None,
    ) -> Any:
        __tracebackhide__ = True  # a failure points at the test's call, not at the plugin
        from asyncbench.session import step_measurement

        def chosen(name: str, value: Any, default: Any = None) -> Any:
            return value if value is not None else self.marked.get(name, default)

        checks = [*self.marked.get("expect", ()), *(expect if not isinstance(expect, str) else [expect])]
        try:
            measured = step_measurement.measure(
                step,
                backend=chosen("backend", backend),
                device=chosen("device", device),
                params=chosen("params", params),
                max_time_s=chosen("max_time_s", max_time_s, self.max_time_s),
                expect=list(dict.fromkeys(checks)),
            )
        except step_measurement.NotMeasured as not_measured:
            if not_measured.skipped:
                pytest.skip(f"asyncbench: {not_measured}")
            # raised `from None`, as the InputError below: pytest.fail() inside the except printed the error, "During
            # handling of the above exception, another exception occurred:", then the error again
            raise pytest.fail.Exception(f"asyncbench: {not_measured}") from None
        except InputError as wrong:  # a typo'd check or option: its one line, not a traceback through the plugin
            raise pytest.fail.Exception(f"asyncbench: {wrong}", pytrace=False) from None
        self.measurements.append(measured)
        why, allowed = judge(measured.checks, bool(chosen("allow_inconclusive", allow_inconclusive, False)))
        for line in allowed:
            warnings.warn(InconclusiveCheck(f"asyncbench: {measured.result.id}: {line}"), stacklevel=2)
        if why is not None:
            pytest.fail(f"asyncbench: {measured}\n{why}")
        return measured


def _marked(node: Any) -> dict[str, Any]:
    """The options of the test's asyncbench markers (the closest first: a test's own over its class's or module's);
    a UsageError for one it does not take."""
    options: dict[str, Any] = {}
    for marker in reversed(list(node.iter_markers(MARKER))):
        unknown = sorted(set(marker.kwargs) - set(OPTIONS))
        if unknown or marker.args:
            raise pytest.UsageError(f"@pytest.mark.{MARKER} takes keyword options only: {', '.join(OPTIONS)}; got {unknown or marker.args}")
        options.update(marker.kwargs)
    return options


@pytest.fixture
def asyncbench(request: pytest.FixtureRequest) -> Bench:
    """Measure a step as `asyncbench run` does: `result = asyncbench(fn, backend="numpy", expect=["done_s < 1ms"])`;
    `result.done_s.median`, `.ci_low`, `.ci_high` (and issue_s, device_s) per step. See asyncbench.pytest_plugin."""
    return Bench(_max_time_s(request.config), _marked(request.node))
