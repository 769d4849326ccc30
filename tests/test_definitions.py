"""Agent definitions: TOML, YAML and Markdown files → AgentDefinition → a loop."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from llm_server import LLMServer, answer

from agents import ExecutionStatus, Role, ToolCall, tool
from agents.definitions import AgentDefinition, DefinitionError, Registry
from agents.evals import Dataset, DatasetError
from agents.testing import FunctionDriver, ScriptedDriver, SequentialIds, call, reply

ROOT = Path(__file__).resolve().parent.parent
KINDS = {"toml": ".toml", "yaml": ".yaml", "markdown": ".md"}

FULL = AgentDefinition(
    name="support",
    description="Answers customers.",
    system_prompt='You are "helpful".\nBe brief: one line.',
    model="openai/gpt-test",
    llm_options={"api_base": "http://127.0.0.1:1/v1", "temperature": 0.2},
    tools=["lookup", "refund"],
    deny_tools=["refund"],
    max_steps=7,
    max_tokens=5000,
    max_cost=0.5,
    time_limit=30.0,
    tool_execution="sequential",
    subagents=["researcher"],
    max_depth=2,
    context_window=6000,
    max_message_tokens=4000,
    max_buffer_tokens=0,
    summary_model="openai/gpt-small",
)


@tool
def lookup(order: str) -> str:
    """Look an order up.

    Args:
        order: the order id
    """
    return f"{order}: shipped"


@tool
def refund(order: str) -> str:
    """Refund an order.

    Args:
        order: the order id
    """
    return "refunded"


@pytest.mark.parametrize("kind", KINDS)
def test_every_format_round_trips(kind, tmp_path):
    text = FULL.to_text(kind)
    assert AgentDefinition.from_text(text, kind) == FULL
    path = tmp_path / f"support{KINDS[kind]}"
    path.write_text(text)
    loaded = AgentDefinition.load(path)
    assert loaded == FULL and loaded.source == str(path)
    minimal = AgentDefinition(name="tiny")
    assert AgentDefinition.from_text(minimal.to_text(kind), kind) == minimal


def test_yaml_reads_yes_no_and_times_as_text_and_writes_what_reads_back():
    """YAML files are read by YAML 1.2's core schema: PyYAML's YAML 1.1 rules made
    ``no`` false, ``1:20`` eighty, ``012`` ten and ``2024-01-01`` a date (a load error).
    Text that 1.2 reads as a number (``1e3``, ``0o12``) is written quoted."""
    text = (
        "name: plain\ndescription: 2024-01-01\nmodel: no\n"
        "llm_options: {stop: [on, off, 1:20], seed: 012, top_k: 0o12, scale: 1e3, echo: true}\n"
    )
    definition = AgentDefinition.from_text(text, "yaml")
    assert (definition.description, definition.model) == ("2024-01-01", "no")
    options = dict(definition.llm_options)
    assert list(options.pop("stop")) == ["on", "off", "1:20"]
    assert options == {"seed": 12, "top_k": 10, "scale": 1000.0, "echo": True}
    numbers = AgentDefinition(name="n", description="1e3", llm_options={"v": "0o12"})
    for kind in ("yaml", "markdown"):
        assert AgentDefinition.from_text(numbers.to_text(kind), kind) == numbers


@pytest.mark.parametrize("kind", ["yaml", "toml"])
def test_a_number_past_pythons_limit_of_digits_is_a_definition_error(kind, tmp_path):
    """An integer of 5,000 digits raised the bare ``ValueError`` of ``int()`` (Python reads
    at most 4,300 digits) out of the YAML and TOML readers, and of a YAML dataset."""
    huge = "9" * 5_000
    text = (
        f"name: a\nmax_steps: {huge}\n" if kind == "yaml" else f'name = "a"\nmax_steps = {huge}\n'
    )
    with pytest.raises(DefinitionError, match="4,300"):
        AgentDefinition.from_text(text, kind)
    if kind == "yaml":
        path = tmp_path / "cases.yaml"
        path.write_text(f"- name: a\n  input: x\n  expected: {huge}\n")
        with pytest.raises(DatasetError, match=r"cases\.yaml:3: .*5,000 digits"):
            Dataset.load(path)


def test_a_toml_error_names_its_line_past_a_unicode_line_break():
    """TOML strings may hold U+2028 raw; its lines were counted with ``str.splitlines``,
    which splits there too, and the error named the line after the right one."""
    with pytest.raises(DefinitionError, match=r"<text>:2: max_steps"):
        AgentDefinition.from_text('name = "a\u2028b"\nmax_steps = "ten"\n', "toml")


@pytest.mark.parametrize("kind", KINDS)
def test_a_definition_written_to_a_file_holds_no_credential(kind):
    """``llm_options`` holding an API key and an ``Authorization`` header: ``to_text``
    writes them ``"[redacted]"`` (as ``to_json`` does), in every format; they were written
    in clear, into the file a user saves and commits. The rest reads back as it was."""
    key, token = "sk-planted-definition-key-1212", "planted-definition-token-3434"
    options = {"api_key": key, "extra_headers": {"Authorization": f"Bearer {token}"}, "top_p": 1}
    definition = AgentDefinition(name="keyed", model="openai/x", llm_options=options)
    text = definition.to_text(kind)
    assert key not in text and token not in text
    back = AgentDefinition.from_text(text, kind)
    assert back.llm_options["api_key"] == "[redacted]"
    assert back.llm_options["extra_headers"]["Authorization"] == "[redacted]"
    assert back.llm_options["top_p"] == 1 and back.model == "openai/x"
    assert key not in definition.to_json() and key not in repr(definition)


def test_markdown_takes_the_system_prompt_from_its_body():
    text = "---\nname: writer\nmodel: openai/x\n---\n\nYou write.\n\nShort texts only.\n"
    definition = AgentDefinition.from_text(text, "markdown")
    assert definition.system_prompt == "You write.\n\nShort texts only."
    assert definition.tools is None  # every tool of the registry


@pytest.mark.parametrize(
    ("kind", "text", "line", "field", "message"),
    [
        ("toml", 'name = "a"\nmodle = "x"\n', 2, "modle", "unknown field"),
        ("yaml", "name: a\nmax_steps: ten\n", 2, "max_steps", "expected a positive integer"),
        ("markdown", "---\nname: a\ntools: lookup\n---\nHi\n", 3, "tools", "list of tool names"),
        ("toml", 'description = "no name"\n', None, "name", "missing field"),
        ("toml", 'name = "a"\nmax_cost = "cheap"\n', 2, "max_cost", "a positive number"),
        ("yaml", "name: a\ntool_execution: random\n", 2, "tool_execution", "parallel or"),
        ("markdown", "---\nname: a\nsystem_prompt: x\n---\nbody\n", 3, "system_prompt", "not both"),
        ("toml", 'name = "a"\nmax_buffer_tokens = -1\n', 2, "max_buffer_tokens", ">= 0"),
        ("yaml", "name: a\nmax_message_tokens: 900\n", 2, "max_message_tokens", "needs max_buffer"),
        ("toml", 'name = "a"\ncontext_window = 0\n', 2, "context_window", "positive number"),
    ],
)
def test_malformed_definitions_name_the_file_the_line_and_the_field(
    kind, text, line, field, message, tmp_path
):
    path = tmp_path / f"agent{KINDS[kind]}"
    path.write_text(text)
    with pytest.raises(DefinitionError) as info:
        AgentDefinition.load(path)
    error = info.value
    assert (error.file, error.line, error.field) == (str(path), line, field)
    assert message in str(error)
    assert str(error).startswith(f"{path}{':' + str(line) if line else ''}: {field}: ")


@pytest.mark.parametrize(
    ("name", "text", "line", "message"),
    [
        ("bad.toml", 'name = "a"\nmax_steps = \n', 2, "not valid TOML"),
        ("bad.yaml", "name: a\n  - broken: [\n", 2, "not valid YAML"),
        ("bad.md", "name: a\n", 1, "front matter"),
        ("list.yaml", "- name: a\n", 1, "expected a mapping"),
        ("agent.json", "{}", None, "not a definition file"),
    ],
)
def test_unreadable_files_are_definition_errors(name, text, line, message, tmp_path):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(DefinitionError) as info:
        AgentDefinition.load(path)
    assert info.value.line == line and message in str(info.value)
    with pytest.raises(DefinitionError, match="cannot read it"):
        AgentDefinition.load(tmp_path / "missing.md")


def test_build_keeps_the_context_small_as_the_definition_says():
    definition = AgentDefinition(
        name="long",
        context_window=3000,
        max_message_tokens=2000,
        max_buffer_tokens=500,
        summary_model="openai/small",
    )
    loop, _ = definition.build([], driver=ScriptedDriver([]))
    assert repr(loop.message_compiler) == "TokenWindowCompiler(3000)"
    assert repr(loop.compaction) == "Summarization(2000, 500)"
    assert loop.compaction.model == "openai/small"
    plain, _ = AgentDefinition(name="short").build([], driver=ScriptedDriver([]))
    assert plain.message_compiler is None and plain.compaction is None
    with pytest.raises(DefinitionError, match="max_buffer_tokens: max_message_tokens and"):
        AgentDefinition(name="x", max_message_tokens=10).build([], driver=ScriptedDriver([]))


def test_build_takes_tools_from_the_registry_and_applies_the_limits():
    definition = AgentDefinition(
        name="support",
        system_prompt="Help.",
        tools=["lookup", "refund"],
        deny_tools=["refund"],
        max_steps=4,
    )
    driver = ScriptedDriver([call("lookup", order="A1"), reply("A1 has shipped.")])
    loop, state = definition.build([lookup, refund], driver=driver, ids=SequentialIds())
    assert list(loop.tools) == ["lookup"] and loop.max_steps == 4
    assert state.context.system_prompt == "Help."
    final = loop.run(state.with_user_message("Where is A1?"))
    assert final.final_response == "A1 has shipped."
    with pytest.raises(DefinitionError, match=r"tools: unknown tools \['nope'\]"):
        AgentDefinition(name="x", tools=["nope"]).build([lookup], driver=driver)
    with pytest.raises(DefinitionError, match="model: no model"):
        AgentDefinition(name="x").build([lookup])


def test_sub_agents_come_from_the_registry_or_the_files_beside_the_definition(tmp_path):
    (tmp_path / "researcher.md").write_text(
        "---\nname: researcher\ndescription: Looks things up.\ntools: [lookup]\n---\nResearch.\n"
    )
    (tmp_path / "lead.toml").write_text(
        'name = "lead"\ntools = []\nsubagents = ["researcher", "ghost"]\n'
    )
    lead = AgentDefinition.load(tmp_path / "lead.toml")

    def model(request):
        users = [m.content for m in request.messages if m.role is Role.USER]
        tools = [m for m in request.messages if m.role is Role.TOOL]
        if request.messages[0].content == "Research.":  # the researcher
            if not tools:
                return [ToolCall(id="l", name="lookup", arguments={"order": users[0]})]
            return f"found: {tools[-1].content}"
        if not tools:
            return [
                ToolCall(id="r", name="researcher", arguments={"task": "B2"}),
                ToolCall(id="g", name="ghost", arguments={"task": "boo"}),
            ]
        return "; ".join(m.content for m in tools)

    loop, state = lead.build(Registry.of([lookup]), driver=lambda d: FunctionDriver(model))
    assert sorted(loop.tools) == ["ghost", "researcher"]
    final = loop.run(state.with_user_message("go"))
    assert final.status is ExecutionStatus.COMPLETED
    researcher, ghost = final.tool_executions
    assert researcher.value == "found: B2: shipped"
    assert researcher.child.context.system_prompt == "Research."
    assert ghost.failed and "unknown sub-agent 'ghost'" in ghost.error.message
    registered = AgentDefinition(name="researcher", system_prompt="Research.", tools=["lookup"])
    loop, _ = AgentDefinition(name="lead", tools=[], subagents=["researcher"]).build(
        Registry.of([lookup, registered]), driver=lambda d: FunctionDriver(model)
    )
    assert list(loop.tools) == ["researcher"]


def test_agents_run_takes_a_definition_file(tmp_path):
    """``agents run agent.md --input ...`` against a local chat-completions server."""
    with LLMServer() as server:
        server.plan(answer("Hello from the definition!"))
        agent = tmp_path / "greeter.md"
        agent.write_text(
            "---\nname: greeter\nmodel: openai/test-model\nllm_options:\n"
            f"  api_base: {server.base_url}\n  api_key: not-a-real-key\n---\nYou greet.\n"
        )
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "agents",
                "run",
                str(agent),
                "--input",
                "hi",
                "--out",
                str(tmp_path / "run.jsonl"),
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr
        sent = server.requests[0]["messages"]
    assert sent[0] == {"role": "system", "content": "You greet."}
    assert sent[1] == {"role": "user", "content": "hi"}
    assert "final response: Hello from the definition!" in result.stdout
    assert (tmp_path / "run.jsonl").exists()


def test_agents_run_reports_a_bad_definition_in_one_line(tmp_path):
    agent = tmp_path / "bad.yaml"
    agent.write_text("name: x\nmax_depth: 0\n")
    result = subprocess.run(
        [sys.executable, "-m", "agents", "run", str(agent), "--out", str(tmp_path / "r.jsonl")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert result.stderr == (
        f"agents run: {agent}:2: max_depth: expected an integer >= 1, got int\n"
    )
    assert not (tmp_path / "r.jsonl").exists()
