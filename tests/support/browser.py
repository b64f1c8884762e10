"""A page opened in a real headless Chromium (Debian's package, driven by Playwright), as the browser tests see it:
what it logged as errors, the requests it made, the dialogs it opened, and the Content Security Policy violations it
reported to itself. The `browser` fixture that launches Chromium is tests/history/conftest.py's."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

#: the Chromium the tests drive (tests/conftest.py skips the `browser` tests where there is none)
CHROMIUM = os.environ.get("ASYNCBENCH_CHROMIUM", "/usr/bin/chromium")
# As the machine's notes say: without the background-networking flags Chromium's own connections are refused
# here, many at a time, and it looks up Google's hosts at every start.
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

# Every Content Security Policy violation, as the page reports it to itself (the console says it too).
VIOLATIONS = """window.__violations = [];
document.addEventListener("securitypolicyviolation", (e) => window.__violations.push(e.violatedDirective + " " + e.blockedURI));"""


def opened_page(browser: Any, page_file: Path) -> tuple[Any, dict[str, list[str]]]:
    """`page_file` opened in a new page of `browser`, once every chart is drawn; the page and what it was seen to do
    (`errors`, `requests`, `dialogs`: a dialog is dismissed)."""
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    page.add_init_script(VIOLATIONS)
    seen: dict[str, list[str]] = {"errors": [], "requests": [], "dialogs": []}
    page.on("console", lambda message: seen["errors"].append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: seen["errors"].append(str(error)))
    page.on("request", lambda request: seen["requests"].append(request.url))
    page.on("dialog", lambda dialog: (seen["dialogs"].append(dialog.message), dialog.dismiss()))
    page.goto(page_file.as_uri())
    charts = page.locator(".chart").count()
    page.wait_for_function(f"document.querySelectorAll('.chart .main-svg').length >= {charts}", timeout=30_000)
    return page, seen
