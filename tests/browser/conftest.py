"""A real Chromium for the viewer's tests, driven by Playwright (Python).

Playwright's own browser download is not reachable here, so the tests use an installed Chromium
(``.ci/run`` installs Debian's with apt-get): ``$LAYERED_MEMORY_TEST_CHROMIUM``, else the first of
``chromium``, ``chromium-browser``, ``google-chrome`` on PATH. Without one (or without the playwright
package) the tests are skipped with the reason.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

CHROMIUM_ENV = "LAYERED_MEMORY_TEST_CHROMIUM"
CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium() -> str | None:
    if os.environ.get(CHROMIUM_ENV):
        return os.environ[CHROMIUM_ENV]
    return next((path for path in map(shutil.which, CANDIDATES) if path), None)


@pytest.fixture(scope="module")  # not longer: Playwright's sync API keeps an event loop running in this thread while it is open
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api", reason='playwright is in the dev extra: pip install -e ".[dev]"')
    executable = find_chromium()
    if executable is None:
        pytest.skip(f"no Chromium found (looked for {', '.join(CANDIDATES)} and ${CHROMIUM_ENV}): apt-get install chromium")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh page (its own session storage) that records console errors and uncaught exceptions; a test
    fails if the page logged any (``page.errors``)."""
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    pg = context.new_page()
    errors: list[str] = []
    pg.on("console", lambda m: errors.append(f"console.{m.type}: {m.text}") if m.type == "error" else None)
    pg.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
    pg.on("dialog", lambda d: d.accept())  # the viewer confirms deletes
    pg.errors = errors
    yield pg
    context.close()
    assert not errors, errors
