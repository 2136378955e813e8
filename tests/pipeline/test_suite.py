"""The suite's own plumbing: the tests that need a whole build share one xdist worker."""

import os

import pytest

from tests.conftest import BUILD_FIXTURES


def test_build_tests_are_one_xdist_group(request):
    """Otherwise every worker builds the bundled snapshot (pytest 9.2 with xdist 3.8 did)."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        pytest.skip("not under xdist (-n 0)")
    builds = [
        item
        for item in request.session.items
        if BUILD_FIXTURES & set(getattr(item, "fixturenames", ()))
    ]
    assert builds
    assert all(item.nodeid.endswith("@builds") for item in builds)
