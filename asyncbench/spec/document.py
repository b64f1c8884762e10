"""A config's YAML as plain values that remember their lines, and the mistakes found in it, said together.

YAML is composed with PyYAML's safe loader into nodes (so every key keeps its
line) and converted by hand, which lets every error name the file, the line
and the key path. Tags that would construct objects are refused by the safe
constructor; nothing is ever evaluated.

A `Document` keeps each mistake as it is found (`add`, `attempt`) so that
the checks go on with what can still be read, and `raise_errors` says them
all at once, in line order: one `ConfigError`, or `ConfigErrors` holding
several. Mistakes of the YAML itself (a duplicate key, a refused tag) are
said together before any value is checked, so a value the converter dropped
is never reported again as missing; YAML that does not parse is one mistake,
as nothing after it can be read.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any, Callable, Sequence, TypeVar

import yaml

from asyncbench.errors import InputError, InputErrors

# A real config has a few hundred values; YAML aliases can make a short file
# expand to billions ("billion laughs"): stop converting well before that.
MAX_CONFIG_VALUES = 100_000
# A config nests a few levels (experiments, an experiment, params, a shape); deeper is no config, and PyYAML's
# composing and our converting recurse once per level.
MAX_DEPTH = 32
INT_TAG = "tag:yaml.org,2002:int"
# Python (3.11 on) refuses to read an integer of more digits than this, with a ValueError inside PyYAML; a shorter
# one is read, and held to 64 bits where a run uses it (spec.schema), said with the config's other mistakes.
READABLE_DIGITS = getattr(sys, "get_int_max_str_digits", lambda: 0)()
# Collections may carry only the standard tags; anything else (!!python/...) is refused.
PLAIN_TAGS = ("tag:yaml.org,2002:map", "tag:yaml.org,2002:seq")
# A YAML 1.1 merge key (`<<: *base`): the safe constructor merges it, but a config is converted node by node (each
# value keeps its line), and a merged value would have the line of its anchor, not of the experiment it is read in
MERGE_TAG = "tag:yaml.org,2002:merge"


T = TypeVar("T")


class ConfigLoader(yaml.SafeLoader):
    """PyYAML's safe loader, reading a float as YAML 1.2 does: `2e-05` and `1e3` are numbers. PyYAML follows YAML 1.1,
    whose floats need a dot (`2.0e-05`), so `host_s: 2e-05` in a config, or `--set host_s=2e-05`, was the string
    '2e-05' and refused as "expected a number" (a new user's plain scientific notation)."""


# YAML 1.2's float (the core schema), added before PyYAML's own so `1e3` reads as 1000.0, not as a string
ConfigLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:\.[0-9]+|[0-9][0-9_]*(?:\.[0-9_]*)?)[eE][-+]?[0-9]+$"),
    list("-+0123456789."),
)


class ConfigError(InputError):
    """A config that cannot be used; says file, line and key path. `line` orders a file's mistakes."""

    def __init__(self, message: str, *, location: str | None = None, path: str | None = None, line: int | None = None):
        self.line = line
        super().__init__(message, location=location, path=path)


class ConfigErrors(InputErrors, ConfigError):
    """Several mistakes of one config file, in line order; each is a ConfigError of its own."""


def format_path(path: Sequence[Any]) -> str:
    """("experiments", 0, "params") -> "experiments[0].params"; an odd key is quoted: ['a b']."""
    text = ""
    for part in path:
        if isinstance(part, int) or not re.fullmatch(r"[\w-]+", str(part)):
            text += f"[{part!r}]" if not isinstance(part, int) else f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


class Document:
    """A composed YAML document turned into plain values, remembering each path's line."""

    def __init__(self, text: str, source: str):
        self.source = source
        # user workloads' file paths are relative to the config's folder (to the working directory for text)
        self.base_dir = Path(source).resolve().parent if Path(source).is_file() else Path.cwd()
        self.lines: dict[tuple, int] = {}
        #: the mistakes found so far; `raise_errors` says them all, in line order
        self.errors: list[ConfigError] = []
        #: the paths of keys an unknown key was a misspelling of: that such a key is missing is no second mistake
        self.misspelt: set[tuple] = set()
        try:
            node = yaml.compose(text, Loader=ConfigLoader)
        except RecursionError:  # PyYAML composes nested collections by recursion
            raise ConfigError("nested too deeply to be a config", location=source) from None
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            line = f":{mark.line + 1}" if mark else ""
            raise ConfigError(f"not valid YAML: {exc.problem or exc}", location=f"{source}{line}") from None
        except yaml.YAMLError as exc:  # e.g. a control character: PyYAML's message spans lines
            raise ConfigError(f"not valid YAML: {' '.join(str(exc).split())}", location=source) from None
        if node is None:
            raise ConfigError("the config is empty", location=source)
        self._constructor = ConfigLoader("")
        self._values = 0
        self.value = self._convert(node, ())
        self.raise_errors()  # a value the converter dropped must not be checked as if it were missing

    def _convert(self, node: yaml.Node, path: tuple) -> Any:
        self.lines[path] = node.start_mark.line + 1
        self._values += 1
        if self._values > MAX_CONFIG_VALUES:
            raise self.error(f"the config expands to more than {MAX_CONFIG_VALUES} values (YAML aliases?); refusing it", path)
        if not isinstance(node, yaml.ScalarNode) and node.tag not in PLAIN_TAGS:
            self.add(f"unsupported YAML value: tag {node.tag!r} is not allowed in a config", path)
            return None
        if len(path) > MAX_DEPTH:
            raise self.error(f"nested deeper than {MAX_DEPTH} levels: no config value is", path)
        if isinstance(node, yaml.MappingNode):
            result: dict[str, Any] = {}
            for key_node, value_node in node.value:
                if key_node.tag == MERGE_TAG:
                    self.add(
                        "a YAML merge key (`<<`) is not supported in a config: write the keys out", path, line=key_node.start_mark.line + 1
                    )
                    continue
                said = len(self.errors)
                key = self.attempt(None, self._scalar, key_node, path)
                if len(self.errors) > said:
                    continue  # the key itself was refused (said): its value has no path to be read under
                if not isinstance(key, str):
                    self.add(f"keys must be strings, got {key!r}", path, line=key_node.start_mark.line + 1)
                elif key in result:
                    self.add(f"duplicate key {key!r}", path + (key,), line=key_node.start_mark.line + 1)
                else:
                    result[key] = self._convert(value_node, path + (key,))
            return result
        if isinstance(node, yaml.SequenceNode):
            return [self._convert(item, path + (index,)) for index, item in enumerate(node.value)]
        return self.attempt(None, self._scalar, node, path)

    def _scalar(self, node: yaml.Node, path: tuple) -> Any:
        if not isinstance(node, yaml.ScalarNode):
            raise self.error("keys must be plain strings", path, line=node.start_mark.line + 1)
        digits = len(node.value.lstrip("+-").replace("_", ""))
        if node.tag == INT_TAG and READABLE_DIGITS and digits > READABLE_DIGITS:
            raise self.error(f"an integer of {digits} digits (Python reads at most {READABLE_DIGITS})", path)
        try:
            return self._constructor.construct_object(node, deep=True)
        except yaml.YAMLError as exc:
            problem = getattr(exc, "problem", None) or str(exc)
            raise self.error(f"unsupported YAML value: {problem}", path, line=node.start_mark.line + 1) from None

    def line(self, path: tuple) -> int | None:
        while path not in self.lines and path:
            path = path[:-1]
        return self.lines.get(path)

    def error(self, message: str, path: tuple, line: int | None = None) -> ConfigError:
        line = line or self.line(path)
        location = f"{self.source}:{line}" if line else self.source
        return ConfigError(message, location=location, path=format_path(path) or None, line=line)

    def add(self, message: str, path: tuple, line: int | None = None) -> None:
        """Keep a mistake and go on checking: it is said with the others (`raise_errors`)."""
        self.errors.append(self.error(message, path, line))

    def attempt(self, fallback: T, check: Callable[..., T], *args: Any) -> T:
        """`check(*args)`, or `fallback` where it raised ConfigError (kept): what it checked cannot be read
        further, the rest of the file still is."""
        try:
            return check(*args)
        except ConfigError as exc:
            self.errors.append(exc)
            return fallback

    def raise_errors(self) -> None:
        """Every mistake kept so far, in line order (one: itself; several: ConfigErrors); nothing if none."""
        if self.errors:
            ordered = sorted(self.errors, key=lambda error: error.line or 0)  # stable: one line's mistakes as found
            raise ConfigErrors.of(ordered)
