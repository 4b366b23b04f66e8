"""The stage order of kvgate's modules, read from the source: no import up the stages, no package cycle.

Every ``import`` counts, at module level or inside a function (an import hidden in a
function is still a dependency); for the stage order, imports under ``if TYPE_CHECKING:`` do
not, since they never run, but no two modules import each other even so: a type imported
back from the caller is a circle all the same. A module's stage is its folder (``kvgate/<stage>/``);
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


def bound_names(init: Path) -> set[str]:
    """The names a package's ``__init__`` binds at its top level (defined or imported)."""
    names: set[str] = set()
    for node in ast.parse(init.read_text()).body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


BOUND = {m: bound_names(p) for m, p in MODULES.items() if p.name == "__init__.py"}


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
    for (
        alias
    ) in node.names:  # as Python resolves it: a name the package's __init__ binds wins over its module
        module = f"{base}.{alias.name}"
        yield module if module in MODULES and alias.name not in BOUND.get(base, ()) else base


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


def typed_imports() -> dict[str, dict[str, int]]:
    """module → {imported kvgate module: line of the first such import}, under TYPE_CHECKING too."""
    graph: dict[str, dict[str, int]] = {}
    for module, path in MODULES.items():
        found = graph.setdefault(module, {})
        for line, target in sorted(every_import(path)):
            if target != module:
                found.setdefault(target, line)
    return graph


def module_cycles(graph: dict[str, dict[str, int]]) -> list[str]:
    """One cycle per group of modules that import each other, as the imports that make it."""
    edges = {m: {t: f"{m}:{line} imports {t}" for t, line in targets.items()} for m, targets in graph.items()}
    return [" → ".join(edges[a][b] for a, b in itertools.pairwise(c)) for c, _ in _cycles(edges)]


def test_no_two_modules_import_each_other_even_for_a_type() -> None:
    cycles = module_cycles(typed_imports())
    assert cycles == [], "import circles (TYPE_CHECKING included):\n" + "\n".join(cycles)


def test_the_circle_checker_sees_a_type_imported_back(tmp_path: Path) -> None:
    arm = tmp_path / "arm.py"
    arm.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from kvgate.record import RunStore\n"
    )
    assert list(every_import(arm)) == [(3, "kvgate.record")]
    graph = {"kvgate.x.protocol": {"kvgate.x.arm": 5}, "kvgate.x.arm": {"kvgate.x.protocol": 3}}
    assert module_cycles(graph) == [
        "kvgate.x.arm:3 imports kvgate.x.protocol → kvgate.x.protocol:5 imports kvgate.x.arm"
    ]


# stages a module may not import although they come before it, with why (TYPE_CHECKING included)
APART = {"report": ("orchestration",)}  # a report draws what the gate stored, never how it measured


def reaching_apart(modules: dict[str, Path]) -> list[str]:
    """Imports into a stage the importer is kept apart from, as ``file:line imports module``."""
    return [
        f"{shown(path)}:{line} imports {target}"
        for module, path in modules.items()
        for line, target in every_import(path)
        if stage(target) in APART.get(stage(module), ())
    ]


def test_the_report_imports_nothing_from_orchestration() -> None:
    offending = reaching_apart(MODULES)
    assert offending == [], (
        "the report reads only the stored run; the gate stores what it shows:\n" + "\n".join(offending)
    )


SLICES = tuple(
    f"orchestration.{g}" for g in ("g1", "g2", "g3", "g4", "preflight")
)  # the gates: each reads its peers' code only via lower stages
# a slice importing another that is still there, with why: the set must shrink, never grow
PEERS_LEFT = {
    "kvgate.orchestration.preflight.measure imports kvgate.orchestration.g3": (
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


# The package boundary: a package is entered through its __init__, whose __all__ is what it offers;
# the modules inside are its own business (they may be split, merged or renamed freely).
CATALOGUE = sorted(
    (ROOT.parent / "gates").rglob("*.py")
)  # the gates' test modules: users of kvgate, like any


def every_import(path: Path) -> Iterator[tuple[int, str]]:
    """(line, kvgate module imported) for every import of ``path``, under TYPE_CHECKING too: a type is API."""
    module = module_name(path) if path.is_relative_to(ROOT) else "gates"
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield from ((node.lineno, t) for t in _targets(module, node))


def shown(path: Path) -> str:
    return str(path.relative_to(ROOT.parent) if path.is_relative_to(ROOT.parent) else path)


def through_the_back_door(paths: Iterable[Path]) -> list[str]:
    """Imports that reach into another package's modules instead of through its ``__init__``."""
    found = []
    for path in paths:
        here = package(module_name(path)) if path.is_relative_to(ROOT) else "gates"
        for line, target in every_import(path):
            there = package(target)
            if there not in (here, "kvgate") and target != f"kvgate.{there}":
                found.append(f"{shown(path)}:{line} imports {target}: import kvgate.{there}")
    return found


def test_a_package_is_entered_only_through_its_init() -> None:
    offending = through_the_back_door([*MODULES.values(), *CATALOGUE])
    assert offending == [], "imports past a package's __init__:\n" + "\n".join(offending)


def test_a_module_imports_its_siblings_not_its_own_package() -> None:
    """A module importing its own package's __init__ runs into it half-initialised when the
    __init__ re-exports that module: siblings are imported by their module path."""
    found = [
        f"{shown(path)}:{line}"
        for module, path in MODULES.items()
        if path.name not in ("__init__.py", "__main__.py")  # __main__ runs after its package
        for line, target in every_import(path)
        if target != "kvgate" and module.startswith(target + ".") and MODULES[target].name == "__init__.py"
    ]
    assert found == []


def test_the_boundary_checker_sees_a_back_door(tmp_path: Path) -> None:
    assert through_the_back_door([ROOT / "report" / "model.py"]) == []  # it imports kvgate.record
    src = tmp_path / "user.py"
    src.write_text("from kvgate.record.store import RunStore\nfrom kvgate.record import RunRecord\n")
    assert through_the_back_door([src]) == [f"{src}:1 imports kvgate.record.store: import kvgate.record"]
