"""Fixtures the history page's browser tests share."""

from __future__ import annotations

from typing import Any, Iterator

import pytest

from tests.support.browser import CHROMIUM, FLAGS


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """A headless Chromium, launched once a module (Playwright imported only by the tests that ask for it)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield launched
        launched.close()
