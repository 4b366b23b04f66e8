"""The stage order of kvgate's modules, read from the source: no import up the stages, no package cycle.

Every ``import`` counts, at module level or inside a function (an import hidden in a
function is still a dependency); imports under ``if TYPE_CHECKING:`` do not, since they
never run. A module's stage is its folder (``kvgate/<stage>/``);
docs/architecture.md draws the same order. Gate slices import no other slice.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterable, Iterator
from pathlib import Path

import kvgate

ROOT = Path(kvgate.__file__).parent

# lowest first: a module may import its own stage and the ones before it
ORDER = (
    "base",  # errors, files, YAML, redaction, the pure comparison of a measurement with a criterion
    "configuration",  # the inventory and every profile and reference file, loaded once (gateconfig)
    "judgement",  # the Check bound to its reference at plan time, the gate verdict rule
    "record",  # the run directory and its typed record, the gate order read from stored runs
    "transport",  # executors: local, SSH; fan-out
    "probes",  # facts, fio, agent, evidence, engines' lifecycle, load generator
    "orchestration",  # per-gate plans and measurement, the pytest session and plugin
    "report",  # HTML, PDF, JUnit, history, rendered from stored runs
    "cli",  # the command line and the commands that compose stages (rejudge)
)

STAGES = {"kvgate": "base", **{f"kvgate.{s}": s for s in ORDER}}  # a folder per stage


def module_name(path: Path) -> str:
    parts = ["kvgate", *path.relative_to(ROOT).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def stage(module: str) -> str:
    """The stage of ``module``: its longest prefix in STAGES."""
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        if ".".join(parts[:n]) in STAGES:
            return STAGES[".".join(parts[:n])]
    raise AssertionError(f"{module} has no stage: add it to STAGES in {__file__}")


FOLDERS = ("base", "configuration", "probes", "orchestration", "cli")  # stages holding several packages


def package(module: str) -> str:
    """``kvgate.orchestration.g3.plan`` → ``orchestration.g3``; ``kvgate.record.store`` → ``record``.

    In a stage that groups packages, each package (or module) below it is its own; a stage that is
    one package (judgement, record, transport, report) is one.
    """
    parts = module.split(".")
    if len(parts) == 1:
        return "kvgate"
    return ".".join(parts[1:3]) if parts[1] in FOLDERS and len(parts) > 2 else parts[1]


def _targets(module: str, node: ast.Import | ast.ImportFrom) -> Iterator[str]:
    """The kvgate modules an import statement loads (``from pkg import mod`` names the module)."""
    if isinstance(node, ast.Import):
        yield from (a.name for a in node.names if a.name.split(".")[0] == "kvgate")
        return
    base = node.module or ""
    if node.level:  # relative: from the importing module's package
        here = module.split(".") if MODULES[module].name == "__init__.py" else module.split(".")[:-1]
        base = ".".join(here[: len(here) - node.level + 1] + ([base] if base else []))
    if base.split(".")[0] != "kvgate":
        return
    for alias in node.names:
        yield f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base


def _runtime_imports(nodes: Iterable[ast.AST]) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement among ``nodes`` and inside them, skipping ``if TYPE_CHECKING:`` bodies."""
    for node in nodes:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from _runtime_imports(node.orelse)
        else:
            yield from _runtime_imports(ast.iter_child_nodes(node))


def imports() -> dict[str, dict[str, int]]:
    """module → {imported kvgate module: line of the first such import}."""
    graph: dict[str, dict[str, int]] = {}
    for module, path in MODULES.items():
        found = graph.setdefault(module, {})
        for node in _runtime_imports(ast.parse(path.read_text(), str(path)).body):
            for target in _targets(module, node):
                found.setdefault(target, node.lineno)
    return graph


GRAPH = imports()


def upward(graph: dict[str, dict[str, int]]) -> list[str]:
    """Imports from a lower stage to a higher one, as ``file:line module (stage) → module (stage)``."""
    rank = {s: i for i, s in enumerate(ORDER)}
    return [
        f"{MODULES[m].relative_to(ROOT.parent)}:{line} {m} ({stage(m)}) imports {t} ({stage(t)})"
        for m, targets in graph.items()
        for t, line in targets.items()
        if rank[stage(m)] < rank[stage(t)]
    ]


def package_cycles(graph: dict[str, dict[str, int]]) -> list[str]:
    """One cycle per group of packages that import each other: the imports making it, and the group."""
    edges: dict[str, dict[str, str]] = {}
    for m, targets in graph.items():
        for t, line in targets.items():
            a, b = package(m), package(t)
            if b not in (a, "kvgate"):  # kvgate/__init__ holds only the version
                edges.setdefault(a, {}).setdefault(b, f"{m}:{line} imports {t}")
    return [
        " → ".join(edges[a][b] for a, b in itertools.pairwise(c)) + f" (group: {', '.join(sorted(g))})"
        for c, g in _cycles(edges)
    ]


def _cycles(edges: dict[str, dict[str, str]]) -> list[tuple[list[str], set[str]]]:
    """One cycle (its first node repeated at the end) per group of packages that import each other."""
    found: list[tuple[list[str], set[str]]] = []
    covered: set[str] = set()
    for start in sorted(edges):
        if start in covered:
            continue
        path = _path_back(edges, start, start, [start], set())
        if path is not None:
            group = _reaches(edges, start) & {n for n in edges if start in _reaches(edges, n)}
            found.append((path, group))
            covered |= group
    return found


def _reaches(edges: dict[str, dict[str, str]], start: str) -> set[str]:
    """Every package ``start`` imports, directly or through others (and itself)."""
    seen, todo = {start}, [start]
    while todo:
        fresh = set(edges.get(todo.pop(), {})) - seen
        seen |= fresh
        todo.extend(fresh)
    return seen


def _path_back(
    edges: dict[str, dict[str, str]], node: str, goal: str, path: list[str], seen: set[str]
) -> list[str] | None:
    """A path from ``node`` back to ``goal`` (depth first), or None."""
    for nxt in sorted(edges.get(node, {})):
        if nxt == goal:
            return [*path, goal]
        if nxt not in seen:
            seen.add(nxt)
            found = _path_back(edges, nxt, goal, [*path, nxt], seen)
            if found is not None:
                return found
    return None


def test_every_module_has_a_stage() -> None:
    assert [m for m in MODULES if not any(m == p or m.startswith(p + ".") for p in STAGES)] == []


def test_no_module_imports_a_higher_stage() -> None:
    offending = upward(GRAPH)
    assert offending == [], f"stage order {' < '.join(ORDER)} broken by:\n" + "\n".join(offending)


def test_no_cycle_between_packages() -> None:
    cycles = package_cycles(GRAPH)
    assert cycles == [], "import cycles between packages:\n" + "\n".join(cycles)


SLICES = tuple(
    f"orchestration.{g}" for g in ("g1", "g2", "g3", "g4", "preflight")
)  # the gates: each reads its peers' code only via lower stages
# a slice importing another that is still there, with why: the set must shrink, never grow
PEERS_LEFT = {
    "kvgate.orchestration.preflight.measure imports kvgate.orchestration.g3.measure": (
        "preflight probes a deployment with G3's protocol"
    ),
}


def test_no_gate_slice_imports_another() -> None:
    found = {
        f"{m} imports {t}"
        for m, targets in GRAPH.items()
        for t in targets
        if package(m) in SLICES and package(t) in SLICES and package(m) != package(t)
    }
    assert found == set(PEERS_LEFT), "new: " + ", ".join(sorted(found - set(PEERS_LEFT)))


def test_the_checker_sees_a_cycle_and_an_upward_import() -> None:
    """The two rules find what they are for, in a graph made to break both."""
    graph = {
        "kvgate.configuration.inventory.loader": {"kvgate.probes.engines.service": 11},
        "kvgate.probes.engines.service": {"kvgate.configuration.inventory.schema": 3},
    }
    assert package_cycles(graph) == [
        "kvgate.configuration.inventory.loader:11 imports kvgate.probes.engines.service"
        " → kvgate.probes.engines.service:3 imports kvgate.configuration.inventory.schema"
        " (group: configuration.inventory, probes.engines)"
    ]
    assert upward({"kvgate.transport.ssh": {"kvgate.orchestration.session": 30}}) == [
        "kvgate/transport/ssh.py:30 kvgate.transport.ssh (transport)"
        " imports kvgate.orchestration.session (orchestration)"
    ]
