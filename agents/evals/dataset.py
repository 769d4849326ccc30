"""Cases and datasets (docs/how-to/evals.md): what an evaluation asks the agent, and what it
expects back; a dataset read from YAML or JSON Lines names the file, line and field of
anything it cannot take (``DatasetError``)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final

import attrs

from agents.errors import (
    ContentError,
    DatasetError,
    DefinitionError,
    InvalidArgument,
    InvalidType,
    StateDecodeError,
)
from agents.records.arguments import listed, text
from agents.records.arguments import path as checked_path
from agents.records.content import checked_content, part_of
from agents.records.frozen import NestingError, deep_freeze, deep_thaw
from agents.records.json_text import json_lines, loads
from agents.records.state import AgentState
from agents.shell.files import UnreadableFile, read_file

__all__ = ["Case", "Dataset"]

_FIELDS: Final = ("name", "input", "expected", "metadata")


def _input(value: Any) -> Any:
    """A case's input as it is kept: a state as it is, text, a part, or a list of text and
    parts (a tuple, not empty). Anything else, which no trial could start from nor an
    evaluation's folder hold, is an ``InvalidType`` (an empty list an ``InvalidArgument``)."""
    if isinstance(value, AgentState | str):
        return value
    if isinstance(value, Iterable) and not isinstance(value, Mapping | bytes):
        value = tuple(value)
        if not value:
            raise InvalidArgument("a case's input is text, a part or a list of them, not []")
    try:
        checked_content(value)
    except InvalidType as exc:
        raise InvalidType(f"a case's input: {exc}") from None
    return value


def _metadata(value: Any) -> Any:
    if not isinstance(value, Mapping):
        raise InvalidType(f"a case's metadata is a mapping, not {type(value).__name__}")
    return deep_freeze(value)


def _named(case: Any, _: Any, name: Any) -> None:
    if not text(name, "a case's name"):
        raise InvalidArgument("a case's name is not empty")


@attrs.frozen
class Case:
    """One question to the agent: its ``name`` (unique in its dataset), its ``input`` (text,
    a part, a list of text and parts, or the ``AgentState`` to run), the ``expected``
    answer (for the scorers that compare with one) and ``metadata`` (any JSON)."""

    name: str = attrs.field(validator=_named)
    input: Any = attrs.field(converter=_input)
    expected: Any = attrs.field(default=None, converter=deep_freeze)
    metadata: Any = attrs.field(factory=dict, converter=_metadata)

    def initial(self) -> AgentState:
        """The state a trial starts from: the case's state, or a new one whose user message
        is the input."""
        if isinstance(self.input, AgentState):
            return self.input
        given = list(self.input) if isinstance(self.input, tuple) else self.input
        return AgentState.initial(messages=[given])

    def to_data(self) -> dict[str, Any]:
        """The case as JSON data (a state as its document, parts as their JSON)."""
        given = self.input
        if isinstance(given, AgentState):
            given = {"state": json.loads(given.to_json())}
        elif isinstance(given, tuple | list):
            given = [item if isinstance(item, str) else item.to_dict() for item in given]
        elif not isinstance(given, str):
            given = given.to_dict()
        return {
            "name": self.name,
            "input": given,
            "expected": deep_thaw(self.expected),
            "metadata": deep_thaw(self.metadata),
        }


def _cases(cases: Iterable[Case]) -> tuple[Case, ...]:
    return listed(cases, "a dataset's cases")


@attrs.frozen
class Dataset:
    """Cases, in order, each named once."""

    cases: tuple[Case, ...] = attrs.field(converter=_cases)
    name: str = "dataset"

    def __attrs_post_init__(self) -> None:
        text(self.name, "a dataset's name")
        seen: set[str] = set()
        for case in self.cases:
            if not isinstance(case, Case):
                raise DatasetError(f"expected a Case, got {type(case).__name__}", file=self.name)
            if case.name in seen:
                raise DatasetError(f"two cases are named {case.name!r}", file=self.name)
            seen.add(case.name)

    def __len__(self) -> int:
        return len(self.cases)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Dataset:
        """The cases of a YAML file (a list of mappings) or a JSON Lines file (an object a
        line), each holding ``Case``'s fields by name (``name`` and ``input`` required);
        ``DatasetError`` naming the file, the line and the field of what it cannot take."""
        source = str(checked_path(path, "Dataset.load: path"))
        try:
            text = read_file(Path(path)).decode("utf-8")
        except (UnreadableFile, UnicodeDecodeError) as exc:
            raise DatasetError(f"cannot read it: {exc}", file=source) from None
        if Path(path).suffix.lower() in (".yaml", ".yml"):
            items = _yaml_items(text, source)
        else:
            items = _jsonl_items(text, source)
        cases = [case_of(data, line, keys, source) for data, line, keys in items]
        seen: dict[str, int] = {}
        for case, (_, line, keys) in zip(cases, items, strict=True):
            if case.name in seen:
                raise DatasetError(
                    f"{case.name!r} names the case of line {seen[case.name]} too",
                    file=source,
                    line=keys.get("name", line),
                    field="name",
                )
            seen[case.name] = line
        return cls(cases, name=Path(path).stem)


def _yaml_items(text: str, source: str) -> list[tuple[Any, int, dict[str, int]]]:
    from agents.yaml_text import yaml_items  # PyYAML, loaded for a YAML dataset only

    try:
        return yaml_items(text, source)
    except DefinitionError as exc:
        raise DatasetError(str(exc).split(": ", 1)[-1], file=source, line=exc.line) from None


def _jsonl_items(text: str, source: str) -> list[tuple[Any, int, dict[str, int]]]:
    items: list[tuple[Any, int, dict[str, int]]] = []
    for number, line in enumerate(json_lines(text), start=1):
        if not line.strip():
            continue
        try:
            data = loads(line)
        except StateDecodeError as exc:
            raise DatasetError(exc.reason, file=source, line=number) from None
        items.append((data, number, {}))
    return items


def case_of(data: Any, line: int, keys: dict[str, int], source: str) -> Case:
    """The case JSON data ``data`` holds (line ``line`` of ``source``; ``keys``: the line
    of each key, where a YAML file says), or a ``DatasetError`` naming what is wrong."""
    if not isinstance(data, dict):
        raise DatasetError("expected an object of the case's fields", file=source, line=line)
    for key in data:
        if key not in _FIELDS:
            where = keys.get(str(key), line)
            known = ", ".join(_FIELDS)
            raise DatasetError(f"unknown (a case has {known})", file=source, line=where, field=key)
    for key in ("name", "input"):
        if key not in data:
            raise DatasetError("missing", file=source, line=line, field=key)
    name = data["name"]
    if not isinstance(name, str) or not name:
        where = keys.get("name", line)
        raise DatasetError("a case's name is text", file=source, line=where, field="name")
    given = _given(data["input"], source, keys.get("input", line))
    metadata = data.get("metadata", {})
    if not isinstance(metadata, dict):
        where = keys.get("metadata", line)
        raise DatasetError("a mapping", file=source, line=where, field="metadata")
    for field in ("expected", "metadata"):  # JSON values: finite numbers, bounded nesting
        try:
            deep_freeze(data.get(field))
        except NestingError as exc:
            where = keys.get(field, line)
            raise DatasetError(exc.problem, file=source, line=where, field=field) from None
    return Case(name, given, data.get("expected"), metadata)


def _given(value: Any, source: str, line: int) -> Any:
    """A case's input from a file: text, a list of texts and parts (``_part``), or
    ``{"state": <a state>}``."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(isinstance(v, str | dict) for v in value):
        return [
            item if isinstance(item, str) else _part(item, source, line, f"input[{index}]")
            for index, item in enumerate(value)
        ]
    if isinstance(value, dict) and set(value) == {"state"}:
        try:
            return AgentState.from_dict(value["state"])
        except StateDecodeError as exc:
            field = "input.state" + ("" if exc.path == "$" else f".{exc.path}")
            raise DatasetError(exc.reason, file=source, line=line, field=field) from None
    raise DatasetError(
        "text, a list of texts and parts, or {state: <a state>}",
        file=source,
        line=line,
        field="input",
    )


def _part(item: dict[str, Any], source: str, line: int, field: str) -> Any:
    """A part of a case's input (``content.part_of``): a ``path`` names a file in the
    dataset's folder or below it."""
    try:
        return part_of(item, Path(source).parent)
    except ContentError as exc:
        raise DatasetError(str(exc), file=source, line=line, field=field) from None
