"""YAML from files a person chose (run files, price files, released level files), parsed with limits.

``yaml.safe_load`` builds no Python objects beyond the plain ones, but it still expands aliases:
nine anchors of nine aliases each are a 500-byte file that grows past a gigabyte once anything
walks it (the error message's ``repr`` included), it recurses once per nesting level, and a
repeated key silently keeps the last value, so ``seed: 1`` then ``seed: 2`` runs seed 2 with
nobody told; an integer of 10,000 digits is a bare ValueError. :func:`parse_yaml` refuses all four with the position in the file, as a
``yaml.MarkedYAMLError`` that the readers' existing handlers already report as one line.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node

from buildbench.limits import limit

__all__ = ["parse_yaml"]

_MERGE = "tag:yaml.org,2002:merge"
#: Longest integer literal read (Python's own conversion limit).
_MAX_INT_DIGITS = 4300


class _Loader(yaml.SafeLoader):
    """``SafeLoader`` without aliases, without repeated keys and with bounded nesting."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._max_depth = limit("json_depth")

    def compose_node(self, parent: Node | None, index: int) -> Node | None:
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
            raise ComposerError(None, None, "aliases (*name) are not accepted: write the value out", mark)
        self._depth += 1
        try:
            if self._depth > self._max_depth:
                mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
                raise ComposerError(None, None, f"nested deeper than {self._max_depth} levels "
                                    "(BUILDBENCH_LIMIT_JSON_DEPTH)", mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == _MERGE:
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                repeated = key in seen
                seen.add(key)
            except TypeError:  # an unhashable key: construct_mapping says so itself
                continue
            if repeated:
                raise ConstructorError(None, None, f"key {repr(key)[:60]} given twice", key_node.start_mark)
        return super().construct_mapping(node, deep=deep)


def _construct_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
    # Python refuses to convert an integer of more than 4,300 digits, with a bare ValueError.
    if len(str(node.value)) > _MAX_INT_DIGITS:
        raise ConstructorError(None, None, f"an integer of more than {_MAX_INT_DIGITS} digits", node.start_mark)
    return int(loader.construct_yaml_int(node))


_Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)


def parse_yaml(text: str, *, all_documents: bool = False) -> Any:
    """The YAML (or JSON) document ``text``, or the list of its documents with ``all_documents``.

    Raises:
        yaml.MarkedYAMLError: Malformed YAML, an alias, a repeated key or nesting deeper than the
            ``json_depth`` limit; ``problem_mark`` is where.
    """
    loader = _Loader(text)
    try:
        if all_documents:
            documents = []
            while loader.check_data():  # type: ignore[no-untyped-call]
                documents.append(loader.get_data())
            return documents
        return loader.get_single_data()
    finally:
        loader.dispose()
