"""YAML as the definitions and datasets read and write it: PyYAML's safe loader and dumper,
refusing aliases, bounding nesting, and reading scalars by YAML 1.2's core schema
(docs/how-to/definitions.md). A problem is a ``DefinitionError`` naming the file and line
(a dataset's reader says it as a ``DatasetError``).

This is the only module importing PyYAML.
"""

from __future__ import annotations

import re
from typing import Any, Final, cast

import yaml

from agents.errors import DefinitionError
from agents.records.codec import nesting_position
from agents.records.frozen import MAX_DEPTH

__all__ = ["nesting_checked", "read_mapping", "too_deep", "write_yaml", "yaml_items"]


def nesting_checked(text: str, source: str, offset: int = 0) -> None:
    """Refuse text nesting past ``MAX_DEPTH`` before a parser walks it (PyYAML takes
    seconds over a deep flow collection before it gives up)."""
    if nesting_position(text, MAX_DEPTH + 2) is not None:  # + the file's own levels
        raise too_deep(source, text, offset)


_BOOL, _INT, _FLOAT, _TIME = (
    f"tag:yaml.org,2002:{name}" for name in ("bool", "int", "float", "timestamp")
)
_CORE: Final = (  # YAML 1.2's core schema, where PyYAML reads YAML 1.1's rules
    (_BOOL, r"true|True|TRUE|false|False|FALSE", "tTfF"),
    (_INT, r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+", "-+0123456789"),
    (_FLOAT, r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?", "-+.0123456789"),
    (_FLOAT, r"[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)", "-+."),
)


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader refusing aliases: a few of them can stand for billions of
    values. (The pure-Python composer, not libyaml's: a hostile file nested deep must end
    in a ``RecursionError`` we can report, not in a crash of C code.)

    Its scalars are read by YAML 1.2's core schema (docs/how-to/definitions.md), not by
    the YAML 1.1 rules PyYAML keeps: ``yes``, ``no``, ``on`` and ``off`` are text (1.1:
    booleans), as are ``1:20`` (1.1: 80), ``1_000`` and ``2024-01-01`` (1.1: a date,
    which is no JSON); ``012`` is twelve (1.1: ten) and ``0o12`` ten."""

    source = ""
    offset = 0
    yaml_implicit_resolvers = {
        first: [(tag, found) for tag, found in resolvers if tag not in (_BOOL, _INT, _FLOAT, _TIME)]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            mark = cast(Any, self).peek_event().start_mark  # PyYAML's stubs leave it untyped
            raise DefinitionError(
                "YAML aliases (*name) are not allowed in definitions",
                file=self.source,
                line=mark.line + 1 + self.offset if mark is not None else None,
            )
        return super().compose_node(parent, index)

    def construct_core_int(self, node: Any) -> int:
        text = str(self.construct_scalar(node))
        base = {"0o": 8, "0x": 16}.get(text[:2], 10)
        try:
            return int(text[2:] if base != 10 else text, base)
        except ValueError:  # past Python's limit of digits
            raise DefinitionError(
                f"not valid YAML (an integer of {len(text):,} digits; Python reads at most 4,300)",
                file=self.source,
                line=node.start_mark.line + 1 + self.offset,
            ) from None


class _Dumper(yaml.SafeDumper):
    """PyYAML's safe dumper quoting text that YAML 1.1 or 1.2's core schema would read as
    another type (``"1e3"``, ``"0o12"``: 1.1 leaves them text, 1.2 makes them numbers)."""


_Loader.add_constructor(_INT, _Loader.construct_core_int)
for _tag, _pattern, _first in _CORE:
    for _resolving in (_Loader, _Dumper):
        _resolving.add_implicit_resolver(_tag, re.compile(f"^(?:{_pattern})$"), list(_first))


def _text(dumper: _Dumper, value: str) -> Any:
    """Text in double quotes where it holds a line break of YAML's other than ``\\n``
    (NEL, LS, PS): PyYAML folds them into a plain or single-quoted scalar, which reads
    back with a space in their place; double quotes escape them."""
    style = '"' if any(ch in value for ch in "\x85\u2028\u2029") else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _text)


def write_yaml(data: Any) -> str:
    """``data`` as YAML that ``read_mapping`` reads back equal (keys in their order)."""
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True)


def read_mapping(text: str, source: str, offset: int) -> tuple[dict[str, Any], dict[str, int]]:
    """A YAML mapping (a definition; ``offset``: the lines before the text, a Markdown
    file's opening ``---``) and the line of each of its keys."""
    node, data = _parsed(text, source, offset)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise DefinitionError(
            f"expected a mapping of fields, got {type(data).__name__}",
            file=source,
            line=1 + offset,
        )
    return data, _key_lines(node, offset)


def yaml_items(text: str, source: str) -> list[tuple[Any, int, dict[str, int]]]:
    """A YAML list (an evaluation dataset): each item, its line, and the lines of its
    keys when it is a mapping. ``DefinitionError`` naming the line for text that is not
    a YAML list."""
    node, data = _parsed(text, source, 0)
    if data is None:
        data = []
    if not isinstance(data, list) or not isinstance(node, yaml.SequenceNode | type(None)):
        raise DefinitionError("expected a list of cases", file=source, line=1)
    items = node.value if node is not None else []
    return [
        (value, item.start_mark.line + 1, _key_lines(item, 0))
        for value, item in zip(data, items, strict=True)
    ]


def _parsed(text: str, source: str, offset: int) -> tuple[Any, Any]:
    """The text's node (for line numbers) and the data made from it, in one pass."""
    nesting_checked(text, source, offset)
    loader = None
    try:
        loader = _Loader(text)  # may refuse the text already (unprintable characters)
        loader.source, loader.offset = source, offset  # for the errors it raises itself
        node = loader.get_single_node()
        return node, loader.construct_document(node) if node is not None else None
    except RecursionError:
        raise too_deep(source, text, offset) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 + offset if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise DefinitionError(f"not valid YAML ({problem})", file=source, line=line) from None
    finally:
        if loader is not None:
            loader.dispose()


def _key_lines(node: Any, offset: int) -> dict[str, int]:
    """The line of each text key of a mapping node (none for another node)."""
    if not isinstance(node, yaml.MappingNode):
        return {}
    return {
        key.value: key.start_mark.line + 1 + offset
        for key, _ in node.value
        if isinstance(key.value, str)
    }


def too_deep(source: str, text: str, offset: int = 0) -> DefinitionError:
    """A file nesting past what its parser can read (far past ``MAX_DEPTH``)."""
    found = nesting_position(text, MAX_DEPTH)
    return DefinitionError(
        f"nested too deeply (values nest at most {MAX_DEPTH} levels)"
        + (f", column {found[1]}" if found else ""),
        file=source,
        line=found[0] + offset if found else None,
    )
