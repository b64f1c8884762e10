"""The pull-request comment the GitHub Action and the GitLab template keep in place (report.pull_request): when one
is due, which earlier comment is ours, what its body holds, and the two forges' calls. Pure Python, a fake forge, a
stub `gh` and a local HTTP server standing in for GitLab; the action's whole path runs in tests/e2e/test_action.py."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterator

import pytest

from asyncbench.host import forges
from asyncbench.host.forges import Comment, ForgeError
from asyncbench.report import pull_request
from asyncbench.results import ab_file
from asyncbench.results.labels import Label
from tests.support.ab_files import ab_data

MARK = "<!-- asyncbench-ab -->"
BOT = pull_request.GITHUB_ACTIONS_LOGIN


@pytest.mark.parametrize(
    "labels, status, due",
    [
        ((Label.SAME, Label.SAME), "ok", False),
        ((Label.SAME, Label.SLOWER), "ok", True),
        ((Label.INCONCLUSIVE,), "ok", True),
        ((Label.FASTER,), "ok", True),
        ((Label.NOT_SLOWER,), "ok", True),
        ((), "error", True),
        ((), "skipped", False),
    ],
)
def test_a_comment_is_due_when_a_verdict_is_not_same_or_a_case_errored(labels, status, due):
    assert pull_request.due(ab_file.from_dict(ab_data(*labels, status=status), "ab.json")) is due


class FakeForge:
    """A pull request's comments in memory, each call written down."""

    def __init__(self, *comments: Comment):
        self.listed, self.calls = list(comments), []

    def comments(self) -> list[Comment]:
        self.calls.append(("GET",))
        return self.listed

    def update(self, comment_id: int, body: str) -> str:
        self.calls.append(("PATCH", comment_id, body))
        return f"https://forge/c/{comment_id}"

    def create(self, body: str) -> str:
        self.calls.append(("POST", body))
        return "https://forge/c/new"


def test_a_due_comment_is_posted_once_and_then_edited_in_place():
    forge = FakeForge(Comment(1, "alice", "LGTM"))
    assert pull_request.keep_one(forge, "asyncbench-ab", f"{MARK}\nSLOWER", True, BOT) == pull_request.Kept("posted", "https://forge/c/new")
    forge = FakeForge(Comment(1, "alice", "LGTM"), Comment(7, BOT, f"{MARK}\nold"))
    kept = pull_request.keep_one(forge, "asyncbench-ab", f"{MARK}\nnew", True, BOT)
    assert kept == pull_request.Kept("updated", "https://forge/c/7")
    assert forge.calls == [("GET",), ("PATCH", 7, f"{MARK}\nnew")]


def test_an_all_same_run_posts_nothing_but_corrects_an_earlier_comment():
    """All SAME and no comment yet: nothing is posted. All SAME after a SLOWER comment: that comment is edited, or
    it would go on saying SLOWER beside a run that found no slowdown."""
    quiet = FakeForge(Comment(1, "alice", "LGTM"))
    assert pull_request.keep_one(quiet, "asyncbench-ab", f"{MARK}\nSAME", False, BOT).action == "none"
    assert quiet.calls == [("GET",)]
    fixed = FakeForge(Comment(7, BOT, f"{MARK}\nSLOWER"))
    assert pull_request.keep_one(fixed, "asyncbench-ab", f"{MARK}\nSAME", False, BOT).action == "updated"
    assert fixed.calls[-1] == ("PATCH", 7, f"{MARK}\nSAME")


@pytest.mark.parametrize(
    "comment",
    [
        Comment(3, "mallory", f"{MARK}\nplanted by a person"),  # the marker, but not our author: never edited
        Comment(4, BOT, f"> {MARK}\nquoted in a reply"),  # the marker, not opening the body
        Comment(5, BOT, "<!-- asyncbench-ab-gpu -->\nthe other gate's"),  # another --name's
    ],
)
def test_a_comment_that_is_not_ours_is_never_edited(comment):
    forge = FakeForge(comment)
    assert pull_request.keep_one(forge, "asyncbench-ab", f"{MARK}\nSLOWER", True, BOT).action == "posted"


def test_the_body_opens_with_the_marker_and_a_long_one_is_cut_at_a_line_under_the_limit():
    short = pull_request.body("asyncbench-ab", "### table\n| a |\n")
    assert short == f"{MARK}\n### table\n| a |\n"
    long = pull_request.body("asyncbench-ab", "\n".join(f"| row {n} |" for n in range(20_000)), limit=1_000)
    assert len(long) <= 1_000
    assert long.startswith(MARK)
    assert long.splitlines()[-3].startswith("| row ")  # cut between rows, not inside one
    assert "cut here" in long


@pytest.fixture
def gh(tmp_path: Path, monkeypatch) -> Path:
    """A `gh` first on PATH that answers like the GitHub API refusing a fork's read-only token."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    stub = bin_dir / "gh"
    stub.write_text("#!/bin/sh\necho 'gh: Resource not accessible by integration (HTTP 403)' >&2\nexit 1\n")
    stub.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    return stub


def test_a_comment_the_token_may_not_post_is_a_warning_and_the_summary_is_still_written(tmp_path, gh, capsys):
    (tmp_path / "ab.json").write_text(json.dumps(ab_data(Label.SLOWER)))
    (tmp_path / "event.json").write_text(json.dumps({"pull_request": {"number": 7}}))
    argv = ["github", "--ab", str(tmp_path / "ab.json"), "--repo", "o/r", "--event", str(tmp_path / "event.json")]
    code = pull_request.main([*argv, "--summary", str(tmp_path / "summary.md"), "--outputs", str(tmp_path / "out")])
    assert code == 0
    err = capsys.readouterr().err
    assert "::warning title=asyncbench comment::the comment could not be kept" in err
    assert "HTTP 403" in err
    assert "**SLOWER**" in (tmp_path / "summary.md").read_text()
    assert (tmp_path / "out").read_text() == "changed=true\ncomment=none\ncomment-url=\n"


@pytest.mark.parametrize(
    "tamper, said",
    [
        (lambda d: d["cases"][0]["ratios"][0].update(verdict="pass", label="SLOWER"), "cases[0].ratios[0].verdict"),
        (lambda d: d["cases"][0]["ratios"][0].update(label="$(touch pwned)"), "cases[0].ratios[0].label"),
        (lambda d: d.pop("head"), "has no head"),
    ],
)
def test_a_tampered_ab_file_is_one_line_exit_2_and_nothing_is_written_or_called(tmp_path, gh, capsys, tamper, said):
    data = ab_data(Label.SLOWER)
    tamper(data)
    (tmp_path / "ab.json").write_text(json.dumps(data))
    (tmp_path / "event.json").write_text(json.dumps({"pull_request": {"number": 7}}))
    gh.write_text(f"#!/bin/sh\ntouch {tmp_path / 'called'}\n")
    summary = tmp_path / "summary.md"
    argv = ["github", "--ab", str(tmp_path / "ab.json"), "--repo", "o/r", "--event", str(tmp_path / "event.json")]
    assert pull_request.main([*argv, "--summary", str(summary)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert said in err
    assert not summary.exists()
    assert not (tmp_path / "called").exists()


def test_a_name_that_could_break_out_of_the_marker_is_refused(tmp_path, capsys):
    (tmp_path / "ab.json").write_text(json.dumps(ab_data(Label.SLOWER)))
    assert pull_request.main(["none", "--ab", str(tmp_path / "ab.json"), "--name", "x --><img src=y>"]) == 2
    assert "--name" in capsys.readouterr().err


# --- GitLab: its REST API, served locally ----------------------------------------------------------------------


class GitLabStandIn(BaseHTTPRequestHandler):
    """Answers /api/v4/user and a merge request's notes, two pages of them, and writes every call down."""

    calls: list[tuple[str, str, str | None, str | None]] = []
    pages: dict[str, list[dict[str, Any]]] = {}

    def _answer(self, value: Any, next_page: str = "") -> None:
        data = json.dumps(value).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("X-Next-Page", next_page)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _record(self) -> str | None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length))["body"] if length else None
        self.calls.append((self.command, self.path, self.headers.get("PRIVATE-TOKEN"), body))
        return body

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self._record()
        if self.path == "/api/v4/user":
            return self._answer({"username": "project_9_bot"})
        page = self.path.rsplit("page=", 1)[1]
        return self._answer(self.pages[page], "2" if page == "1" else "")

    def do_PUT(self) -> None:  # noqa: N802
        self._record()
        self._answer({"id": 1})

    do_POST = do_PUT  # noqa: N815

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def gitlab() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), GitLabStandIn)
    GitLabStandIn.calls = []
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/api/v4"
    finally:
        server.shutdown()
        server.server_close()


def test_gitlab_edits_the_token_s_own_marked_note_found_on_a_later_page(tmp_path, gitlab, monkeypatch):
    GitLabStandIn.pages = {
        "1": [{"id": 11, "author": {"username": "alice"}, "body": f"{MARK}\nalice's"}],
        "2": [{"id": 12, "author": {"username": "project_9_bot"}, "body": f"{MARK}\nold"}],
    }
    (tmp_path / "ab.json").write_text(json.dumps(ab_data(Label.SLOWER)))
    monkeypatch.setenv(pull_request.GITLAB_TOKEN_VARIABLE, "glpat-secret")
    argv = ["gitlab", "--ab", str(tmp_path / "ab.json"), "--api", gitlab, "--project", "9", "--mr", "3"]
    assert pull_request.main([*argv, "--outputs", str(tmp_path / "out")]) == 0
    notes = "/api/v4/projects/9/merge_requests/3/notes"
    assert [(method, path) for method, path, _, _ in GitLabStandIn.calls] == [
        ("GET", "/api/v4/user"),
        ("GET", f"{notes}?sort=asc&per_page=100&page=1"),
        ("GET", f"{notes}?sort=asc&per_page=100&page=2"),
        ("PUT", f"{notes}/12"),
    ]
    assert {token for _, _, token, _ in GitLabStandIn.calls} == {"glpat-secret"}
    assert GitLabStandIn.calls[-1][3].startswith(f"{MARK}\n### asyncbench ab")
    assert "comment=updated" in (tmp_path / "out").read_text()


def test_gitlab_posts_a_note_when_none_is_its_own_and_says_why_not_without_a_token(tmp_path, gitlab, monkeypatch, capsys):
    GitLabStandIn.pages = {"1": [], "2": []}
    forge = forges.GitLab(gitlab, 9, 3, "glpat-secret")
    assert pull_request.keep_one(forge, "asyncbench-ab", f"{MARK}\nSLOWER", True, forge.author()).action == "posted"
    assert GitLabStandIn.calls[-1][:2] == ("POST", "/api/v4/projects/9/merge_requests/3/notes")
    (tmp_path / "ab.json").write_text(json.dumps(ab_data(Label.SLOWER)))
    monkeypatch.delenv(pull_request.GITLAB_TOKEN_VARIABLE, raising=False)
    argv = ["gitlab", "--ab", str(tmp_path / "ab.json"), "--api", gitlab, "--project", "9", "--mr", "3"]
    assert pull_request.main(argv) == 0
    assert f"no ${pull_request.GITLAB_TOKEN_VARIABLE}" in capsys.readouterr().err


def test_a_forge_answer_that_is_not_its_documented_shape_is_a_forge_error():
    with pytest.raises(ForgeError, match="id"):
        forges._comment({"id": "7; rm -rf /", "user": {"login": BOT}, "body": MARK}, "user", "login", "body")
    assert forges._json_values('[{"id": 1}]\n[{"id": 2}]') == [[{"id": 1}], [{"id": 2}]]  # gh --paginate's pages
