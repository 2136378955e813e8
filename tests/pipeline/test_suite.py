"""The suite's own plumbing: the shared builds are made once and the two workers share the
work (tests/conftest.py)."""

import os

import pytest

from tests.conftest import BUILD_FIXTURES, LONG_GROUPS


def test_build_tests_are_grouped_or_dealt_out_last(request):
    """A test that reads a shared build is in its xdist group (`builds`, `second_night`,
    `rerun`), or marked `slow` and dealt out after the fast tests. (With pytest 9.2 and
    xdist 3.8 the groups silently stopped working and every worker built the bundled
    snapshot.)"""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        pytest.skip("not under xdist (-n 0)")
    items = request.session.items
    builds = [item for item in items if BUILD_FIXTURES & set(getattr(item, "fixturenames", ()))]
    assert builds
    for item in builds:
        slow = item.get_closest_marker("slow") is not None
        grouped = item.nodeid.endswith(("@builds", *(f"@{g}" for g in LONG_GROUPS)))
        assert slow != grouped, item.nodeid
    # Dealt out in this order: the bundled build's readers, the fast tests, the long ones.
    ranks = [0 if item.nodeid.endswith("@builds") else 2 if _long(item) else 1 for item in items]
    assert ranks == sorted(ranks)


def _long(item) -> bool:
    return item.get_closest_marker("slow") is not None or item.nodeid.endswith(
        tuple(f"@{g}" for g in LONG_GROUPS)
    )
