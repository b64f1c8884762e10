"""A pull request's comments on a forge (GitHub through `gh api`, GitLab through its REST API): list them, edit one,
post one. What to say and when is report.pull_request's; this module only talks to the forge, each call built from
validated values (numbers, an owner/name), each body in a file or a request body, never on a command line."""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from asyncbench.errors import InputError

#: "owner/repo" as GitHub spells one (GITHUB_REPOSITORY)
REPOSITORY = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
#: how long one call to the forge may take (a hung API must not hold the job to its timeout)
CALL_TIMEOUT_S = 60
#: GitLab's page size for notes (its largest)
GITLAB_PAGE = 100


class ForgeError(Exception):
    """A call to the forge failed (no permission, no network, an answer that is not what its API documents)."""


@dataclass(frozen=True)
class Comment:
    """A comment on the pull request as the forge lists it: what finding ours needs."""

    id: int
    author: str
    body: str


class Forge(Protocol):
    """A pull request's comments on one forge: list them, edit one, post one (each returns the comment's URL)."""

    def comments(self) -> list[Comment]: ...

    def update(self, comment_id: int, body: str) -> str: ...

    def create(self, body: str) -> str: ...


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
