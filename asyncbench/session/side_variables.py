"""A side's environment variables (`ab --base-env/--head-env`): parsed strictly (read once, by the CLI), shown with credentials masked.

A gate's output travels further than its secrets may (a CI log, an uploaded
artifact, a pull-request comment anyone can read), so every output shows a
variable through `shown_value`; the side's process still gets the real value.
"""

from __future__ import annotations

import re
from typing import Callable, Mapping

from asyncbench.errors import InputError
from asyncbench.history import masking
from asyncbench.results import fields
from asyncbench.spec import key_value

# Parts of a variable's name that say its value is a credential. A gate's output travels further than its secrets
# may (a CI log, an uploaded artifact, a pull-request comment anyone can read), so such values are shown as MASK
# everywhere (terminal, JSON, markdown); the side's process still gets the real value. Matched anywhere in the
# name, any case: API_TOKEN, AWS_SECRET_ACCESS_KEY, HF_AUTH, session_cookie. A harmless name caught (MONKEY_...)
# costs only its shown value.
SECRET_NAME_PARTS = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "KEY", "CREDENTIAL", "AUTH", "COOKIE", "SESSION")
# Words of a name (split at '_') that mean a credential but are too short to look for inside other words: PAT
# would mask PATH, PASS would mask PASSTHROUGH, PWD is also the shell's working directory (masked all the same).
SECRET_NAME_WORDS = frozenset({"PASS", "PAT", "PWD", "PW", "PIN", "DSN", "PRIVATE", "CERT", "SIGNATURE", "SALT", "OTP"})
# A value that looks like a credential whatever its name: an opaque token (GitHub's ghp_..., a JWT's parts, an API
# key) is a long run of letters and digits together; a path, a number or a word list is not. Below 20 characters
# too many ordinary values (versions, hashes of a short form) would be hidden for nothing.
TOKEN_LIKE = re.compile(r"(?=[A-Za-z0-9_\-.+=]*\d)(?=[A-Za-z0-9_\-.+=]*[A-Za-z])[A-Za-z0-9_\-.+=]{20,}")
# A secret shorter than this is not searched for in error texts: masking every "1" or "on" would garble them.
SCRUB_MIN_CHARS = 4
MASK = masking.MASK
# What a --base-env / --head-env name may be: a POSIX shell's variable name. Anything else (a space, '-', an escape
# sequence, a newline that smuggles a second KEY=VALUE into a log) is a typo or an attack, and a name is shown in
# every output.
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def parse_env(items: tuple[str, ...], option: str) -> dict[str, str]:
    """KEY=VALUE pairs; InputError for one without '=' or with an empty key, a key that is not a variable's name
    (ENV_NAME), or a value holding a control character (a newline would forge lines of the terminal, the JSON's
    readers and the pull-request comment; an escape would rewrite the terminal). A value is never repeated in the
    error: it may be a secret."""
    found: dict[str, str] = {}
    for item in items:
        key, given = key_value.split(item, option, "OMP_NUM_THREADS=1")
        value = given or ""  # never None: without `bare`, a KEY without =VALUE is refused
        if not ENV_NAME.fullmatch(key):
            raise InputError(
                f"{option} {key[:80]!r}: not a variable's name (letters, digits and _, not starting with a digit), "
                f"e.g. {option} OMP_NUM_THREADS=1"
            )
        control = fields.CONTROL.search(value)
        if control:
            raise InputError(
                f"{option} {key}: its value holds a control character ({control.group()!r} at position {control.start()}); "
                "a variable's value here is one line of printable text"
            )
        if key in found:  # which one was meant? the last would win silently, and the gate compare something else
            raise InputError(f"{option} {key}: given twice; give each variable once")
        found[key] = value
    return found


def is_secret(name: str) -> bool:
    """Whether a variable's name says its value is a credential (SECRET_NAME_PARTS anywhere in it, or one of
    SECRET_NAME_WORDS as a word of it)."""
    upper = name.upper()
    return any(part in upper for part in SECRET_NAME_PARTS) or not SECRET_NAME_WORDS.isdisjoint(upper.split("_"))


def shown_value(name: str, value: str) -> str:
    """A variable's value as every output shows it: masked where the name says it is a credential or the value
    looks like one (TOKEN_LIKE); a URL keeps its shape with its password masked (`postgresql://u:***@h/db`)."""
    if is_secret(name) or TOKEN_LIKE.fullmatch(value):
        return MASK
    return masking.mask(value)


def shown(variables: Mapping[str, str]) -> dict[str, str]:
    """The variables as every output shows them (shown_value)."""
    return {name: shown_value(name, value) for name, value in variables.items()}


def scrubber(*sides: Mapping[str, str]) -> Callable[[str | None], str | None]:
    """A text with every value the outputs mask replaced by MASK: a side's error may quote its own variables (a
    workload that raises `ValueError(f"bad token {token}")`), and the reason goes to the terminal, the JSON, the
    pull-request comment and, recorded, the history."""
    masked = [value for variables in sides for name, value in variables.items() if shown_value(name, value) != value]
    hidden = sorted({value for value in masked if len(value) >= SCRUB_MIN_CHARS}, key=len, reverse=True)

    def scrub(text: str | None) -> str | None:
        if text is None:
            return None
        for value in hidden:
            text = text.replace(value, MASK)
        return text

    return scrub
