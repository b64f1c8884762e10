"""asyncbench's own folder in a project, `.asyncbench/`: the default history store and the jobs folders.

What goes there belongs to the machine that made it (a store of this runner's runs, a submission's logs and results),
not to the project's sources, so the folder ignores itself in git as pytest's and ruff's caches do: a `git add .`
after a first run must not commit a SQLite file and a submission's logs. Deleting the folder's .gitignore commits it.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

OWN_FOLDER = Path(".asyncbench")
GITIGNORE = (
    "# Made by asyncbench: its history store and jobs folders are this machine's, not the project's.\n"
    "# Delete this file to commit them.\n"
    "*\n"
)


def make(folder: Path = OWN_FOLDER) -> None:
    """Create `folder` (and its parents) if it is missing, with a .gitignore that ignores all of it; a folder that
    exists is left as it is (its owner may have removed the .gitignore on purpose). OSError as mkdir raises it."""
    if folder.is_dir():
        return
    folder.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(OSError):  # the folder is what matters; its ignore file is only a convenience
        (folder / ".gitignore").write_text(GITIGNORE)
