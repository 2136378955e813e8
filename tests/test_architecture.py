"""The project's size limits and import rules (docs/architecture.md), checked on every run.

`lint-imports` (the contracts in pyproject.toml) checks the floors; these tests hold what it
cannot express: no function over 100 lines or 25 branches, no module over 800 lines, no
import cycle among our modules, and Dagster only in pipeline/.
"""

import ast
from pathlib import Path

import grimp
import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("sources", "warehouse", "model", "reports", "pipeline")
BELOW_PIPELINE = ("sources", "warehouse", "model", "reports")
DAGSTER = ("dagster", "dagster_duckdb", "dagster_postgres")

MAX_FUNCTION_LINES = 100
MAX_BRANCHES = 25
MAX_MODULE_LINES = 800

_BRANCHES = (
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.ExceptHandler,
    ast.IfExp,
    ast.match_case,
)


def branches(function: ast.AST) -> int:
    """Branches of a function, nested functions included.

    if/elif, for, while, except, ternary and match case count one each, a boolean operator
    one per extra operand, a comprehension one per `for` and one per `if`.
    """
    count = 0
    for node in ast.walk(function):
        if isinstance(node, _BRANCHES):
            count += 1
        elif isinstance(node, ast.BoolOp):
            count += len(node.values) - 1
        elif isinstance(node, ast.comprehension):
            count += 1 + len(node.ifs)
    return count


def python_files() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (REPO / package).rglob("*.py"))


def oversized(path: Path) -> list[str]:
    """What in one module is over the limits, one line each."""
    source = path.read_text(encoding="utf-8")
    name = path.relative_to(REPO)
    found = []
    lines = source.count("\n")
    if lines > MAX_MODULE_LINES:
        found.append(f"module {name}: {lines} lines (max {MAX_MODULE_LINES})")
    for node in ast.walk(ast.parse(source, filename=str(path))):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        start = min([node.lineno] + [d.lineno for d in node.decorator_list])
        length, count = node.end_lineno - start + 1, branches(node)
        over = []
        if length > MAX_FUNCTION_LINES:
            over.append(f"{length} lines (max {MAX_FUNCTION_LINES})")
        if count > MAX_BRANCHES:
            over.append(f"{count} branches (max {MAX_BRANCHES})")
        if over:
            found.append(f"function {name}:{node.lineno} {node.name}: {', '.join(over)}")
    return found


def test_no_function_or_module_over_the_size_limits():
    offenders = [line for path in python_files() for line in oversized(path)]
    if offenders:
        pytest.fail(
            f"{len(offenders)} over the size limits (split them into named steps, "
            "docs/architecture.md):\n  " + "\n  ".join(offenders),
            pytrace=False,
        )


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    """Our modules and every import they make, function-local imports included."""
    return grimp.build_graph(*PACKAGES, include_external_packages=True, cache_dir=None)


def import_cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, without recursion)."""
    modules = sorted(m for m in graph.modules if m.split(".")[0] in PACKAGES)
    ours = set(modules)
    edges = {m: sorted(graph.find_modules_directly_imported_by(m) & ours) for m in modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles = []
    for root in modules:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            module, i = work.pop()
            if i == 0:
                index[module] = low[module] = len(index)
                stack.append(module)
                on_stack.add(module)
            if i < len(edges[module]):
                work.append((module, i + 1))
                nxt = edges[module][i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[module] = min(low[module], index[nxt])
                continue
            if work:  # back in the caller: carry the lowest index up
                caller = work[-1][0]
                low[caller] = min(low[caller], low[module])
            if low[module] == index[module]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == module:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
    return sorted(cycles)


def describe_cycle(graph: grimp.ImportGraph, component: list[str]) -> str:
    """The modules of one cycle and the imports that tie them, with line numbers."""
    members = set(component)
    imports = []
    for importer in component:
        for imported in sorted(graph.find_modules_directly_imported_by(importer) & members):
            details = graph.get_import_details(importer=importer, imported=imported)
            lines = ", ".join(f"l.{d['line_number']}" for d in details)
            imports.append(f"      {importer} -> {imported} ({lines})")
    return f"{len(component)} modules: {', '.join(component)}\n" + "\n".join(imports)


def test_no_import_cycles(graph):
    cycles = import_cycles(graph)
    if cycles:
        pytest.fail(
            f"{len(cycles)} import cycles (function-local imports count):\n  "
            + "\n  ".join(describe_cycle(graph, c) for c in cycles),
            pytrace=False,
        )


def test_only_pipeline_imports_dagster(graph):
    offenders = []
    for package in BELOW_PIPELINE:
        for external in DAGSTER:
            if external not in graph.modules:
                continue
            for chain in sorted(graph.find_shortest_chains(package, external, as_packages=True)):
                offenders.append(" -> ".join(chain))
    if offenders:
        pytest.fail(
            "Dagster belongs in pipeline/ only; these modules below it reach it:\n  "
            + "\n  ".join(offenders),
            pytrace=False,
        )
