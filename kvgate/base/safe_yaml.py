"""YAML for files people edit by hand: what PyYAML's ``safe_load`` lets through, refused.

``safe_load`` keeps the last of two equal keys without a word, expands aliases
without limit (a "billion laughs" file is small until something walks the data),
recurses once per nesting level (RecursionError), takes ``.inf`` and ``.nan`` as
numbers and raises ValueError for an impossible date. ``parse`` composes the
document with a nesting bound, inspects the node graph (expanded size, duplicate
keys, long scalars, non-finite numbers) and only then builds the Python data.
Every refusal is a ``YamlRefused`` with the line and, where known, the field path:

>>> parse("a: 1\\nb: [x, y]\\n")
{'a': 1, 'b': ['x', 'y']}
>>> parse("a: 1\\na: 2\\n")
Traceback (most recent call last):
...
kvgate.base.safe_yaml.YamlRefused: a (line 2): duplicate key 'a' (first on line 1): each key may appear once
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

MAX_DEPTH = 32  # nesting levels, aliases followed; the shipped files nest 5 deep
MAX_NODES = 100_000  # values after expanding aliases; the largest shipped file has ~1,100
MAX_SCALAR_CHARS = 16_384  # one value; the longest shipped one is ~700 characters
_MERGE = "tag:yaml.org,2002:merge"
_FLOAT = "tag:yaml.org,2002:float"


class YamlRefused(Exception):
    """The text is not acceptable: ``line`` (1-based, 0 unknown), ``field`` path ('' unknown), why."""

    def __init__(self, line: int, field: str, problem: str) -> None:
        self.line, self.field, self.problem = line, field, problem
        super().__init__(f"{self.where}: {problem}" if self.where else problem)

    @property
    def where(self) -> str:
        """``hosts.h1 (line 5)``, ``line 5`` or ``hosts.h1``."""
        line = f"line {self.line}" if self.line else ""
        return f"{self.field} ({line})" if self.field and line else self.field or line


def _line(node: Node) -> int:
    return int(node.start_mark.line) + 1


class _Loader(yaml.SafeLoader):
    """SafeLoader with a nesting bound while composing and ValueErrors turned into refusals."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self._depth = 0

    def compose_node(self, parent: Node | None, index: int) -> Node | None:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH and parent is not None:  # the root has no parent
                raise YamlRefused(_line(parent), "", f"nested deeper than {MAX_DEPTH} levels")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_object(self, node: Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)
        # PyYAML's scalar constructors raise what Python raises: 2027-02-30 a ValueError, a
        # 5000-digit integer too, `!!timestamp soon` an AttributeError, `!!bool maybe` a KeyError
        except (ValueError, ArithmeticError, LookupError, AttributeError, TypeError) as exc:
            shown = f"{node.value!r} " if isinstance(node, ScalarNode) else ""
            kind = str(node.tag).rpartition(":")[2]
            why = f" ({exc})" if isinstance(exc, ValueError) else ""
            raise YamlRefused(_line(node), "", f"{shown[:80]}is not a valid {kind}{why}") from None


def parse(text: str) -> Any:
    """The data of a one-document YAML text; raises YamlRefused or yaml.YAMLError."""
    loader = _Loader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return None
        _Inspector(loader).visit(root, "")
        return loader.construct_document(root)
    finally:
        loader.dispose()


class _Inspector:
    """One walk over the node graph; a node reached again through an alias is not walked twice."""

    def __init__(self, loader: _Loader) -> None:
        self.loader = loader
        self.seen: dict[int, tuple[int, int]] = {}  # id(node) -> (expanded values, depth)
        self.open: set[int] = set()  # nodes being walked: reaching one again is a cycle

    def visit(self, node: Node, field: str) -> tuple[int, int]:
        key = id(node)
        if key in self.seen:
            return self.seen[key]
        if key in self.open:
            raise YamlRefused(
                _line(node), field, "an alias inside the value it names (a recursive structure)"
            )
        self.open.add(key)
        size, depth = 1, 1
        for child_field, child in self.children(node, field):
            child_size, child_depth = self.visit(child, child_field)
            size, depth = size + child_size, max(depth, child_depth + 1)
        self.open.discard(key)
        self.check(node, field, size, depth)
        self.seen[key] = (size, depth)
        return size, depth

    def check(self, node: Node, field: str, size: int, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise YamlRefused(_line(node), field, f"nested deeper than {MAX_DEPTH} levels (aliases followed)")
        if size > MAX_NODES:
            why = f"expands to more than {MAX_NODES} values (aliases followed): a YAML alias bomb?"
            raise YamlRefused(_line(node), field, why)
        if isinstance(node, ScalarNode):
            self.check_scalar(node, field)

    def check_scalar(self, node: ScalarNode, field: str) -> None:
        if len(node.value) > MAX_SCALAR_CHARS:
            raise YamlRefused(_line(node), field, f"a value longer than {MAX_SCALAR_CHARS} characters")
        if node.tag == _FLOAT and not math.isfinite(self.loader.construct_object(node)):
            raise YamlRefused(_line(node), field, f"{node.value!r} is not a finite number")

    def children(self, node: Node, field: str) -> Iterator[tuple[str, Node]]:
        if isinstance(node, SequenceNode):
            yield from ((f"{field}[{i}]", child) for i, child in enumerate(node.value))
        elif isinstance(node, MappingNode):
            firsts: dict[Any, int] = {}
            for key_node, value_node in node.value:
                name = _key_text(key_node)
                where = f"{field}.{name}" if field else name
                yield where, key_node
                self.check_duplicate(key_node, where, firsts)
                yield where, value_node

    def check_duplicate(self, key_node: Node, where: str, firsts: dict[Any, int]) -> None:
        """A key equal to an earlier one of the same mapping (merge keys ``<<`` may repeat)."""
        if not isinstance(key_node, ScalarNode) or key_node.tag == _MERGE:
            return
        key = self.loader.construct_object(key_node)
        if key in firsts:
            why = f"duplicate key {key!r} (first on line {firsts[key]}): each key may appear once"
            raise YamlRefused(_line(key_node), where, why)
        firsts[key] = _line(key_node)


def _key_text(node: Node) -> str:
    return str(node.value)[:60] if isinstance(node, ScalarNode) else "<complex key>"
