"""A store's password is masked in every form libpq reads one (history/masking.py): in what `shown` says, in the
errors, in the "recorded in" line and in the page's header."""

from __future__ import annotations

import os
from urllib.parse import quote

import pytest

from asyncbench.errors import InputError
from asyncbench.history import masking, target
from asyncbench.report import html
from tests.support.cli import invoke

SECRET = "s3cr@t w/rd"
WRONG = "n0t-the-passw0rd"
POSTGRES = os.environ.get("ASYNCBENCH_TEST_POSTGRES", "")

# every form libpq reads a password in, as --history or ASYNCBENCH_HISTORY may give it
FORMS = {
    "user information": f"postgresql://ci:{quote(SECRET, safe='')}@db.example:5432/bench",
    "user information, postgres://": f"postgres://ci:{quote(SECRET, safe='')}@db.example/bench",
    "?password=": f"postgresql://ci@db.example/bench?password={quote(SECRET, safe='')}",
    "&password=": f"postgresql://ci@db.example/bench?sslmode=disable&password={quote(SECRET, safe='')}",
    "a percent-encoded keyword": f"postgresql://ci@db.example/bench?pass%77ord={quote(SECRET, safe='')}",
    "key=value, quoted": f"host=db.example dbname=bench user=ci password='{SECRET}'",
    "key=value, spaced, no user": "host=db.example password = s3cr@t",
}


@pytest.mark.parametrize("form", FORMS, ids=list(FORMS))
def test_shown_never_holds_the_password(form):
    found = target.resolve(FORMS[form])
    assert found.kind == "postgresql"
    for secret in (SECRET, quote(SECRET, safe=""), quote(SECRET), "s3cr@t", "s3cr%40t"):
        assert secret not in found.shown
    assert masking.MASK in found.shown
    assert "db.example" in found.shown


@pytest.mark.parametrize("form", FORMS, ids=list(FORMS))
def test_a_drivers_error_quoting_the_address_or_the_password_is_scrubbed(form):
    found = target.resolve(FORMS[form])
    said = found.scrub(f"cannot connect to {FORMS[form]} nor to {found.url} with {found.passwords[0]!r}")
    assert "s3cr" not in said


@pytest.mark.parametrize(
    "text",
    [
        "postgresql://ci:s3cret@db/bench",
        "postgresql+psycopg://ci:s3cret@db/bench",
        "postgres://ci:s3c%40ret@db/bench",
        "postgresql://db/bench?password=s3cret",
        "postgresql://db/bench?sslmode=require&password=s3cret&application_name=x",
        "postgresql://db/bench?pass%77ord=s3cret",
        "postgresql://db/bench?PASSWORD=s3cret",
        "host=db password=s3cret dbname=bench",
        "host=db password = s3cret",
        "postgresql://ci@db/bench?sslmode=require&sslpassword=s3cret",  # the SSL key's password
        "host=db sslpassword=s3cret dbname=bench",
        "host=db password='s3 \\' cret' dbname=bench",
        "error: FATAL in 'host=db password=s3cret': no route",
    ],
)
def test_every_form_is_masked_in_any_text(text):
    masked = masking.mask(text)
    assert "s3" not in masked
    assert masking.MASK in masked
    assert "db" in masked


def test_masking_leaves_everything_else_as_it_is():
    for text in ("postgresql://ci@db/bench?sslmode=require", "password authentication failed for user ci", "host=db dbname=x"):
        assert masking.mask(text) == text


def test_the_page_header_shows_the_store_masked():
    for url in FORMS.values():
        assert "s3cr" not in html.render([], None, [], target.resolve(url).shown)


def test_a_url_that_cannot_be_read_is_refused_without_its_password():
    with pytest.raises(InputError) as refused:
        target.resolve("postgresql://ci:s3cret@db:notaport/bench?password=s3cret")
    assert "s3cret" not in str(refused.value)


@pytest.mark.postgres
@pytest.mark.parametrize(
    "form",
    [
        "{scheme}://{user}:{wrong}@{host}:{port}/{db}",
        "{scheme}://{user}@{host}:{port}/{db}?password={wrong}",
        "{scheme}://{user}@{host}:{port}/{db}?sslmode=disable&password={wrong}",
        "{scheme}://{user}@{host}:{port}/{db}?pass%77ord={wrong}",
        "host={host} port={port} user={user} dbname={db} password={wrong}",
        "host={host} port={port} user={user} dbname={db} password='{wrong}'",
    ],
)
def test_a_real_servers_refusal_never_shows_the_password(form, tmp_path, monkeypatch):
    from sqlalchemy.engine import make_url

    real = make_url(POSTGRES)
    url = form.format(scheme="postgresql", user=real.username, host=real.host, port=real.port or 5432, db=real.database, wrong=WRONG)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ASYNCBENCH_HISTORY", raising=False)
    result = invoke("history", "--history", url)
    assert result.exit_code == 2, result.output
    assert "password authentication failed" in result.stderr
    assert WRONG not in result.output
    assert list(tmp_path.iterdir()) == []  # not taken for a SQLite file's name


@pytest.mark.postgres
def test_a_key_value_connection_string_reaches_the_server(monkeypatch, tmp_path):
    from sqlalchemy.engine import make_url

    real = make_url(POSTGRES)
    conninfo = f"host={real.host} port={real.port or 5432} user={real.username} dbname={real.database} password='{real.password}'"
    found = target.resolve(conninfo)
    assert found.kind == "postgresql"
    monkeypatch.chdir(tmp_path)
    result = invoke("report", "-o", str(tmp_path / "r.html"), "--history", conninfo)
    assert "could not connect" not in result.output
    assert "password authentication failed" not in result.output
