"""Shared browser fixtures of the site tests: one Chromium and one local HTTP server.

Module-scoped on purpose: Playwright's sync API allows one instance per process at a time,
and pytest tears a module's fixtures down before the next module's tests run.
"""

import functools
import http.server
import threading

import pytest

from tests.reports.test_site_pages import CHROMIUM, CHROMIUM_ARGS


@pytest.fixture(scope="module")
def browser():
    """Headless Debian Chromium (skipped where it is not installed)."""
    if CHROMIUM is None:
        pytest.skip("Debian chromium is not installed (.ci/run installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chrome = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chrome
        chrome.close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # the test's output, not the server's
        pass


@pytest.fixture(scope="module")
def server(built):
    """The built site folder over HTTP on 127.0.0.1 (a random free port); its root URL.

    A page opened from file:// cannot fetch (the search index, the chart specs).
    """
    handler = functools.partial(_Quiet, directory=str(built.site.resolve()))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_port}"
    httpd.shutdown()
    httpd.server_close()
    thread.join()
