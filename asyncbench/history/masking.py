"""A PostgreSQL password masked in every form libpq reads one, wherever a store's address is shown.

libpq takes a password in four places, and each is masked as `***`
(target.MASK) in any text, whatever else the text holds (an error from the
driver may quote the address):

- a URI's user information: `postgresql://user:PASSWORD@host/db` (also
  `postgres://`, and a driver suffix such as `postgresql+psycopg://`);
- a URI's query parameter: `?password=PASSWORD` or `&password=PASSWORD`,
  its keyword also when percent-encoded (`?pass%77ord=`, which libpq
  decodes too);
- a key=value connection string: `password=PASSWORD`, `password = PASSWORD`
  or `password='PASS WORD'` (quoted, with backslash escapes);
- a password already known (Target's), as it is and percent-encoded,
  wherever else it appears.

`sslpassword` (the one that unlocks the client's SSL key) is masked in the
query and key=value forms as `password` is.

Keywords are matched case-insensitively, more than libpq accepts, so that
a near miss is masked too. What is not covered: a password in PGPASSWORD or
~/.pgpass, which asyncbench never reads nor shows.
"""

from __future__ import annotations

import re
from typing import Iterable
from urllib.parse import quote, quote_plus, unquote

#: what stands for a password wherever an address is shown
MASK = "***"
#: libpq's parameters that hold a secret: the server's password, and the one that unlocks the client's SSL key
PASSWORD_KEYS = ("password", "sslpassword")
# scheme://user:PASSWORD@ — libpq ends the user information at the first '@' or '/', and the user at the first ':'.
# Any scheme, not only postgresql's: a password in a URL is one whatever the URL is for (`ab` shows its sides'
# variables through this too: DATABASE_URL, https://user:token@host/repo.git).
_USERINFO = re.compile(r"(?P<lead>[a-z][a-z0-9+.-]*://[^:@/\s]*:)(?P<secret>[^@/\s]*)(?=@)", re.IGNORECASE)
# ?KEY=VALUE or &KEY=VALUE in a URI's query; the key may be percent-encoded.
_QUERY = re.compile(r"(?P<lead>[?&](?P<key>[^=&\s#]+)=)(?P<secret>[^&\s#]*)")
# password=VALUE in a key=value connection string (not a URI's query parameter, masked above): quoted with
# backslash escapes, or up to the next white space.
_KEYWORD = re.compile(r"(?P<lead>(?<![?&\w%])(?:ssl)?password\s*=\s*)(?P<secret>'(?:[^'\\]|\\.)*'?|\S+)", re.IGNORECASE)


def mask(text: str, known: Iterable[str] = ()) -> str:
    """`text` with every password in it masked: the forms above, and each of `known` as it is and percent-encoded."""
    for secret in sorted({s for s in known if s}, key=len, reverse=True):
        # as it is, fully percent-encoded, as a URL's path or query encodes it, and as SQLAlchemy writes a URL's
        for form in {secret, quote(secret, safe=""), quote(secret), quote_plus(secret, safe=""), quote(secret, safe=" +")}:
            text = text.replace(form, MASK)
    text = _USERINFO.sub(lambda m: m["lead"] + (MASK if m["secret"] else ""), text)
    text = _QUERY.sub(lambda m: m["lead"] + MASK if unquote(m["key"]).strip().lower() in PASSWORD_KEYS else m[0], text)
    return _KEYWORD.sub(lambda m: m["lead"] + MASK if m["secret"] != MASK else m[0], text)
