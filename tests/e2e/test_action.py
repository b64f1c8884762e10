"""The GitHub Action (action.yml) run for real, step by step, in a scratch repository.

A stand-in for the Actions runner: action.yml is read with PyYAML, each `run:` step is run with bash as Actions
runs `shell: bash` (`bash --noprofile --norc -eo pipefail`), after its `${{ }}` expressions are replaced by what
Actions would put there (inputs and their defaults, github.action_path, the steps' outputs); GITHUB_OUTPUT,
GITHUB_STEP_SUMMARY and GITHUB_EVENT_PATH are files of the test's. `uses:` steps (setup-python, upload-artifact) are
GitHub's own and are skipped. A `gh` first on PATH writes down its argv, its token and the body it was given, and
answers the comments' GET with a list the test chose. One real `ab` runs (the shortest gate, 10 s); the all-SAME
path and the second push reuse its steps on files of their own, and the comment logic's branches are unit-tested
in tests/report/test_pull_request.py.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from asyncbench.results.labels import Label
from tests.support.ab_files import ab_data
from tests.support.ab_repo import committed_repo, git

ROOT = Path(__file__).resolve().parents[2]
ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
MARK = "<!-- asyncbench-ab -->"
BOT = "github-actions[bot]"
#: what GitHub writes for `shell: bash`
BASH = ["bash", "--noprofile", "--norc", "-eo", "pipefail"]

GH_STUB = """#!{python}
import json, os, sys
argv = sys.argv[1:]
entry = {{"argv": argv, "token": os.environ.get("GH_TOKEN")}}
if "--input" in argv:
    entry["body"] = json.load(open(argv[argv.index("--input") + 1]))["body"]
with open(os.environ["GH_STUB_LOG"], "a") as log:
    log.write(json.dumps(entry) + "\\n")
if "-X" in argv:
    print(json.dumps({{"id": 99, "html_url": "https://github.com/o/r/pull/7#issuecomment-99"}}))
else:
    print(open(os.environ["GH_STUB_COMMENTS"]).read())
"""


@dataclass
class Ran:
    """What running the action did: each step's exit code and outputs, and the summary it wrote."""

    codes: dict[str, int] = field(default_factory=dict)
    outputs: dict[str, dict[str, str]] = field(default_factory=dict)
    logs: dict[str, str] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        """The action's: its last step's that ran."""
        return list(self.codes.values())[-1]


class Runner:
    """The runner's part: the workspace, the files Actions names in the environment, the stub `gh`."""

    def __init__(self, workspace: Path, scratch: Path):
        self.workspace, self.scratch = workspace, scratch
        bin_dir = scratch / "bin"
        bin_dir.mkdir(parents=True)
        (bin_dir / "gh").write_text(GH_STUB.format(python=sys.executable))
        (bin_dir / "gh").chmod(0o755)
        self.summary, self.gh_log, self.comments = scratch / "summary.md", scratch / "gh.log", scratch / "comments.json"
        self.comments.write_text("[]")
        event = scratch / "event.json"
        event.write_text(json.dumps({"pull_request": {"number": 7}}))
        (scratch / "runner-temp").mkdir()
        self.env = {
            **{k: v for k, v in os.environ.items() if k != "ASYNCBENCH_HISTORY"},
            "PATH": f"{bin_dir}:{Path(sys.executable).parent}:{os.environ['PATH']}",
            "PYTHONPATH": str(ROOT),
            "GITHUB_WORKSPACE": str(workspace),
            "GITHUB_REPOSITORY": "o/r",
            "GITHUB_SERVER_URL": "https://github.com",
            "GITHUB_EVENT_PATH": str(event),
            "GITHUB_BASE_REF": "main",
            "GITHUB_STEP_SUMMARY": str(self.summary),
            "RUNNER_TEMP": str(scratch / "runner-temp"),
            "GH_STUB_LOG": str(self.gh_log),
            "GH_STUB_COMMENTS": str(self.comments),
        }

    def run(self, inputs: dict[str, str], only: tuple[str, ...] | None = None, outputs: dict | None = None) -> Ran:
        """The action's steps in order (`only`: those ids), stopping at the first that fails, as Actions does."""
        given = {name: inputs.get(name, spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
        ran = Ran(outputs={step: dict(values) for step, values in (outputs or {}).items()})

        def value(expression: str) -> str:
            if expression.startswith("inputs."):
                return EXPRESSION.sub(lambda m: value(m.group(1)), str(given[expression.removeprefix("inputs.")]))
            if expression == "github.action_path":
                return str(ROOT)
            if expression == "github.token":
                return "stub-token"
            if match := re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expression):
                return ran.outputs.get(match[1], {}).get(match[2], "")
            raise AssertionError(f"this stand-in for Actions does not know ${{{{ {expression} }}}}")

        def substituted(text: str) -> str:
            return EXPRESSION.sub(lambda m: value(m.group(1)), text)

        for step in ACTION["runs"]["steps"]:
            if "uses" in step:
                continue
            assert "if" not in step, "a run step's condition would need this stand-in to evaluate it"
            if only is not None and step["id"] not in only:
                continue
            output = self.scratch / f"output-{step['id']}"
            output.write_text("")
            script = self.scratch / f"step-{step['id']}.sh"
            script.write_text(substituted(step["run"]))
            env = {**self.env, **{key: substituted(str(v)) for key, v in step.get("env", {}).items()}, "GITHUB_OUTPUT": str(output)}
            done = subprocess.run([*BASH, str(script)], cwd=self.workspace, env=env, capture_output=True, text=True, timeout=120)
            ran.codes[step["id"]] = done.returncode
            ran.logs[step["id"]] = done.stdout + done.stderr
            ran.outputs[step["id"]] = dict(line.split("=", 1) for line in output.read_text().splitlines() if "=" in line)
            if done.returncode != 0:
                break
        return ran

    def gh_calls(self) -> list[dict[str, Any]]:
        if not self.gh_log.exists():
            return []
        return [json.loads(line) for line in self.gh_log.read_text().splitlines()]


def methods(calls: list[dict[str, Any]]) -> list[str]:
    return [call["argv"][call["argv"].index("-X") + 1] if "-X" in call["argv"] else "GET" for call in calls]


@pytest.fixture
def runner(tmp_path: Path) -> Runner:
    workspace = tmp_path / "repo"
    workspace.mkdir()
    return Runner(workspace, tmp_path / "runner")


def test_the_action_gates_a_planted_slowdown_writes_the_summary_and_posts_one_comment(runner):
    """A pull request whose head does twice the base's work: ab runs for real against origin/main (the default base
    of a pull request), the summary is written, one comment is posted, and the action exits with ab's code."""
    repo = runner.workspace
    committed_repo(repo)
    git(repo, "update-ref", "refs/remotes/origin/main", "HEAD")  # the pull request's target, as a clone has it
    (repo / "mypkg.py").write_text("REPEAT = 40\n")
    git(repo, "commit", "-qam", "twice the work")

    ran = runner.run({"config": "gate.yaml", "gate-time": "10s", "gate-time-max": "10s"}, only=("ab", "report", "gate"))
    assert list(ran.codes) == ["ab", "report", "gate"], ran.logs
    assert ran.codes["ab"] == ran.codes["report"] == 0, ran.logs  # the gate is the last step's
    ab_code = int(ran.outputs["ab"]["exit-code"])
    assert ran.exit_code == ab_code == 1, ran.logs
    data = json.loads(Path(ran.outputs["ab"]["json"]).read_text())
    junit = Path(ran.outputs["ab"]["junit"]).read_text()
    assert "<testsuite" in junit
    assert "<failure" in junit
    assert Path(ran.outputs["ab"]["bmf"]).exists()
    assert data["base"]["revision"].endswith("(origin/main)")
    assert {r["label"] for case in data["cases"] for r in case["ratios"]} <= {"SLOWER", "INCONCLUSIVE"}
    summary = runner.summary.read_text()
    assert summary.startswith("### asyncbench ab")
    assert "❌ the gate fails (ab exits 1)" in summary
    calls = runner.gh_calls()
    assert methods(calls) == ["GET", "POST"]
    assert "repos/o/r/issues/7/comments?per_page=100" in calls[0]["argv"]
    assert "--paginate" in calls[0]["argv"]
    assert "repos/o/r/issues/7/comments" in calls[1]["argv"]
    assert calls[1]["body"].startswith(MARK + "\n### asyncbench ab")
    assert {call["token"] for call in calls} == {"stub-token"}
    assert ran.outputs["report"] == {"changed": "true", "comment": "posted", "comment-url": "https://github.com/o/r/pull/7#issuecomment-99"}


def test_the_next_push_edits_that_comment_in_place_one_patch_no_post(runner):
    """Our comment is there, and a person's carrying the marker too: ours is edited, hers is left alone."""
    ab_json = runner.scratch / "runner-temp" / "slower.json"
    ab_json.write_text(json.dumps(ab_data(Label.SLOWER)))
    runner.comments.write_text(
        json.dumps(
            [{"id": 41, "user": {"login": "alice"}, "body": f"{MARK}\nmine"}, {"id": 42, "user": {"login": BOT}, "body": f"{MARK}\nold"}]
        )
    )
    ran = runner.run({}, only=("report", "gate"), outputs={"ab": {"json": str(ab_json), "exit-code": "1"}})
    assert ran.codes == {"report": 0, "gate": 1}, ran.logs
    calls = runner.gh_calls()
    assert methods(calls) == ["GET", "PATCH"]
    assert "repos/o/r/issues/comments/42" in calls[1]["argv"]
    assert calls[1]["body"].startswith(MARK + "\n### asyncbench ab")
    assert "**SLOWER**" in calls[1]["body"]
    assert ran.outputs["report"]["comment"] == "updated"


def test_an_all_same_comparison_writes_the_summary_posts_no_comment_and_passes(runner):
    ab_json = runner.scratch / "runner-temp" / "same.json"
    ab_json.write_text(json.dumps(ab_data(Label.SAME, Label.SAME)))
    ran = runner.run({}, only=("report", "gate"), outputs={"ab": {"json": str(ab_json), "exit-code": "0"}})
    assert ran.codes == {"report": 0, "gate": 0}, ran.logs
    assert "✅ no slowdown beyond the margin" in runner.summary.read_text()
    assert methods(runner.gh_calls()) == ["GET"]  # looked for an earlier comment to correct; none: nothing posted
    assert ran.outputs["report"] == {"changed": "false", "comment": "none", "comment-url": ""}
    off = runner.run({"comment": "false"}, only=("report",), outputs={"ab": {"json": str(ab_json), "exit-code": "0"}})
    assert off.codes == {"report": 0}
    assert len(runner.gh_calls()) == 1


def test_no_ab_file_says_so_in_the_summary_and_the_action_exits_with_ab_s_code(runner):
    ran = runner.run({}, only=("report", "gate"), outputs={"ab": {"json": str(runner.scratch / "absent.json"), "exit-code": "2"}})
    assert ran.codes == {"report": 0, "gate": 2}
    assert "asyncbench ab wrote no comparison (exit 2)" in runner.summary.read_text()
    assert runner.gh_calls() == []


def test_the_install_step_installs_this_checkout_and_refuses_extras_that_are_not_names(runner):
    """pip is not run here (this test's environment is not the test's to change): a `python` first on PATH writes
    down the argv the step gives it."""
    stub = runner.scratch / "bin" / "python"
    stub.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > {runner.scratch / 'pip-argv'}\n")
    stub.chmod(0o755)
    ran = runner.run({"config": "gate.yaml", "extras": "plot"}, only=("install",))
    assert ran.codes == {"install": 0}, ran.logs
    argv = (runner.scratch / "pip-argv").read_text().splitlines()
    assert argv[:3] == ["-m", "pip", "install"]
    assert argv[-1] == f"{ROOT}[plot]"
    refused = runner.run({"config": "gate.yaml", "extras": "plot] ; touch pwned ; echo ["}, only=("install",))
    assert refused.codes == {"install": 2}
    assert "extras" in refused.logs["install"]
    assert not (runner.workspace / "pwned").exists()


def test_every_input_reaches_a_script_through_env_never_inside_it():
    """A `${{ }}` inside a script is text pasted into bash before it runs: an input (or an output) holding `"; cmd`
    would run. Each reaches its script as a variable."""
    for step in ACTION["runs"]["steps"]:
        if "run" in step:
            assert not EXPRESSION.search(step["run"]), step["id"]


# --- the GitLab template --------------------------------------------------------------------------------------

GITLAB = yaml.safe_load((ROOT / "ci" / "gitlab" / "asyncbench.gitlab-ci.yml").read_text())
#: a `python` that writes down each call and plays `ab`: it writes the ab file and exits 1, as a SLOWER gate does
PYTHON_STUB = """#!/bin/sh
printf '%s\\n' "$*" >> "$CALLS"
case "$*" in "-m asyncbench ab "*) : > asyncbench-ab/ab.json; exit 1;; esac
"""


def test_the_gitlab_template_gates_on_the_merge_request_s_base_and_exits_with_ab_s_code(tmp_path):
    """The hidden job's script, run by a POSIX sh (dash here) with GitLab's variables of a merge request's pipeline:
    it installs what ASYNCBENCH_INSTALL names, runs ab against the merge base, keeps the note and exits with ab's
    code; an input with a shell's `;` or `*` stays one word of ab's command line or several, never a command."""
    job = GITLAB[".asyncbench-ab"]
    assert job["artifacts"]["paths"] == ["asyncbench-ab/"]
    assert job["artifacts"]["reports"]["junit"] == "asyncbench-ab/ab.junit.xml"
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "other.yaml").write_text("")  # what a glob of bench/*.yaml would expand to
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "python").write_text(PYTHON_STUB)
    (tmp_path / "bin" / "python").chmod(0o755)
    env = {
        "PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin",
        "CALLS": str(tmp_path / "calls"),
        **{name: str(value) for name, value in job["variables"].items()},
        "ASYNCBENCH_INSTALL": "asyncbench @ git+https://example.invalid/asyncbench@0123abc",
        "ASYNCBENCH_CONFIG": "bench/gate.yaml bench/*.yaml",
        "ASYNCBENCH_MARGIN": "5%;touch pwned",
        "CI_MERGE_REQUEST_EVENT_TYPE": "detached",
        "CI_MERGE_REQUEST_DIFF_BASE_SHA": "9f8e7d6c",
        "CI_MERGE_REQUEST_IID": "5",
        "CI_API_V4_URL": "https://gitlab.example/api/v4",
        "CI_PROJECT_ID": "9",
    }
    done = subprocess.run(["sh", "-c", job["script"][0]], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 1, done.stderr
    install, ab, report = (tmp_path / "calls").read_text().splitlines()
    assert install.endswith("install --quiet --disable-pip-version-check asyncbench @ git+https://example.invalid/asyncbench@0123abc")
    assert ab == (
        "-m asyncbench ab bench/gate.yaml bench/*.yaml --base 9f8e7d6c --gate-time 2m --max-regression 5%;touch pwned"
        " -o asyncbench-ab/ab.json --markdown asyncbench-ab/ab.md --junit asyncbench-ab/ab.junit.xml --bmf asyncbench-ab/ab.bmf.json"
    )
    assert report == (
        "-m asyncbench.report.pull_request gitlab --ab asyncbench-ab/ab.json --name asyncbench-ab"
        " --api https://gitlab.example/api/v4 --project 9 --mr 5"
    )
    assert not (tmp_path / "pwned").exists()


def test_the_docs_say_what_action_yml_does_of_one_thread_and_exit_1():
    """The Inputs table said one-thread sets the four variables "where the job sets none", while action.yml defaults
    each one separately; the docs listed a failed verification under exit 1, and the exit-code output's description
    left it out."""
    docs = (ROOT / "docs" / "guides" / "github-action.md").read_text()
    row = next(line for line in docs.splitlines() if line.startswith("| `one-thread` |"))
    assert "where the job sets none" not in row
    assert "each" in row
    run = next(step["run"] for step in ACTION["runs"]["steps"] if step.get("id") == "ab")
    assert 'OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"' in run  # each variable on its own
    assert "a failed verification" in docs
    assert "verification" in ACTION["outputs"]["exit-code"]["description"]


def test_the_exit_code_output_says_what_a_case_lost_on_head_does_as_ab_judges_it():
    """The exit-code output's description left out a case present on base and missing or errored on head. `ab`
    (verdicts.paired.judge) makes one that ran ok on base and could not be set up or was skipped on head exit 1, one
    that errored while measured exit 3, and one on base only (removed from head's config) no failure by itself: the
    description, and the guide's list, say each as the code does."""
    from asyncbench.errors import EXIT_ERRORS, EXIT_GATE, EXIT_OK
    from asyncbench.results.paired import PairedCase
    from asyncbench.verdicts import paired as verdicts
    from tests.verdicts.test_paired import _ratio, _report

    same = PairedCase("b", "ok", ratios=(_ratio("SAME"),))
    assert verdicts.judge(_report(PairedCase("a", "error", "head: died", lost=True), same)).code == EXIT_GATE
    assert verdicts.judge(_report(PairedCase("a", "skipped", "head: no GPU", lost=True), same)).code == EXIT_GATE
    assert verdicts.judge(_report(PairedCase("a", "error", "lost while measuring: died"), same)).code == EXIT_ERRORS
    assert verdicts.judge(_report(PairedCase("a", "one-sided", "only on base"), same)).code == EXIT_OK
    said = " ".join(ACTION["outputs"]["exit-code"]["description"].split())
    one, three = said.split("; 1 ", 1)[1].split("; 2 ", 1)[0], said.split("; 3 ", 1)[1]
    assert "a case lost on head (ok on base, but on head it could not be set up or was skipped)" in one
    assert "errored while measured" in three
    assert "not in head's is listed as on one side only and changes no exit code" in said
    guide = " ".join((ROOT / "docs" / "guides" / "github-action.md").read_text().split())
    assert "a case lost on head (ok on base, but on head it could not be set up or was skipped" in guide
    assert "one side only and changes no exit code" in guide
