"""A side's environment variables (session/side_variables.py): which names and values are credentials and are
shown masked, what a --base-env/--head-env item may be, and an error text scrubbed of the values the outputs mask."""

from __future__ import annotations

import pytest

from asyncbench.errors import InputError
from asyncbench.session import side_variables


@pytest.mark.parametrize(
    "name, secret",
    [
        ("API_TOKEN", True),
        ("aws_secret_access_key", True),
        ("PGPASSWORD", True),
        ("HTPASSWD", True),
        ("GOOGLE_APPLICATION_CREDENTIALS", True),
        ("HF_AUTH", True),
        ("SESSION_COOKIE", True),
        ("DB_PASS", True),
        ("GITHUB_PAT", True),
        ("SENTRY_DSN", True),
        ("OMP_NUM_THREADS", False),
        ("WORK_REPEAT", False),
        ("PATH", False),
        ("LD_LIBRARY_PATH", False),
    ],
)
def test_which_names_look_secret(name, secret):
    assert side_variables.is_secret(name) is secret


@pytest.mark.parametrize(
    "name, value, shown",
    [
        ("DATABASE_URL", "postgresql://u:pw@h/d", "postgresql://u:***@h/d"),
        ("REPO", "https://me:tok3n@github.com/x.git", "https://me:***@github.com/x.git"),
        ("DB", "host=db user=ci password=pw", "host=db user=ci password=***"),
        ("X_CONFIG", "ghp_16C7e42F292c6912E7710c838347Ae178B4a", "***"),  # a token, whatever its name
        ("OMP_NUM_THREADS", "1", "1"),
        ("PYTHONPATH", "/opt/lib/python3.11/site-packages", "/opt/lib/python3.11/site-packages"),
        ("TORCH_VERSION", "2.13.0", "2.13.0"),
    ],
)
def test_a_value_that_holds_or_is_a_credential_is_masked_whatever_its_name(name, value, shown):
    assert side_variables.shown_value(name, value) == shown


@pytest.mark.parametrize(
    "item, said",
    [
        ("OMP\x1b[2J=1", r"--base-env 'OMP\x1b[2J': not a variable's name"),
        ("A\nB=1", r"--base-env 'A\nB': not a variable's name"),
        ("1THREADS=1", "--base-env '1THREADS': not a variable's name"),
        ("OMP-THREADS=1", "--base-env 'OMP-THREADS': not a variable's name"),
        ("API_TOKEN=hunter2\x01", r"--base-env API_TOKEN: its value holds a control character ('\x01' at position 7)"),
        ("API_TOKEN=hunter2\nLD_PRELOAD=/tmp/x.so", r"--base-env API_TOKEN: its value holds a control character ('\n' at position 7)"),
        ("WORK_MODE=a\tb", "--base-env WORK_MODE: its value holds a control character"),
    ],
)
def test_a_variable_with_a_bad_name_or_a_control_character_is_refused_without_its_value(item, said):
    with pytest.raises(InputError) as refused:
        side_variables.parse_env((item,), "--base-env")
    assert said in refused.value.message
    assert "hunter2" not in refused.value.message
    assert "\n" not in refused.value.message  # one line
    assert "\x1b" not in refused.value.message  # no escape sequence reaches the terminal


def test_a_variable_given_twice_is_refused_without_either_value():
    with pytest.raises(InputError, match="--base-env API_TOKEN: given twice") as refused:
        side_variables.parse_env(("API_TOKEN=hunter2", "API_TOKEN=hunter3"), "--base-env")
    assert "hunter" not in refused.value.message


def test_good_variables_are_taken_as_given():
    given = ("OMP_NUM_THREADS=1", "_private=a b=c", " SPACED =x", "EMPTY=", "path=/a:/b")
    assert side_variables.parse_env(given, "--head-env") == {
        "OMP_NUM_THREADS": "1",
        "_private": "a b=c",
        "SPACED": "x",
        "EMPTY": "",
        "path": "/a:/b",
    }


def test_an_error_is_scrubbed_of_every_masked_value_long_enough_to_look_for():
    scrub = side_variables.scrubber({"OMP_NUM_THREADS": "1", "PGPASSWORD": "pw"}, {"API_TOKEN": "abc123secret"})
    assert scrub("head: ValueError: token is abc123secret") == "head: ValueError: token is ***"
    assert scrub("1 thread, pw kept") == "1 thread, pw kept"  # a value shown as given, or too short to look for
    assert scrub(None) is None
