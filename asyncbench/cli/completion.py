"""Shell completion of the options that name things: `-w` (a built-in workload, an installed plugin, or the steps
of a `FILE.py:`) and `-b` (a backend), in bash, zsh and fish through click's shell_complete.

A shell asks through the script click writes (`eval "$(_ASYNCBENCH_COMPLETE=bash_source asyncbench)"`, docs:
getting started). Completing reads names only: the workload and backend registries (no framework imported), the
entry points' metadata (no plugin imported), a file's source (workloads.source_names: parsed, never run). It
never fails: whatever goes wrong completes to nothing, since a traceback would land on the user's prompt.

bash breaks words at ':' (it is in COMP_WORDBREAKS), so `-w steps.py:tr` reaches click as `steps.py`, `:` and
`tr`, and bash replaces only `tr` with what comes back. `ColonBash` joins such words again before click reads
them, and gives each name back without the part bash already has on the line: what bash-completion's
`__ltrim_colon_completions` does for its own commands. Importing this module installs it for `bash`.
"""

from __future__ import annotations

import os
from pathlib import Path

import click
from click.shell_completion import BashComplete, CompletionItem, add_completion_class, split_arg_string

#: what a file reference's file part ends with (workloads.plugins.canonical reads FILE.py:NAME)
PY = ".py"


def workloads(context: click.Context, parameter: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """`-w`: the built-in workloads and installed plugins named so far; after `FILE.py:`, the file's steps."""
    try:
        return _workloads(incomplete)
    except Exception:  # noqa: BLE001 - a completion never fails: a traceback would land on the user's prompt
        return []


def _workloads(incomplete: str) -> list[CompletionItem]:
    where, colon, partial = incomplete.rpartition(":")
    if colon:
        if not where.endswith(PY):  # a module's names are known only by importing it
            return []
        from asyncbench.workloads import source_names

        names = source_names.file_workload_names(Path(where).expanduser())  # relative to here, as -w reads it
        return [CompletionItem(f"{where}:{name}") for name in names if name.startswith(partial)]
    from asyncbench.workloads import BUILT_IN, plugins

    items = [CompletionItem(name, help=_line(w.summary)) for name, w in BUILT_IN.items() if name.startswith(incomplete)]
    for name, plugin in plugins.plugins().items():
        if name.startswith(incomplete) and name not in BUILT_IN:
            items.append(CompletionItem(name, help=_line(f"plugin: {plugin.target}")))
    return items


def backends(context: click.Context, parameter: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """`-b`: the backends named so far (the registry's names: no framework is imported)."""
    try:
        from asyncbench.backends import BACKENDS

        return [CompletionItem(name) for name in BACKENDS if name.startswith(incomplete)]
    except Exception:  # noqa: BLE001 - a completion never fails
        return []


def _line(text: str) -> str:
    """A help text on one line (zsh's and fish's completion formats are line-based)."""
    return " ".join(str(text).split())


def joined_at_colons(words: list[str], current: int) -> tuple[list[str], int, str]:
    """The words up to the one being completed, each run of colons bash broke out joined again to its neighbours
    (`steps.py`, `:`, `tr` -> `steps.py:tr`); the index of the word being completed among them; and the part of it
    bash has on the line as words of their own ('steps.py:'), or '' where bash did not break it."""
    joined: list[str] = []
    parts: list[int] = []  # how many of bash's words each joined word is
    glue = False
    for word in words[: current + 1]:
        colons = bool(word) and not word.strip(":")
        if len(joined) > 2 and (glue or colons):  # never onto the program's or the command's name
            joined[-1] += word
            parts[-1] += 1
        else:
            joined.append(word)
            parts.append(1)
        glue = colons
    if current >= len(words):  # a new word after a space: nothing to join it to
        return joined, len(joined), ""
    typed = joined[-1][: joined[-1].rfind(":") + 1] if parts[-1] > 1 else ""
    return joined, len(joined) - 1, typed


class ColonBash(BashComplete):
    """click's bash completion with the words bash broke at ':' joined again (see the module's docstring)."""

    name = "bash"
    typed = ""

    def get_completion_args(self) -> tuple[list[str], str]:
        words, current, self.typed = joined_at_colons(split_arg_string(os.environ["COMP_WORDS"]), int(os.environ["COMP_CWORD"]))
        return words[1:current], words[current] if current < len(words) else ""

    def format_completion(self, item: CompletionItem) -> str:
        value = item.value[len(self.typed) :] if self.typed and item.value.startswith(self.typed) else item.value
        return f"{item.type},{value}"


add_completion_class(ColonBash)
