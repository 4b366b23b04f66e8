"""Every package's ``__init__`` docstring is its module map, and the map stays true.

Code outside a package imports only its ``__init__`` (docs/architecture.md), so the
docstring is where a newcomer learns what is inside: it names each module (``name.py``)
and sub-package (``name/``) of its folder, and no ``name.py`` that is not there (a map
left behind by a move). A path (``kvgate/base/errors.py``) must exist too.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from pathlib import Path

import kvgate

ROOT = Path(kvgate.__file__).parent
REPO = ROOT.parent
PACKAGES = sorted(init.parent for init in ROOT.rglob("__init__.py"))

# a file name on its own, not the tail of a path or a dotted name
BARE = re.compile(r"(?<![\w/.-])(\w+\.py)\b")
BARE_DIR = re.compile(r"(?<![\w/.-])(\w+/)(?![\w.])")
PATH = re.compile(r"(?<![\w/.-])((?:[\w.<>-]+/)+\w+\.py)\b")


def docstring(package: Path) -> str:
    return ast.get_docstring(ast.parse((package / "__init__.py").read_text())) or ""


def contents(package: Path) -> set[str]:
    """What a map must name: ``name.py`` per module, ``name/`` per sub-package."""
    modules = {p.name for p in package.glob("*.py") if p.name != "__init__.py"}
    return modules | {f"{p.parent.name}/" for p in package.glob("*/__init__.py")}


def named(text: str) -> set[str]:
    return set(BARE.findall(text)) | set(BARE_DIR.findall(text))


def unmapped(package: Path) -> list[str]:
    return sorted(contents(package) - named(docstring(package)))


def stale(package: Path) -> list[str]:
    """Bare names that are not in the folder, and paths that exist neither from the repo nor the folder."""
    text = docstring(package)
    gone = {name for name in BARE.findall(text) if not (package / name).is_file()}
    broken = {p for p in PATH.findall(text) if not ((REPO / p).is_file() or (package / p).is_file())}
    return sorted(gone | broken)


def report(found: dict[str, list[str]]) -> str:
    return "\n".join(f"  {package}: {', '.join(names)}" for package, names in found.items())


def by_package(check: Callable[[Path], list[str]]) -> dict[str, list[str]]:
    found = {str(p.relative_to(REPO)): check(p) for p in PACKAGES}
    return {package: names for package, names in found.items() if names}


def test_every_package_maps_every_module_and_subpackage() -> None:
    assert {ROOT, ROOT / "probes" / "fio"} <= set(PACKAGES)  # the walk found the tree
    missing = by_package(unmapped)
    assert not missing, f"__init__ docstrings that do not name these (add a map line):\n{report(missing)}"


def test_no_map_names_a_module_that_is_not_there() -> None:
    gone = by_package(stale)
    assert not gone, f"__init__ docstrings naming files that are not there (stale map):\n{report(gone)}"


def test_the_map_reader_sees_a_missing_and_a_stale_name(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "sub" / "__init__.py").write_text("")
    (package / "kept.py").write_text("")
    (package / "new.py").write_text("")
    (package / "__init__.py").write_text('"""Map.\n\n    kept.py  here\n    old.py   moved away\n"""\n')
    assert unmapped(package) == ["new.py", "sub/"]
    assert stale(package) == ["old.py"]
