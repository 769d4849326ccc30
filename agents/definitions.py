"""Agent definitions: an agent described in a TOML, YAML or Markdown file.

A definition names the agent, gives its system prompt, model, tools (by name, from a
registry of ``Tool``s), limits, sub-agents (other definitions, by name) and how it keeps
its context small (a token window, summaries). Markdown files
carry the fields as YAML front matter between ``---`` lines and the system prompt as their
body. ``AgentDefinition.load(path)`` reads one (a ``DefinitionError`` names the file, the
line where it can and the field), ``definition.build(registry)`` gives the ``AgentLoop``
and the initial ``AgentState``, and ``agents run path/to/agent.md --input "..."`` runs it.

YAML is read and written by ``agents.yaml_text``.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final

import attrs

from agents.core.compaction import Summarization
from agents.core.compilers import TokenWindowCompiler
from agents.definition_fields import check_fields, write_toml
from agents.errors import ConfigurationError, DefinitionError, InvalidArgument, StateDecodeError
from agents.records.arguments import names
from agents.records.arguments import path as checked_path
from agents.records.codec import register
from agents.records.frozen import deep_thaw, to_float, to_pmap
from agents.records.json_text import has_lone_surrogate
from agents.records.record import Record
from agents.records.redaction import redacted
from agents.records.state import AgentState
from agents.shell.files import read_text
from agents.shell.loop import AgentLoop
from agents.shell.subagents import SubagentFailed, subagent_tool
from agents.tools.tool import Tool, Tools
from agents.yaml_text import nesting_checked, read_mapping, too_deep, write_yaml

__all__ = ["AgentDefinition", "DefinitionError", "Registry"]

SUFFIXES: Final = {".toml": "toml", ".yaml": "yaml", ".yml": "yaml", ".md": "markdown"}
_FRONT_MATTER: Final = re.compile(r"\A---[ \t]*\n(.*?\n)?---[ \t]*(?:\n|\Z)", re.S)


def _names(value: Iterable[str] | None) -> tuple[str, ...] | None:
    return None if value is None else names(value, "tools")


def _denied(value: Iterable[str]) -> tuple[str, ...]:
    return names(value, "deny_tools")


def _subagents(value: Iterable[str]) -> tuple[str, ...]:
    return names(value, "subagents")


@attrs.frozen(kw_only=True)
class AgentDefinition(Record):
    """An agent as data. ``tools=None`` offers every tool of the registry; ``()`` none.

    A record like the others: ``to_json``/``from_json``/``to_dict``/``from_dict`` through
    the codec (secrets among ``llm_options`` written as ``"[redacted]"``, as in every
    map); ``to_data``/``to_text`` give what a definition file holds."""

    name: str
    description: str = ""
    system_prompt: str = ""
    model: str | None = None
    llm_options: Mapping[str, Any] = attrs.field(factory=dict, converter=to_pmap)
    tools: tuple[str, ...] | None = attrs.field(default=None, converter=_names)
    deny_tools: tuple[str, ...] = attrs.field(default=(), converter=_denied)
    max_steps: int | None = 20
    max_tokens: int | None = None
    max_cost: float | None = attrs.field(default=None, converter=to_float)
    time_limit: float | None = attrs.field(default=None, converter=to_float)
    tool_execution: str = "parallel"
    subagents: tuple[str, ...] = attrs.field(default=(), converter=_subagents)
    max_depth: int = 3
    context_window: int | None = None
    max_message_tokens: int | None = None
    max_buffer_tokens: int | None = None
    summary_model: str | None = None
    source: str | None = attrs.field(default=None, eq=False)

    # -- reading ----------------------------------------------------------------------------

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> AgentDefinition:
        """Read a ``.toml``, ``.yaml``/``.yml`` or ``.md`` definition."""
        file = os.fspath(checked_path(path, "AgentDefinition.load: path"))
        kind = SUFFIXES.get(Path(file).suffix.lower())
        if kind is None:
            raise DefinitionError(
                f"not a definition file (expected {', '.join(sorted(SUFFIXES))})", file=file
            )
        try:
            text = read_text(file)
        except UnicodeDecodeError:
            raise DefinitionError("not UTF-8 text", file=file) from None
        except OSError as exc:
            raise DefinitionError(f"cannot read it ({exc.strerror or exc})", file=file) from None
        return cls.from_text(text, kind, source=file)

    @classmethod
    def from_text(cls, text: str, kind: str, *, source: str = "<text>") -> AgentDefinition:
        """Read a definition from ``text`` in ``kind`` ("toml", "yaml" or "markdown")."""
        if kind == "toml":
            data, lines = _read_toml(text, source)
        elif kind == "yaml":
            data, lines = read_mapping(text, source, offset=0)
        elif kind == "markdown":
            match = _FRONT_MATTER.match(text)
            if match is None:
                raise DefinitionError(
                    "a Markdown definition starts with front matter between '---' lines",
                    file=source,
                    line=1,
                )
            data, lines = read_mapping(match.group(1) or "", source, offset=1)
            body = text[match.end() :].strip()
            if "system_prompt" in data and body:
                raise DefinitionError(
                    "give the system prompt as the body or in the front matter, not both",
                    file=source,
                    line=lines.get("system_prompt"),
                    field="system_prompt",
                )
            if body:
                data["system_prompt"] = body
        else:
            raise InvalidArgument(f"unknown definition kind {kind!r}")
        return _checked_definition(data, lines, source)

    # -- writing ----------------------------------------------------------------------------

    def to_data(self) -> dict[str, Any]:
        """The fields that differ from their defaults (``name`` always), as plain data:
        what a definition file holds."""
        out: dict[str, Any] = {}
        defaults = AgentDefinition(name=self.name)
        for field in attrs.fields(AgentDefinition):
            if field.name == "source":
                continue
            value = getattr(self, field.name)
            if field.name == "name" or value != getattr(defaults, field.name):
                out[field.name] = list(value) if isinstance(value, tuple) else deep_thaw(value)
        return out

    @classmethod
    def from_dict(cls, data: Any) -> AgentDefinition:
        """A definition from the codec's JSON data, checked as a definition file is
        (``StateDecodeError`` naming the field)."""
        return _checked(super().from_dict(data))

    @classmethod
    def from_json(cls, text: str | bytes) -> AgentDefinition:
        """A definition from the codec's JSON text, checked as a definition file is."""
        return _checked(super().from_json(text))

    def to_text(self, kind: str) -> str:
        """The definition as a file of ``kind`` that ``from_text`` reads back equal — but
        for a secret (a value under a secret key, as ``llm_options``' ``api_key`` or an
        ``Authorization`` header), written ``"[redacted]"`` as the codec writes it
        (docs/design/events.md): no credential in a file (keep them in the environment)."""
        data = redacted(self.to_data())
        if kind == "toml":
            return write_toml(data)
        if kind == "yaml":
            return write_yaml(data)
        if kind == "markdown":
            prompt = data.get("system_prompt", "")
            # in the front matter, escaped, what no UTF-8 file holds raw (a lone surrogate)
            # and what the body, read stripped, would lose (white space around it)
            if has_lone_surrogate(prompt) or prompt != prompt.strip():
                prompt = ""
            else:
                data.pop("system_prompt", None)
            front = write_yaml(data)
            return f"---\n{front}---\n\n{prompt}\n"
        raise InvalidArgument(f"unknown definition kind {kind!r}")

    # -- building ---------------------------------------------------------------------------

    def build(
        self,
        registry: Registry | Iterable[Any] | None = None,
        *,
        driver: Any = None,
        **loop_options: Any,
    ) -> tuple[AgentLoop, AgentState]:
        """The loop and the initial state this definition describes.

        ``driver`` replaces the model: a driver for this agent only, or a function
        ``driver(definition)`` giving each agent of the tree its driver (sub-agents too).
        Without it a ``LiteLLMDriver(model, **llm_options)`` is made. ``loop_options`` go
        to ``AgentLoop`` (clock, ids, listeners…).
        """
        return self._build(Registry.of(registry), driver, loop_options)

    def _build(
        self, registry: Registry, driver: Any, loop_options: dict[str, Any]
    ) -> tuple[AgentLoop, AgentState]:
        tools: list[Tool] = []
        wanted = list(registry.tools) if self.tools is None else list(self.tools)
        unknown = [name for name in wanted if name not in registry.tools]
        if unknown:
            raise DefinitionError(
                f"unknown tools {unknown}; the registry has {sorted(registry.tools) or 'none'}",
                file=self.source or self.name,
                field="tools",
            )
        tools += [registry.tools[name] for name in wanted if name not in self.deny_tools]
        for child in self.subagents:
            tools.append(self._subagent(child, registry, driver, loop_options))
        if (self.max_message_tokens is None) != (self.max_buffer_tokens is None):
            raise DefinitionError(
                "max_message_tokens and max_buffer_tokens go together (summaries take both)",
                file=self.source or self.name,
                field="max_message_tokens"
                if self.max_message_tokens is None
                else "max_buffer_tokens",
            )
        context: dict[str, Any] = {}
        if self.context_window is not None:
            context["message_compiler"] = TokenWindowCompiler(self.context_window)
        if self.max_message_tokens is not None and self.max_buffer_tokens is not None:
            context["compaction"] = Summarization(
                self.max_message_tokens, self.max_buffer_tokens, model=self.summary_model
            )
        loop = AgentLoop(
            self._driver(driver),
            tools=tools,
            max_steps=self.max_steps,
            max_tokens=self.max_tokens,
            max_cost=self.max_cost,
            time_limit=self.time_limit,
            tool_execution=self.tool_execution,
            **context,
            **loop_options,
        )
        return loop, AgentState.initial(self.system_prompt)

    def _driver(self, driver: Any) -> Any:
        if driver is not None:
            is_factory = callable(driver) and not (
                hasattr(driver, "infer") or hasattr(driver, "ainfer")
            )
            return driver(self) if is_factory else driver
        if self.model is None:
            raise DefinitionError(
                "no model: set 'model' or pass a driver",
                file=self.source or self.name,
                field="model",
            )
        from agents.drivers.litellm import LiteLLMDriver

        return LiteLLMDriver(self.model, **dict(self.llm_options))

    def _subagent(
        self, name: str, registry: Registry, driver: Any, loop_options: dict[str, Any]
    ) -> Tool:
        """A sub-agent tool, built when called (so a definition may name itself, down to
        ``max_depth``); an unknown name is a tool whose calls fail."""
        definition = registry.definition(name, near=self.source)
        factory_driver = driver if callable(driver) and not hasattr(driver, "infer") else None

        if definition is None:

            def unknown() -> AgentLoop:
                raise SubagentFailed(f"unknown sub-agent {name!r}")

            return subagent_tool(name, f"(unknown sub-agent {name})", unknown, self.max_depth)

        def factory() -> tuple[AgentLoop, AgentState]:
            return definition._build(registry, factory_driver, loop_options)

        return subagent_tool(
            name, definition.description or f"the {name} agent", factory, self.max_depth
        )


register(AgentDefinition)


def _checked(definition: AgentDefinition) -> AgentDefinition:
    """A decoded definition, validated as a file's would be."""
    try:
        return _checked_definition(definition.to_data(), {}, definition.source or "<json>")
    except DefinitionError as exc:
        raise StateDecodeError(str(exc), exc.field or "$") from None


@attrs.frozen
class Registry:
    """What definitions may name: tools, and other definitions (for sub-agents)."""

    tools: Mapping[str, Tool] = attrs.field(factory=dict)
    definitions: Mapping[str, AgentDefinition] = attrs.field(factory=dict)

    @classmethod
    def of(cls, items: Registry | Iterable[Any] | None) -> Registry:
        """A registry from tools, definitions and functions decorated with ``@tool``."""
        if isinstance(items, Registry):
            return items
        tools: dict[str, Tool] = {}
        definitions: dict[str, AgentDefinition] = {}
        for item in items or ():
            if isinstance(item, AgentDefinition):
                definitions[item.name] = item
            elif isinstance(item, Tool):
                tools[item.name] = item
            elif isinstance(item, Tools):
                tools.update({name: item[name] for name in item})
            else:
                raise ConfigurationError(
                    f"a registry holds Tools and AgentDefinitions, got {item!r}"
                )
        return cls(tools, definitions)

    def definition(self, name: str, near: str | None = None) -> AgentDefinition | None:
        """The definition named ``name``: registered, or a file ``name.md|toml|yaml|yml``
        beside ``near`` (the naming definition's file)."""
        found = self.definitions.get(name)
        if found is not None or near is None:
            return found
        for suffix in (".md", ".toml", ".yaml", ".yml"):
            candidate = Path(near).with_name(name + suffix)
            if candidate.is_file():
                return AgentDefinition.load(candidate)
        return None


# -- reading the formats ------------------------------------------------------------------------


def _read_toml(text: str, source: str) -> tuple[dict[str, Any], dict[str, int]]:
    nesting_checked(text, source)
    try:
        data = tomllib.loads(text)
    except RecursionError:
        raise too_deep(source, text) from None
    except tomllib.TOMLDecodeError as exc:
        match = re.search(r"line (\d+)", str(exc))
        raise DefinitionError(
            f"not valid TOML ({exc})", file=source, line=int(match.group(1)) if match else None
        ) from None
    except ValueError:  # tomllib's int() of a number past Python's limit of digits
        problem = "not valid TOML (an integer of more than 4,300 digits, past what Python reads)"
        raise DefinitionError(problem, file=source) from None
    lines: dict[str, int] = {}
    for number, line in enumerate(text.split("\n"), start=1):  # as TOML counts lines
        key = re.match(r"\s*\[?\s*([A-Za-z0-9_-]+)\s*[=\]]", line)
        if key and key.group(1) not in lines:
            lines[key.group(1)] = number
    return data, lines


def _checked_definition(
    data: dict[str, Any], lines: dict[str, int], source: str
) -> AgentDefinition:
    fields = {f.name for f in attrs.fields(AgentDefinition)} - {"source"}
    return AgentDefinition(**check_fields(data, lines, source, fields), source=source)
