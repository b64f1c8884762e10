"""Every git command asyncbench runs, in one place: the checkout a run measures, the commits the history dates, the
worktrees `ab` checks revisions out into.

A revision may come from a file anyone could have written (an `ab` file, a
results file recorded later): here it reaches git only after
`--end-of-options`, and as `REV^{commit}`, so no value can be read as an
option such as `--output=FILE`. Callers that take a revision from a file
check it is hex first (results.fields.is_sha); this module is the second
fence, not the only one.

Each caller says how long git may take: a run's checkout is a courtesy that
must not hold up a run (FACT_TIMEOUT_S), dating a recorded run's commit is
done once per record (DATING_TIMEOUT_S), checking a revision out is real
work (the worktrees' own limit).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

# A fact about the checkout a run measures (its HEAD, whether it is modified) is a courtesy: a slow filesystem must
# not hold up a run, and no answer is a fact left out.
FACT_TIMEOUT_S = 2.0
# Dating a recorded run's commit (its time, its branch) happens once per record, in a repository git may not have
# read for a while: a few seconds cold. Past this the run is stored without them.
DATING_TIMEOUT_S = 10.0


def run(repo: str | Path | None, *args: str, timeout_s: float) -> str:
    """`git [-C repo] ARGS`'s output, stripped. CalledProcessError when git fails, TimeoutExpired when it does not
    answer in `timeout_s`, FileNotFoundError when there is no git at all (each caller says what that means)."""
    where = ("-C", str(repo)) if repo is not None else ()
    done = subprocess.run(["git", *where, *args], capture_output=True, text=True, timeout=timeout_s, check=False)
    if done.returncode != 0:
        raise subprocess.CalledProcessError(done.returncode, args, done.stdout, done.stderr)
    return done.stdout.strip()


def _fact(repo: str | Path | None, *args: str, timeout_s: float = FACT_TIMEOUT_S) -> str | None:
    """A git answer about the checkout, None where git is missing, fails or is slow."""
    try:
        return run(repo, *args, timeout_s=timeout_s)
    except (OSError, subprocess.SubprocessError):
        return None


def checkout_sha(directory: str | Path = ".") -> str | None:
    """HEAD's SHA when `directory` is inside a git work tree (with '-dirty' if a tracked file is modified), else
    None."""
    sha = _fact(directory, "rev-parse", "HEAD")
    dirty = _fact(directory, "status", "--porcelain", "--untracked-files=no") if sha else None
    if not sha or dirty is None:
        return None
    return f"{sha}-dirty" if dirty else sha


def commit_time(commit: str, repo: str | Path | None = None) -> str | None:
    """When `commit` was committed (ISO 8601), where the repository has it; None otherwise. `commit` is named as
    `COMMIT^{commit}` after `--end-of-options`: even a value from a file is never read as an option."""
    return _fact(repo, "show", "-s", "--format=%cI", "--end-of-options", f"{commit}^{{commit}}", timeout_s=DATING_TIMEOUT_S) or None


def branch_at(commit: str, repo: str | Path | None = None) -> str | None:
    """The checkout's branch when its HEAD is `commit` (None: another commit, a detached HEAD, or no git)."""
    head = _fact(repo, "rev-parse", "HEAD", timeout_s=DATING_TIMEOUT_S)
    branch = _fact(repo, "rev-parse", "--abbrev-ref", "HEAD", timeout_s=DATING_TIMEOUT_S)
    return branch if head == commit and branch and branch != "HEAD" else None
