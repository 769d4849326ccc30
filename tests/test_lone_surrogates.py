"""Text that is not Unicode: a lone surrogate, which Python text holds wherever bytes were
decoded with ``surrogateescape`` (a file name from ``os.listdir``, a command-line argument
that is not UTF-8) or JSON said ``"\\ud800"``. A run keeps it like any text, and everything
that writes records writes it as JSON's escape, which reads back as the same character: the
codec, audit logs, recorded inferences, run files and the command line (the session stores:
``tests/test_sessions.py``; the HTTP API: ``tests/test_serve.py``).
(Before, an audited run of a tool returning such a file name failed, and a store, a run
file or the command line raised ``UnicodeEncodeError``.)"""

from __future__ import annotations

import json

import pytest
from helpers import agents_cli, initial, make_loop

from agents import (
    AgentState,
    AuditLog,
    tool,
)
from agents.drivers.replay import RecordingInterceptor
from agents.records.json_text import dumps, loads
from agents.testing import call, reply

FILE_NAME = b"report-\xff.txt".decode("utf-8", "surrogateescape")  # as os.listdir gives it
REPLY = "found \ud800 it"  # as json.loads('"\\ud800"') gives it


@tool
def newest_file() -> str:
    """The newest file's name."""
    return FILE_NAME


def loop(**options):
    return make_loop(call("newest_file"), reply(REPLY), tools=[newest_file], **options)


def user_message() -> AgentState:
    return initial("which file? \udcfe")


def test_json_text_escapes_lone_surrogates_and_reads_them_back():
    from agents.records.json_text import utf8_safe

    data = {"name": FILE_NAME, "reply": REPLY, "plain": "é ✓"}
    text = dumps(data)
    assert text.encode("utf-8")  # UTF-8 holds it
    assert "\\udcff" in text and "\\ud800" in text and "é ✓" in text  # the rest as it is
    assert loads(text) == data
    assert utf8_safe("plain é") == "plain é"


def test_a_run_holding_lone_surrogates_encodes_as_utf8_and_reads_back():
    final = loop().run(user_message())
    assert final.final_response == REPLY
    assert final.context.store.messages[2].content == FILE_NAME
    text = final.to_json()
    text.encode("utf-8")
    assert AgentState.from_json(text) == final
    assert AgentState.from_json(text.encode("utf-8")).to_json() == text


def test_an_audited_run_of_such_a_tool_completes_and_verifies(tmp_path):
    path = tmp_path / "run.jsonl"
    with AuditLog.open(path) as log:
        final = loop().with_listeners(log).run(user_message())
    assert final.status.value == "completed", final.execution.error
    assert AuditLog.verify(path) == 4
    path.read_bytes().decode("utf-8")  # strict UTF-8
    replayed = agents_cli("replay", str(path), cwd=tmp_path)
    assert replayed.returncode == 0, replayed.stderr


def test_recorded_inferences_hash_and_write_such_requests(tmp_path):
    with RecordingInterceptor(tmp_path / "inferences.jsonl") as recorder:
        final = loop(interceptors=[recorder]).run(user_message())
    assert final.status.value == "completed", final.execution.error
    lines = (tmp_path / "inferences.jsonl").read_text(encoding="utf-8").splitlines()
    assert [len(json.loads(line)["request_hash"]) for line in lines] == [64, 64]
    assert json.loads(lines[1])["request"]["messages"][-1]["content"] == FILE_NAME


def test_the_command_line_takes_an_argument_that_is_not_utf8(tmp_path):
    """``agents run --input`` with bytes that are not UTF-8 (Python reads them as lone
    surrogates): the run completes, its audit log verifies, and every command shows the
    text as escapes, never a traceback."""
    module = tmp_path / "surrogate_agent.py"
    module.write_text(
        "from agents import tool\n"
        "from agents.testing import ScriptedDriver, call, reply\n"
        "from agents import AgentLoop\n"
        "@tool\n"
        "def newest_file() -> str:\n"
        '    """The newest file\'s name."""\n'
        f"    return {FILE_NAME!r}\n"
        f"loop = AgentLoop(ScriptedDriver([call('newest_file'), reply({REPLY!r})]),"
        " tools=[newest_file])\n",
        encoding="utf-8",
    )
    argument = b"which \xff?".decode("utf-8", "surrogateescape")
    env = {"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"}
    ran = agents_cli(
        "run", "surrogate_agent:loop", "--input", argument, "--out", "run.jsonl",
        cwd=tmp_path, env=env,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert "found \\ud800 it" in ran.stdout
    for command in (["verify"], ["inspect"], ["replay"], ["report", "--out", "r.html"]):
        done = agents_cli(command[0], "run.jsonl", *command[1:], cwd=tmp_path, env=env)
        assert done.returncode == 0, (command, done.stderr)
        assert "Traceback" not in done.stderr
    assert "report-\\udcff.txt" in (tmp_path / "r.html").read_text(encoding="utf-8")


def test_a_definition_with_one_writes_files_utf8_holds_or_says_why_not(tmp_path):
    """A definition whose system prompt holds one (read from JSON's escape): YAML and
    Markdown write it as YAML's escape and read it back equal, so the file can be written;
    TOML, which escapes only Unicode's characters, refuses with the field's name (before,
    Markdown and TOML wrote it raw and writing the file raised ``UnicodeEncodeError``)."""
    from agents.definitions import AgentDefinition

    definition = AgentDefinition.from_text(
        'name: odd\nsystem_prompt: "Read \\udcff files."\n', "yaml"
    )
    assert definition.system_prompt == "Read \udcff files."
    for kind, suffix in (("yaml", "yaml"), ("markdown", "md")):
        path = tmp_path / f"odd.{suffix}"
        path.write_text(definition.to_text(kind), encoding="utf-8")
        back = AgentDefinition.from_text(path.read_text(encoding="utf-8"), kind)
        assert back.system_prompt == definition.system_prompt
    with pytest.raises(ValueError, match=r"'system_prompt'.*lone surrogate"):
        definition.to_text("toml")
