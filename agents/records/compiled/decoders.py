"""The source of the codec's per-class decoders (``decoding`` compiles them with its
helpers in the namespace): the optimistic first pass, of the codec's JSON or of the audit
log's compact form."""

from __future__ import annotations

import enum
import typing
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Final

import attrs
from pyrsistent import PMap, pvector

from agents.records.compiled.making import JSON_SCALARS, building, building_names
from agents.records.frozen import EMPTY_MAP, EMPTY_VECTOR, History, to_history
from agents.records.json_text import exact_or_refuse
from agents.records.registry import (
    RECORD,
    RECORDS_BY_TYPE,
    SHARED,
    compact_class,
    data_fields,
    element_of,
    field_plan,
    hints,
    is_pvector,
    optional_of,
    parts_of_content,
    plain_init,
)

__all__ = ["DecoderSource"]

_SHARED_LOOKUP: Final = """\
        try:
            key = {key}
        except TypeError:  # orjson's refusal too
            key = None
        found = None if key is None else context.shared.get(key)
        if found is not None:
            return found"""
"""A ``SHARED`` record decoded before in the document: found by its JSON (``key``)."""


class DecoderSource:
    """The source of ``decode(value, path, context)`` for one record class: the optimistic
    first pass in straight-line code — each field checked inline where a check is cheap,
    by its general decoder otherwise — and the general decoder wherever it doubts. Where
    ``context.consume`` says the data is the decoder's own, the object a record was built
    from is emptied there and then (``decoding._read``).

    The caller's ``namespace`` holds what the code calls: ``_general(value, path, context,
    cls)``, ``_Bad`` (the error), ``_ref`` (a ``MessagesRef``) and ``_DEC`` (compiled
    decoders by class); each field's general decoder is put there from ``general``. A
    record is built as ``maker`` builds one, inline (no call): its fields set through the
    slots' own setters, its validators run."""

    def __init__(
        self, cls: type, general: dict[str, Any], namespace: dict[str, Any], compact: bool = False
    ) -> None:
        self.cls, self.general, self.namespace, self.compact = cls, general, namespace, compact
        self.annotations = hints(cls)
        self.fields = {field.name: field for field in data_fields(cls)}
        self.plain = plain_init(cls)
        namespace.update(
            _cls=cls,
            _history=to_history,
            _pvector=pvector,
            _EMPTY=EMPTY_VECTOR,
            _NO_MAP=EMPTY_MAP,
            _SCALARS=JSON_SCALARS,
            _dumps=exact_or_refuse,
        )
        if self.plain is not None:
            defaults, validated = self.plain
            namespace.update(building_names(cls))
            namespace.update({f"_default_{name}": value for name, value in defaults.items()})
            namespace.update({f"_check_{field.name}": field.validator for field in validated})
            namespace.update({f"_field_{field.name}": field for field in validated})

    def source(self) -> str:
        if self.compact:
            return self._compact_source()
        name = self.cls.__name__
        plan = field_plan(self.cls)
        required = [field for field in plan if not field.optional]
        lines = [
            "def decode(value, path, context):",
            f"    if not context.paths and type(value) is dict and value.get('kind') == {name!r}:",
        ]
        shared = name in SHARED
        if shared:  # a repeat: the record decoded before (its key: ``json_text.exact``)
            lines += _SHARED_LOOKUP.format(key="_dumps(value)").split("\n")
        lines += ["        size = len(value)", "        try:"]
        lines += [f"            if size == {len(plan) + 1}:", *self._build(list(plan))]
        if len(required) != len(plan):
            lines += [f"            elif size == {len(required) + 1}:", *self._build(required)]
        lines += [
            "            else:",
            "                new = None",
            "        except (KeyError, TypeError, ValueError):",
            f"            raise _Bad('invalid {name}', path) from None",
            "        if new is not None:",
        ]
        if shared:
            lines += [
                "            if key is not None:",
                "                context.shared[key] = new",
            ]
        lines += [
            "            if context.consume:",
            "                value.clear()",
            "            return new",
            "    return _general(value, path, context, _cls)",
        ]
        return "\n".join(lines)

    def _compact_source(self) -> str:
        """The audit log's compact form (``records.compact``): no ``kind``, a field at its
        default left out, a ``MessagesRef`` as its prefix; where it doubts, the full
        decoder reads the form the codec writes (``_thick``) and says what is wrong."""
        lines = ["def decode(value, path, context):"]
        lines.append("    if not context.paths and type(value) is dict and 'kind' not in value:")
        shared = self.cls.__name__ in SHARED
        if shared:  # keyed by the class too: a compact object does not say its own
            self.namespace["_tag"] = f"|{self.cls.__name__}".encode()
            lines += _SHARED_LOOKUP.format(key="_dumps(value) + _tag").split("\n")
        lines += ["        try:", "            left = len(value)"]
        given = {}
        for index, field in enumerate(field_plan(self.cls)):
            name, indent = field.name, " " * 12
            required = self.fields[name].default is attrs.NOTHING
            given[name] = f"a{index}"
            if required:
                lines += [f"{indent}x = value[{name!r}]", f"{indent}left -= 1"]
            else:
                default = "_MISSING" if self.plain is None else f"_default_{name}"
                lines += [
                    f"{indent}x = value.get({name!r}, _MISSING)",
                    f"{indent}if x is _MISSING:",
                    f"{indent}    a{index} = {default}",
                    f"{indent}else:",
                    f"{indent}    left -= 1",
                ]
                indent += "    "
            lines.append(f"{indent}a{index} = {self._value(index, field)}")
        lines += ["            if left:  # a key of no field", "                raise KeyError"]
        if self.plain is None:
            pairs = ", ".join(f"({name!r}, {value})" for name, value in given.items())
            lines.append(
                f"            new = _cls(**{{k: v for k, v in ({pairs},) if v is not _MISSING}})"
            )
        else:
            lines += building(self.cls, lambda f: given.get(f, f"_default_{f}"), " " * 12)
            lines += [
                f"            _check_{name}(new, _field_{name}, new.{name})"
                for name in (field.name for field in self.plain[1])
            ]
        lines += [
            "        except (KeyError, TypeError, ValueError, _Bad):",
            "            new = None",
            "        if new is not None:",
        ]
        if shared:
            lines += ["            if key is not None:", f"{' ' * 16}context.shared[key] = new"]
        lines += [
            "            return new",
            "    return _DEC[_cls](_thick(value, _cls), path, context)",
        ]
        return "\n".join(lines)

    def _build(self, chosen: list[Any]) -> list[str]:
        indent = " " * 16
        lines = []
        for index, field in enumerate(chosen):
            lines.append(f"{indent}x = value[{field.name!r}]")
            lines.append(f"{indent}a{index} = {self._value(index, field)}")
        given = {field.name: f"a{index}" for index, field in enumerate(chosen)}
        if self.plain is None:
            arguments = ", ".join(f"{name}={value}" for name, value in given.items())
            return [*lines, f"{indent}new = _cls({arguments})"]
        validated = self.plain[1]  # __init__ would only set and check: do it here
        lines += building(self.cls, lambda name: given.get(name, f"_default_{name}"), indent)
        for field in validated:
            name = field.name
            lines.append(f"{indent}_check_{name}(new, _field_{name}, new.{name})")
        return lines

    def _value(self, index: int, field: Any) -> str:
        """An expression for field ``index`` decoded from ``x``."""
        decoder = f"_d{index}"
        self.namespace[decoder] = self.general[field.name]
        general = f"{decoder}(x, path, context)"
        annotation = self.annotations[field.name]
        held = optional_of(annotation) or annotation
        if self.fields[field.name].metadata.get(RECORD) is not None:  # named: decoded late
            optional = self.fields[field.name].default is None
            code = f"(None if x is None else {general})" if optional else general
        elif held in RECORDS_BY_TYPE:  # straight to its compiled decoder
            self.namespace[f"{decoder}_cls"] = held
            code = f"{self._registry(annotation)}[{decoder}_cls](x, path, context)"
            if held is not annotation:
                code = f"(None if x is None else {code})"
        else:
            code = self._checked(annotation, decoder, general)
        if field.messages_ref and self.compact:  # the prefix alone
            prefix = "{'kind': 'MessagesRef', 'prefix': x}"
            code = f"(_ref({prefix}, path, context) if type(x) is int else {code})"
        elif field.messages_ref:
            code = (
                "(_ref(x, path, context) if type(x) is dict and x.get('kind') == "
                f"'MessagesRef' else {code})"
            )
        return code

    def _registry(self, annotation: Any) -> str:
        """Where the decoder of the records a field holds is looked up: the compact ones
        where the compact form writes them so (``compact_class``)."""
        return "_CDEC" if self.compact and compact_class(annotation) is not None else "_DEC"

    def _checked(self, annotation: Any, decoder: str, general: str) -> str:
        """The value itself when an inline check passes (the common case), else the
        field's general decoder (which converts or raises)."""
        if annotation is Any:  # text, an integer, a flag or null as it is
            return f"(x if type(x) in _SCALARS else {general})"
        if parts_of_content(annotation) is not None:  # text as it is
            return f"(x if type(x) is str else {general})"
        if annotation in (str, bool, int):
            return f"(x if type(x) is {annotation.__name__} else {general})"
        if annotation in (str | None, int | None):
            inner = optional_of(annotation).__name__
            return f"(x if x is None or type(x) is {inner} else {general})"
        if annotation is float:  # x - x is 0.0 for finite floats only
            return f"(x if type(x) is float and x - x == 0.0 else {general})"
        if annotation is datetime:  # a text ``fromisoformat`` reads, with its offset
            self.namespace["_fromiso"] = datetime.fromisoformat
            return f"(t if type(x) is str and (t := _fromiso(x)).tzinfo is not None else {general})"
        if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
            members = {member.value: member for member in annotation}
            if all(type(value) is str for value in members):
                self.namespace[f"{decoder}_members"] = members
                return f"({decoder}_members[x] if x in {decoder}_members else {general})"
        origin = typing.get_origin(annotation)
        if origin in (Mapping, dict, PMap) or getattr(origin, "__name__", "") == "PMap":
            return f"(_NO_MAP if type(x) is dict and not x else {general})"
        element = element_of(annotation)
        if element not in RECORDS_BY_TYPE:
            return f"(None if x is None else {general})" if optional_of(annotation) else general
        self.namespace[f"{decoder}_cls"] = element
        registry = self._registry(annotation)
        items = f"[d(i, path, context) for d in ({registry}[{decoder}_cls],) for i in x]"
        if is_pvector(origin):
            return f"((_pvector({items}) if x else _EMPTY) if type(x) is list else {general})"
        if origin is History:
            return f"(_history({items}) if type(x) is list else {general})"
        return general
