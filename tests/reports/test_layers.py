"""The site only reads tables: nothing under reports/ imports the pipeline (Dagster) floor.

Function-local imports count: an import inside a function is still an arrow upward.
"""

import ast

import pytest

from tests.paths import REPO

MODULES = sorted((REPO / "reports").rglob("*.py"))


def imported(path) -> set[str]:
    """Every module `path` imports, at any depth of its code."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(REPO)))
def test_reports_import_nothing_from_the_pipeline(path):
    upward = {n for n in imported(path) if n.split(".")[0] in {"pipeline", "dagster"}}
    assert not upward, f"{path.name} imports {sorted(upward)}"


def test_the_verdict_logic_lives_in_the_model():
    assert not (REPO / "reports" / "verdict.py").exists()
    assert any("model.verdicts" in imported(path) for path in MODULES)
