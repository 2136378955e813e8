"""The suite's own plumbing: the shared builds are made once and the two workers share the
work (tests/conftest.py)."""

import os

import pytest

from tests.conftest import BUILD_FIXTURES, LONG_GROUPS, _group, _group_costs


def test_build_tests_are_grouped_or_dealt_out_in_order(request):
    """A test that reads a later shared build (`second_night`, `rerun`) is in its xdist
    group, or marked `slow`; the readers of the bundled build are grouped by module (the
    modules go to both workers once it is built). (With pytest 9.2 and xdist 3.8 the groups
    silently stopped working.) Dealt out in this order: one reader of the bundled build
    (its worker builds it), the fast tests, the other readers (each module's together, the
    costliest modules first: those that drive the browser), the long ones."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        pytest.skip("not under xdist (-n 0)")
    items = request.session.items
    builds = [item for item in items if BUILD_FIXTURES & set(getattr(item, "fixturenames", ()))]
    if not builds:
        pytest.skip("no test of this session reads a shared build")
    for item in builds:
        names = set(getattr(item, "fixturenames", ()))
        slow = item.get_closest_marker("slow") is not None
        grouped = item.nodeid.endswith(tuple(f"@{g}" for g in LONG_GROUPS))
        assert grouped == (not slow and bool(names & set(LONG_GROUPS))), item.nodeid
        by_module = item.nodeid.endswith(f"@built-{item.module.__name__.rsplit('.', 1)[-1]}")
        assert by_module == (not slow and not grouped and "built" in names), item.nodeid
    ranks = [_rank(item) for item in items]
    if ranks and ranks[0] == 2:
        ranks[0] = 0  # the one reader of the bundled build that builds it, first
    assert ranks == sorted(ranks)
    costs = _group_costs(items)
    readers = [_group(item) for item, rank in zip(items, ranks, strict=True) if rank == 2]
    order = list(dict.fromkeys(readers))
    assert readers == sorted(readers, key=order.index)  # each module's readers together
    assert [costs[g] for g in order] == sorted((costs[g] for g in order), reverse=True)


def _rank(item) -> int:
    if item.get_closest_marker("slow") is not None or item.nodeid.endswith(
        tuple(f"@{g}" for g in LONG_GROUPS)
    ):
        return 3
    if "built" in getattr(item, "fixturenames", ()):
        return 2
    return 1
