"""The one pull-request comment `ab` keeps in place: its body, when it is due, and keeping it (the forge's calls: host.forges).

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
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from asyncbench.errors import EXIT_INPUT, EXIT_OK, InputError
from asyncbench.host.forges import Comment, Forge, ForgeError, GitHub, GitLab, pull_request_number
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
#: the variable the GitLab template's token is read from: a project access token with the `api` scope (CI_JOB_TOKEN
#: cannot write notes); never an argument, which `ps` would show
GITLAB_TOKEN_VARIABLE = "ASYNCBENCH_GITLAB_TOKEN"


@dataclass(frozen=True)
class Kept:
    """What keeping the comment did: 'posted', 'updated' or 'none', and the comment's address ('' for none)."""

    action: str
    url: str = ""


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
    report = ab_report.ABReport.load(path)
    return ab_file.ABFile.of(report, str(path)), paired.markdown(paired.shown_again(report))


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
                what = "note" if options.forge == "gitlab" else "comment"  # each forge's own word
                print(f"asyncbench: {what} {said[kept.action]} {kept.url}".rstrip(), file=sys.stderr)
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
