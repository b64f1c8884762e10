"""The one pull-request comment `ab` keeps in place: its body, when it is due, and the forge calls that keep it.

The GitHub Action (action.yml) and the GitLab template
(ci/gitlab/asyncbench.gitlab-ci.yml) run this module after `asyncbench ab`:

    python -m asyncbench.report.pull_request github --ab ab.json --name asyncbench-ab \\
        --repo "$GITHUB_REPOSITORY" --event "$GITHUB_EVENT_PATH" --summary "$GITHUB_STEP_SUMMARY"

It lives in the package, not beside action.yml, because both CI templates
need it and a GitLab job has only the installed package (an `include:`
brings no file but the template), and because the `ab` file is read with
asyncbench's own readers: a pull request's code runs in the job that wrote
it, so the file may say anything. It is held to every field `show` checks
(results.ab_report) before a word of it is used, and the body is rendered
from it as `asyncbench show ab.json --format markdown` renders it (every
string escaped, report.paired.markdown). No value of the file reaches a
command line: the forge is called with an argv list of validated numbers,
the body goes through a file (gh) or a request body (GitLab).

One comment per pull request and `--name`: the previous one is found by a
hidden marker opening its body (`<!-- asyncbench-ab -->`) and by its author,
and edited; a new one is posted only when none exists and the comparison is
worth one (some verdict is not SAME, or a case errored or ran on one side
only). An all-SAME run posts nothing, but edits a comment it posted
earlier: a comment that still said SLOWER after the slowdown was fixed would
contradict the run it sits beside.

A comment that cannot be posted (a fork's pull request gets a read-only
token) is a warning: the gate is `ab`'s exit code, and the job summary has
the comparison.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, Sequence

from asyncbench.errors import EXIT_INPUT, EXIT_OK, InputError
from asyncbench.report import paired
from asyncbench.results import ab_file, ab_report
from asyncbench.results.labels import Label

#: what tells this comment from every other: letters, digits, `.`, `_`, `-` (it goes into an HTML comment, the
#: artifact's name and a log line), at most 64 of them
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
DEFAULT_NAME = "asyncbench-ab"
#: the author whose marked comment is edited: the one GITHUB_TOKEN posts as (a comment by anyone else is left alone
#: even if it carries the marker; a workflow posting with another token names that account with --author)
GITHUB_ACTIONS_LOGIN = "github-actions[bot]"
#: GitHub refuses a comment over 65,536 characters (GitLab's limit is 1,000,000): the body is cut under it, with
#: room for the line that says where the rest is
BODY_CHARS_MAX = 65_000
#: cases that ended so are worth a comment on their own: the gate fails on them and there is no verdict to be SAME
NOT_COMPARED = ("error", "one-sided")
#: "owner/repo" as GitHub spells one (GITHUB_REPOSITORY)
REPOSITORY = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
#: how long one call to the forge may take (a hung API must not hold the job to its timeout)
CALL_TIMEOUT_S = 60
#: GitLab's page size for notes (its largest)
GITLAB_PAGE = 100
#: the variable the GitLab template's token is read from: a project access token with the `api` scope (CI_JOB_TOKEN
#: cannot write notes); never an argument, which `ps` would show
GITLAB_TOKEN_VARIABLE = "ASYNCBENCH_GITLAB_TOKEN"


class ForgeError(Exception):
    """A call to the forge failed (no permission, no network, an answer that is not what its API documents)."""


@dataclass(frozen=True)
class Comment:
    """A comment on the pull request as the forge lists it: what finding ours needs."""

    id: int
    author: str
    body: str


@dataclass(frozen=True)
class Kept:
    """What keeping the comment did: 'posted', 'updated' or 'none', and the comment's address ('' for none)."""

    action: str
    url: str = ""


class Forge(Protocol):
    """A pull request's comments on one forge: list them, edit one, post one (each returns the comment's URL)."""

    def comments(self) -> list[Comment]: ...

    def update(self, comment_id: int, body: str) -> str: ...

    def create(self, body: str) -> str: ...


def marker(name: str) -> str:
    """The hidden first line of the comment: an HTML comment, which no forge renders."""
    return f"<!-- {name} -->"


def due(read: ab_file.ABFile) -> bool:
    """Whether the comparison is worth a new comment: some verdict is not SAME (SLOWER, INCONCLUSIVE, but also
    FASTER and NOT SLOWER, which a reviewer wants to see too), or a case errored or ran on one side only."""
    return any(case.status in NOT_COMPARED for case in read.cases) or any(
        ratio.label != Label.SAME for case in read.cases for ratio in case.ratios
    )


def rendered(path: str | Path) -> tuple[ab_file.ABFile, str]:
    """The `ab` file at `path`, every field checked (InputError otherwise), and its comparison as markdown."""
    raw = ab_report.read_raw(path)
    read = ab_file.from_dict(raw, str(path))
    return read, paired.markdown(paired.shown_again(ab_report.from_dict(raw, str(path))))


def body(name: str, markdown: str, limit: int = BODY_CHARS_MAX) -> str:
    """The comment: the marker, then the markdown, cut at a line under `limit` characters where it is longer."""
    text = f"{marker(name)}\n{markdown.rstrip()}\n"
    if len(text) <= limit:
        return text
    note = "\n\n_… cut here: the whole comparison is in the job's summary and its uploaded files._\n"
    kept = text[: limit - len(note)]
    return kept[: kept.rfind("\n")] + note


def previous(comments: Sequence[Comment], name: str, author: str | None) -> Comment | None:
    """Our earlier comment: the first whose body opens with the marker, by `author` (None: the token's own,
    already filtered by the forge)."""
    for comment in comments:
        if comment.body.startswith(marker(name)) and (author is None or comment.author == author):
            return comment
    return None


def keep_one(forge: Forge, name: str, text: str, worth_one: bool, author: str | None) -> Kept:
    """Edit our comment where one exists, post one where none does and the comparison is `worth_one`."""
    earlier = previous(forge.comments(), name, author)
    if earlier is not None:
        return Kept("updated", forge.update(earlier.id, text))
    if worth_one:
        return Kept("posted", forge.create(text))
    return Kept("none")


# --- GitHub, through the gh command line ---------------------------------------------------------------------


def _json_values(text: str) -> list[Any]:
    """Every JSON value in `text`: `gh api --paginate` prints one array per page, one after another."""
    decoder, values, at = json.JSONDecoder(), [], 0
    while at < len(text):
        if text[at].isspace():
            at += 1
            continue
        value, at = decoder.raw_decode(text, at)
        values.append(value)
    return values


def _integer(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ForgeError(f"{what} is not a positive integer: {value!r}")
    return value


def _comment(raw: Any, author_key: str, login_key: str, body_key: str) -> Comment:
    """A comment from a forge's JSON (GitHub: user.login and body; GitLab: author.username and body)."""
    if not isinstance(raw, dict):
        raise ForgeError(f"a comment is not an object: {type(raw).__name__}")
    user = raw.get(author_key)
    login = user.get(login_key) if isinstance(user, dict) else None  # a deleted account's comment has no user
    text = raw.get(body_key)
    return Comment(
        _integer(raw.get("id"), "a comment's id"), login if isinstance(login, str) else "", text if isinstance(text, str) else ""
    )


def _url(answer: Any, key: str) -> str:
    url = answer.get(key) if isinstance(answer, dict) else None
    return url if isinstance(url, str) and url.startswith(("https://", "http://")) else ""


class GitHub:
    """A GitHub pull request's comments through `gh api` (GH_TOKEN and GH_HOST from the environment), each call an
    argv list of validated values, each body in a JSON file (`--input`)."""

    def __init__(self, repository: str, number: int, gh: str = "gh"):
        if not REPOSITORY.fullmatch(repository):
            raise InputError(f"--repo {repository!r}: expected owner/name")
        self.repository, self.number, self.gh = repository, _positive(number, "the pull request's number"), gh

    def _api(self, *args: str, body: str | None = None) -> str:
        with tempfile.TemporaryDirectory(prefix="asyncbench-comment-") as folder:
            argv = [self.gh, "api", "-H", "Accept: application/vnd.github+json", *args]
            if body is not None:
                payload = Path(folder) / "comment.json"
                payload.write_text(json.dumps({"body": body}), encoding="utf-8")
                argv += ["--input", str(payload)]
            try:
                done = subprocess.run(argv, capture_output=True, text=True, timeout=CALL_TIMEOUT_S, check=False)
            except (OSError, subprocess.TimeoutExpired) as exc:
                raise ForgeError(f"gh api could not run: {exc}") from None
        if done.returncode != 0:
            said = (done.stderr.strip() or done.stdout.strip()).splitlines()
            raise ForgeError(f"gh api {args[-1]}: {said[-1] if said else f'exit {done.returncode}'}")
        return done.stdout

    def comments(self) -> list[Comment]:
        listed = self._api("--paginate", f"repos/{self.repository}/issues/{self.number}/comments?per_page=100")
        try:
            pages = _json_values(listed)
        except json.JSONDecodeError as exc:
            raise ForgeError(f"gh api: the comments are not JSON: {exc.msg}") from None
        if not all(isinstance(page, list) for page in pages):
            raise ForgeError("gh api: the comments are not a list")
        return [_comment(raw, "user", "login", "body") for page in pages for raw in page]

    def update(self, comment_id: int, body: str) -> str:
        answer = self._api("-X", "PATCH", f"repos/{self.repository}/issues/comments/{_integer(comment_id, 'a comment id')}", body=body)
        return _url(_answer(answer), "html_url")

    def create(self, body: str) -> str:
        return _url(_answer(self._api("-X", "POST", f"repos/{self.repository}/issues/{self.number}/comments", body=body)), "html_url")


def _answer(text: str) -> Any:
    try:
        return json.loads(text) if text.strip() else None
    except json.JSONDecodeError:
        return None  # posted all the same: only its address is lost


def _positive(value: int, what: str) -> int:
    if value <= 0:
        raise InputError(f"{what} {value}: expected a positive number")
    return value


def pull_request_number(event_path: str | None) -> int | None:
    """The pull request's number from the event GitHub wrote (GITHUB_EVENT_PATH); None for another event."""
    if not event_path:
        return None
    try:
        event = json.loads(Path(event_path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    pull = event.get("pull_request") if isinstance(event, dict) else None
    number = pull.get("number") if isinstance(pull, dict) else None
    return number if isinstance(number, int) and not isinstance(number, bool) and number > 0 else None


# --- GitLab, through its REST API ----------------------------------------------------------------------------


class GitLab:
    """A GitLab merge request's notes through the REST API (v4), authenticated with a token's PRIVATE-TOKEN header.
    Only the token's own notes are ours: its user is asked for once (GET /user)."""

    def __init__(self, api: str, project: int, merge_request: int, token: str):
        if not api.startswith(("https://", "http://")):
            raise InputError(f"--api {api!r}: expected the API's URL (CI_API_V4_URL)")
        self.api, self.token = api.rstrip("/"), token
        self.notes = f"{self.api}/projects/{_positive(project, '--project')}/merge_requests/{_positive(merge_request, '--mr')}/notes"

    def _call(self, method: str, url: str, body: str | None = None) -> tuple[Any, str]:
        """The parsed answer and the next page's number ('' for none)."""
        data = json.dumps({"body": body}).encode() if body is not None else None
        request = urllib.request.Request(url, data=data, method=method, headers={"PRIVATE-TOKEN": self.token})
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=CALL_TIMEOUT_S) as answer:
                return json.loads(answer.read().decode("utf-8")), answer.headers.get("X-Next-Page", "") or ""
        except urllib.error.HTTPError as exc:
            raise ForgeError(f"{method} {urllib.parse.urlsplit(url).path}: HTTP {exc.code} {exc.reason}") from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise ForgeError(f"{method} {urllib.parse.urlsplit(url).path}: {exc}") from None

    def author(self) -> str:
        user, _ = self._call("GET", f"{self.api}/user")
        login = user.get("username") if isinstance(user, dict) else None
        if not isinstance(login, str):
            raise ForgeError("GET /user: no username")
        return login

    def comments(self) -> list[Comment]:
        listed, page = [], "1"
        while page:
            if not page.isdigit():
                raise ForgeError(f"the notes' next page is not a number: {page[:20]!r}")
            notes, page = self._call("GET", f"{self.notes}?sort=asc&per_page={GITLAB_PAGE}&page={page}")
            if not isinstance(notes, list):
                raise ForgeError("the notes are not a list")
            listed += [_comment(raw, "author", "username", "body") for raw in notes]
        return listed

    def update(self, comment_id: int, body: str) -> str:
        self._call("PUT", f"{self.notes}/{_integer(comment_id, 'a note id')}", body)
        return ""  # a note's answer carries no address of its own

    def create(self, body: str) -> str:
        self._call("POST", self.notes, body)
        return ""


# --- the command line ----------------------------------------------------------------------------------------

EPILOG = """\
examples (what action.yml and the GitLab template run after `asyncbench ab -o ab.json`):
  python -m asyncbench.report.pull_request github --ab ab.json --repo "$GITHUB_REPOSITORY" \\
      --event "$GITHUB_EVENT_PATH" --summary "$GITHUB_STEP_SUMMARY" --outputs "$GITHUB_OUTPUT"
  ASYNCBENCH_GITLAB_TOKEN=... python -m asyncbench.report.pull_request gitlab --ab ab.json \\
      --api "$CI_API_V4_URL" --project "$CI_PROJECT_ID" --mr "$CI_MERGE_REQUEST_IID"
  python -m asyncbench.report.pull_request none --ab ab.json --summary summary.md     # no forge: the summary only
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m asyncbench.report.pull_request",
        description="Keep one pull-request comment of an `asyncbench ab` file in place; write the job summary.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("forge", choices=("github", "gitlab", "none"), help="where the pull request is")
    parser.add_argument("--ab", required=True, help="the file `asyncbench ab -o` wrote")
    parser.add_argument("--name", default=DEFAULT_NAME, help=f"tells this comment from others [default: {DEFAULT_NAME}]")
    parser.add_argument("--summary", help="append the comparison's markdown to this file (GITHUB_STEP_SUMMARY)")
    parser.add_argument("--outputs", help="append changed=, comment= and comment-url= to this file (GITHUB_OUTPUT)")
    parser.add_argument("--no-comment", action="store_true", help="write the summary and outputs only")
    github = parser.add_argument_group("github")
    github.add_argument("--repo", help="owner/name (GITHUB_REPOSITORY)")
    github.add_argument("--event", help="the event's JSON (GITHUB_EVENT_PATH): the pull request's number")
    github.add_argument("--author", default=GITHUB_ACTIONS_LOGIN, help=f"whose marked comment is edited [default: {GITHUB_ACTIONS_LOGIN}]")
    gitlab = parser.add_argument_group(f"gitlab (the token: ${GITLAB_TOKEN_VARIABLE})")
    gitlab.add_argument("--api", help="the API's URL (CI_API_V4_URL)")
    gitlab.add_argument("--project", type=int, help="the project's id (CI_PROJECT_ID)")
    gitlab.add_argument("--mr", type=int, help="the merge request's iid (CI_MERGE_REQUEST_IID); none: no note")
    return parser


def _forge(options: argparse.Namespace) -> tuple[Forge, str | None] | str:
    """The forge and whose comments are ours, or why there is no comment to keep."""
    if options.no_comment or options.forge == "none":
        return "comments are off"
    if options.forge == "github":
        number = pull_request_number(options.event)
        if number is None:
            return "not a pull request's event"
        return GitHub(options.repo or "", number), options.author
    if not options.mr:
        return "not a merge request's pipeline"
    token = os.environ.get(GITLAB_TOKEN_VARIABLE, "")
    if not token:
        return f"no ${GITLAB_TOKEN_VARIABLE} (a project access token with the api scope)"
    lab = GitLab(options.api or "", options.project or 0, options.mr, token)
    return lab, lab.author()


def _append(path: str | None, text: str) -> None:
    if path:
        with open(path, "a", encoding="utf-8") as file:
            file.write(text)


def _warn(forge: str, message: str) -> None:
    """A line on stderr; on GitHub a workflow command, which shows it on the run's page."""
    print(f"::warning title=asyncbench comment::{message}" if forge == "github" else f"asyncbench: warning: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Summary, outputs and comment for one `ab` file: 0, or 2 (one line) for an unusable file or option."""
    options = _parser().parse_args(argv)
    try:
        if not NAME.fullmatch(options.name):
            raise InputError(f"--name {options.name!r}: letters, digits, '.', '_' and '-', at most 64")
        read, markdown = rendered(options.ab)
        worth_one = due(read)
        _append(options.summary, markdown.rstrip() + "\n")
        forge = _forge(options)
        kept = Kept("none")
        if isinstance(forge, str):
            print(f"asyncbench: no comment: {forge}", file=sys.stderr)
        else:
            try:
                kept = keep_one(forge[0], options.name, body(options.name, markdown), worth_one, forge[1])
            except ForgeError as exc:
                _warn(options.forge, f"the comment could not be kept: {exc} (the job summary has the comparison)")
            else:
                said = {"posted": "posted", "updated": "updated", "none": "not posted: no verdict but SAME, no case errored"}
                print(f"asyncbench: comment {said[kept.action]} {kept.url}".rstrip(), file=sys.stderr)
    except InputError as exc:
        print(f"asyncbench: error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except ForgeError as exc:  # finding the GitLab token's user
        _warn(options.forge, f"the comment could not be kept: {exc}")
        kept = Kept("none")
    _append(options.outputs, f"changed={str(worth_one).lower()}\ncomment={kept.action}\ncomment-url={kept.url}\n")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
