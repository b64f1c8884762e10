"""The one reader of the command line's KEY=VALUE options: `--set`, `--sbatch`, `ab --base-env/--head-env`.

Each option then reads its value its own way (a YAML flow list for --set, a
plain value or an sbatch flag for --sbatch, a variable's value for --env);
what they share is said once here: the key is what comes before the first
'=', spaces around it dropped (only spaces: a control character is left in
for the option's own check to refuse by name), and a missing '=' or an
empty key is one line, exit 2, naming the option and an example.
"""

from __future__ import annotations

from asyncbench.errors import InputError


def split(text: str, option: str, example: str, *, expected: str = "KEY=VALUE", bare: bool = False) -> tuple[str, str | None]:
    """'KEY=VALUE' -> (KEY, VALUE); with `bare`, a KEY alone -> (KEY, None) (an sbatch flag: --sbatch requeue).
    InputError otherwise. An empty name's error does not repeat what was given: a variable's value may be a
    secret."""
    key, sep, value = text.partition("=")
    key = key.strip(" ")
    if key and (sep or bare):
        return key, value if sep else None
    given = "with an empty name" if sep else repr(text)
    raise InputError(f"{option} {given}: expected {expected}, e.g. {option} {example}")
