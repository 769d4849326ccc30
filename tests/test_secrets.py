"""Planted secrets (docs/design/events.md): credentials in every form the library takes
never show in a repr, a str, ``describe()``, an error or its chained causes, a log line
(structlog and stdlib at DEBUG), an event, a stored state, a session row or an audit log."""

from __future__ import annotations

import io
import json
import logging
import os
import re
import sqlite3
from pathlib import Path

import pytest
from helpers import add, initial, make_loop
from llm_server import LLMServer, fault, tool_calls
from structlog.testing import capture_logs

from agents import (
    AgentLoop,
    AgentState,
    AuditLog,
    InferenceRequest,
    LiteLLMDriver,
    Message,
    PostgresSessionStore,
    ProviderError,
    Role,
    SessionRuntime,
    SQLiteSessionStore,
    StateDecodeError,
    ToolCall,
)
from agents.mcp import MCPServerStdio
from agents.testing import SequentialIds, TickingClock, capture_events, reply

API_KEY = "sk-planted-api-key-1111"
BEARER = "planted-bearer-token-2222"
HEADER_KEY = "planted-api-key-header-3333"
X_API_KEY = "planted-x-api-key-4444"
ENV_KEY = "sk-planted-env-key-5555"
PG_PASSWORD = "planted-pg-password-6666"
PG_URL_PASSWORD = "planted-pg-url-password-7777"
PG_ENV_PASSWORD = "planted-pg-env-password-8888"
SECRETS = [
    API_KEY,
    BEARER,
    HEADER_KEY,
    X_API_KEY,
    ENV_KEY,
    PG_PASSWORD,
    PG_URL_PASSWORD,
    PG_ENV_PASSWORD,
]


def leaks(text: str) -> list[str]:
    """The planted secrets found in ``text``."""
    return [secret for secret in SECRETS if secret in text]


def chain(exc: BaseException | None) -> str:
    """An exception, its args and every cause and context, as text."""
    seen = []
    while exc is not None and exc not in seen:
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__
    return "\n".join(
        f"{e!r} {e} {e.args!r} {vars(e) if hasattr(e, '__dict__') else ''}" for e in seen
    )


@pytest.fixture
def debug_logs():
    """Every stdlib logger at DEBUG into one buffer (litellm's and openai's included)."""
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setLevel(logging.DEBUG)
    handler.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
    root = logging.getLogger()
    levels = {name: logging.getLogger(name).level for name in logging.root.manager.loggerDict}
    previous = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm", "openai", "httpx"):
        logging.getLogger(name).setLevel(logging.DEBUG)
        logging.getLogger(name).addHandler(handler)
    yield buffer
    root.removeHandler(handler)
    root.setLevel(previous)
    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm", "openai", "httpx"):
        logging.getLogger(name).removeHandler(handler)
    for name, level in levels.items():
        logging.getLogger(name).setLevel(level)


def test_model_credentials_never_show(tmp_path, monkeypatch, debug_logs, capsys):
    """An API key, headers of any case and an environment key, through a real run against
    a server that echoes them in its error: nothing anywhere shows them."""
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    with LLMServer() as server:
        server.plan(
            tool_calls(("c1", "add", {"a": 1, "b": 2})),
            fault(401, message=f"Incorrect API key provided: {API_KEY} (Bearer {BEARER})"),
            fault(401, message=f"Incorrect API key provided: {ENV_KEY}"),
        )
        driver = LiteLLMDriver(
            "openai/test-model",
            api_base=server.base_url,
            api_key=API_KEY,
            extra_headers={
                "Authorization": f"Bearer {BEARER}",
                "api-key": HEADER_KEY,
                "X-Api-Key": X_API_KEY,
            },
            num_retries=0,
        )
        store = SQLiteSessionStore(tmp_path / "sessions.db")
        recorder = capture_events()
        audit = AuditLog.open(tmp_path / "run.jsonl")

        def make(_session):
            return AgentLoop(
                driver,
                tools=[add],
                clock=TickingClock(),
                ids=SequentialIds(),
                listeners=[audit, recorder],
            )

        with capture_logs() as structured:
            runtime = SessionRuntime(store, make)
            session = runtime.create(initial("add 1 and 2"))
            final = runtime.send(session.session_id, "go on").state
            # The environment's key, used by litellm when the driver is given none.
            env_driver = LiteLLMDriver("openai/test-model", api_base=server.base_url, num_retries=0)
            with pytest.raises(ProviderError) as raised:
                env_driver.infer(InferenceRequest(messages=[Message.user("hi")], tools=()))
        audit.close()
        sent = {k.lower(): v for k, v in server.headers[0].items()}
        assert sent["authorization"] == f"Bearer {BEARER}"  # it was sent
    assert final.status.value == "failed"
    assert "[redacted]" in final.execution.error.message

    texts = {
        "repr(driver)": repr(driver),
        "str(driver)": str(driver),
        "driver.describe()": json.dumps(driver.describe()),
        "loop.describe()": json.dumps(make(None).describe(), default=str),
        "state": final.to_json(),
        "error": chain(raised.value),
        "events": "\n".join(repr(event) for event in recorder.events),
        "audit log": (tmp_path / "run.jsonl").read_text(encoding="utf-8"),
        "structlog": repr(structured),
        "stdlib logs": debug_logs.getvalue(),
        "output": "".join(capsys.readouterr()),
    }
    with sqlite3.connect(tmp_path / "sessions.db") as db:
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        texts["session rows"] = repr(
            [list(db.execute(f"SELECT * FROM {table}")) for table in tables]
        )
    for path in tmp_path.iterdir():
        texts[f"file {path.name}"] = path.read_bytes().decode("utf-8", "replace")
    assert "ProviderError" in texts["error"]
    assert texts["stdlib logs"], "DEBUG logging captured nothing: the check would be empty"
    found = {where: leaks(text) for where, text in texts.items() if leaks(text)}
    assert found == {}


def _dsns(database: str) -> list[str]:
    """The test server's database as a key=value DSN and as a URL, each with a password
    (trust authentication ignores it)."""
    host, port = "127.0.0.1", "5432"
    return [
        f"host={host} port={port} dbname={database} user=postgres password={PG_PASSWORD}",
        f"postgresql://postgres:{PG_URL_PASSWORD}@{host}:{port}/{database}",
    ]


def test_database_passwords_never_show(postgres_database, monkeypatch, debug_logs):
    """A PostgreSQL password in a DSN of either form, or in ``PGPASSWORD``: not in the
    store's repr or ``path``, nor in the error when the connection fails."""
    database = postgres_database.rsplit("/", 1)[1]
    monkeypatch.setenv("PGPASSWORD", PG_ENV_PASSWORD)
    texts = {}
    for index, dsn in enumerate(_dsns(database)):
        store = PostgresSessionStore(dsn)
        texts[f"repr {index}"] = repr(store) + store.path
        store.create(initial())
        store.close()
        unreachable = dsn.replace("5432", "1")
        with pytest.raises(StateDecodeError) as raised:
            PostgresSessionStore(unreachable)
        texts[f"error {index}"] = chain(raised.value)
        assert "cannot use the database" in str(raised.value)
    texts["logs"] = debug_logs.getvalue()
    found = {where: leaks(text) for where, text in texts.items() if leaks(text)}
    assert found == {}


def test_redaction_knows_every_form():
    """The helpers behind the checks above, on the forms a user may write."""
    from agents.records.redaction import dsn_secrets, environment_secrets, redacted_dsn, scrub

    assert PG_PASSWORD not in redacted_dsn(f"host=h password='{PG_PASSWORD}' user=u")
    assert PG_PASSWORD in dsn_secrets(f"host=h password='{PG_PASSWORD}' user=u")
    assert PG_PASSWORD not in redacted_dsn(f"postgresql://h/db?password={PG_PASSWORD}&x=1")
    assert environment_secrets({"HF_TOKEN": BEARER, "HOME": "/root/somewhere"}) == (BEARER,)
    assert scrub(f"Authorization: Bearer {BEARER}") == "Authorization: Bearer [redacted]"


def test_a_maps_keys_are_written_in_text_order_with_its_secrets_redacted():
    """``redact`` writes a map's keys sorted as text whatever their type (``10`` before
    ``9``; of ``1`` and ``"1"`` the later wins), a frozen map's as a plain one's, and the
    value under a secret key as ``[redacted]`` in both."""
    from pyrsistent import pmap

    from agents.records.redaction import REDACTED, redact

    texts = {"b": 1, "api_key": BEARER, "a": {"token": BEARER, "z": [1]}, "A": None}
    written = {"A": None, "a": {"token": REDACTED, "z": [1]}, "api_key": REDACTED, "b": 1}
    for value in (texts, pmap(texts)):
        found = redact(value)
        assert found == written
        assert list(found) == ["A", "a", "api_key", "b"]
        assert list(found["a"]) == ["token", "z"]
    mixed = redact({9: "nine", "password": BEARER, 10: "ten", 1: "int", "1": "text"})
    assert list(mixed.items()) == [
        ("1", "text"),
        ("10", "ten"),
        ("9", "nine"),
        ("password", REDACTED),
    ]


PAIR_PASSWORD = "planted-pair-password-5656"
PAIR_KEY = "planted-pair-json-key-7878"
QUERY_KEY = "AIzaPlantedQueryKey9090"


def test_secrets_named_in_a_texts_pairs_are_redacted_and_prose_is_kept():
    """A value under a secret name in an error's text — ``password=…`` (a configuration
    line), ``"api_key": "…"`` (a request echoed as JSON), ``?key=…`` (a URL's query) — was
    kept whole; a word like "key-value-store" was redacted as if it were a key."""
    from agents import FunctionDriver, tool
    from agents.records.redaction import scrub

    assert scrub("use a key-value-store; the api-key-rotation-policy") == (
        "use a key-value-store; the api-key-rotation-policy"
    )
    assert scrub("key-3ax6xnjp29jd6fds4gc373sgvjxteol0 and sk-do-not-send-me") == (
        "[redacted] and [redacted]"
    )
    assert scrub("host=db password=hunter2 user=u") == "host=db password=[redacted] user=u"
    assert scrub("GET /v1/x:go?key=AIzaSy-12&alt=sse") == "GET /v1/x:go?key=[redacted]&alt=sse"
    assert scrub('sent {"api_key": "a\\"b", "model": "m"}') == (
        'sent {"api_key": "[redacted]", "model": "m"}'
    )
    assert scrub("{'client_secret': 'zz', 'secrets': 2}") == (
        "{'client_secret': '[redacted]', 'secrets': 2}"
    )
    assert scrub("OPENAI_API_KEY='quoted value' x") == "OPENAI_API_KEY='[redacted]' x"
    for kept in ("max_tokens=5 tokens=3", "key=value in prose", "a key: 2", '{"token": 5}'):
        assert scrub(kept) == kept
    # A header as a raw request shows it ("Name: value"), a scheme kept before its
    # credential; provider keys by their shape (Google, AWS, Groq, Hugging Face, xAI).
    assert scrub("x-goog-api-key: AIzaPlanted1 sent") == "x-goog-api-key: [redacted] sent"
    assert scrub("Authorization: Token abc123") == "Authorization: Token [redacted]"
    assert scrub("Cookie: session=s3cret; a=1") == "Cookie: [redacted]; a=1"
    shaped = [
        "AIza" + "SyD-planted0123456789abcdefghijklmn",
        "AKIA" + "IOSFODNN7EXAMPLE",
        "gsk_" + "planted0123456789abcdefgh",
        "hf_" + "planted0123456789abcdefghijklmnopq",
        "xai-" + "planted0123456789abcdefgh",
        "ghp_" + "planted0123456789abcdefghijklmnopq",
        "xoxb-" + "1234567890-planted",
    ]
    assert scrub(f"keys {' '.join(shaped)} end") == "keys" + " [redacted]" * 7 + " end"
    for kept in (
        "the AKIA prefix",
        "AIzaShort",
        "hf_token",
        "max_tokens: 5",
        "password: too short",
        "unexpected token: '}' at 3",
    ):
        assert scrub(kept) == kept
    # A signed URL's signature and credential (S3, Google Cloud Storage, CloudFront, Azure),
    # in a URL's query only: elsewhere a "signature" is an e-mail's.
    assert scrub("u?X-Amz-Credential=AKIA1&X-Amz-Date=2&X-Amz-Signature=fe5f") == (
        "u?X-Amz-Credential=[redacted]&X-Amz-Date=2&X-Amz-Signature=[redacted]"
    )
    assert scrub("u?X-Goog-Signature=0a&sv=2021&sig=abc%3D&Signature=x~") == (
        "u?X-Goog-Signature=[redacted]&sv=2021&sig=[redacted]&Signature=[redacted]"
    )
    for kept in ("signature=mine", "the sig: 5", "credential=x in prose"):
        assert scrub(kept) == kept

    @tool
    def connect(host: str) -> str:
        """Connect to a host."""
        raise ConnectionError(
            f"{host} password={PAIR_PASSWORD} refused "
            f'{{"api_key": "{PAIR_KEY}"}} at https://h/v1?alt=sse&key={QUERY_KEY}'
        )

    @tool
    def store(name: str) -> str:
        """Store a value."""
        raise KeyError(f"no key-value-store named {name}")

    def model(request):
        if len(request.messages) == 2:
            return [
                ToolCall(id="c1", name="connect", arguments={"host": "h"}),
                ToolCall(id="c2", name="store", arguments={"name": "cache"}),
            ]
        return "done"

    final = AgentLoop(FunctionDriver(model), tools=[connect, store]).run(initial())
    refused, missing = final.tool_executions
    assert "password=[redacted]" in refused.error.message
    assert '{"api_key": "[redacted]"}' in refused.error.message
    assert refused.error.message.endswith("&key=[redacted]")
    assert missing.error.message == "'no key-value-store named cache'"
    for text in (final.to_json(), repr(final)):
        assert not [s for s in (PAIR_PASSWORD, PAIR_KEY, QUERY_KEY) if s in text]


URL_PASSWORD = "planted-url-password-2323"


def test_a_urls_password_never_shows():
    """A password in a URL's user information (``http://user:password@host``), as a
    driver's ``api_base`` holds it, was shown whole by its repr and ``describe()``."""
    from agents.records.redaction import scrub

    assert scrub(f"at https://me:{URL_PASSWORD}@h/v1 and ftp://x@h") == (
        "at https://me:[redacted]@h/v1 and ftp://x@h"
    )
    driver = LiteLLMDriver("openai/m", api_base=f"http://me:{URL_PASSWORD}@127.0.0.1:9/v1")
    shown = repr(driver) + json.dumps(driver.describe())
    assert URL_PASSWORD not in shown and "http://me:[redacted]@127.0.0.1:9/v1" in shown


def test_the_commands_one_line_never_shows_a_credential(tmp_path):
    """A module that fails as the command imports it, naming a password, a URL's password,
    a key and the environment's secret: the command's one line showed them all."""
    import subprocess
    import sys

    planted = {
        "password": "planted-import-password-4141",
        "url": "planted-import-url-password-4242",
        "env": "planted-import-env-token-4343",
    }
    (tmp_path / "leaky.py").write_text(
        "import os\n"
        f"raise ValueError('connecting with password={planted['password']} to "
        f"http://me:{planted['url']}@db/x as ' + os.environ['SERVICE_TOKEN'])\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "agents", "run", "leaky:loop"],
        cwd=tmp_path,
        env={**os.environ, "SERVICE_TOKEN": planted["env"], "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (
        "agents run: cannot load leaky:loop: ValueError: connecting with "
        "password=[redacted] to http://me:[redacted]@db/x as [redacted]\n"
    )


TOOL_KEY = "sk-planted-tool-value-9999"
TOOL_ERROR_KEY = "sk-planted-tool-error-0000"
CALL_PASSWORD = "planted-call-password-1212"
MESSAGE_TOKEN = "planted-message-token-3434"
PLANTED = (TOOL_KEY, TOOL_ERROR_KEY, CALL_PASSWORD, MESSAGE_TOKEN)


def test_what_tools_return_or_raise_never_shows_its_secrets(tmp_path, debug_logs):
    """A tool returning a secret under a secret key, one raising an error naming a
    key-shaped secret, a call's password and a message's token: the model is never sent the
    first two (the tool's message is its value rendered with the secret redacted, the error
    scrubbed), and no state, repr, event, audit log or log line holds any of them;
    regressing the recorded run finds it the same, both ways."""
    from agents import FunctionDriver, tool
    from agents.testing import regress

    @tool
    def credentials(user: str, password: str) -> dict[str, str]:
        """The user's credentials."""
        return {"user": user, "api_key": TOOL_KEY}

    @tool
    def connect(host: str) -> str:
        """Connect to a host."""
        raise ValueError(f"{host} refused the key {TOOL_ERROR_KEY}")

    def agent(model):
        return AgentLoop(
            FunctionDriver(model),
            tools=[credentials, connect],
            clock=TickingClock(),
            ids=SequentialIds(),
        )

    sent = []

    def model(request):
        sent.append(json.dumps([m.content for m in request.messages]))
        step = (len(request.messages) - 2) // 2
        if step == 0:
            arguments = {"user": "u", "password": CALL_PASSWORD}
            return [ToolCall(id="c1", name="credentials", arguments=arguments)]
        if step == 1:
            return [ToolCall(id="c2", name="connect", arguments={"host": "h"})]
        return "done"

    recorder = capture_events()
    with capture_logs() as structured, AuditLog.open(tmp_path / "run.jsonl") as audit:
        asked = Message(role=Role.USER, content="log in", metadata={"token": MESSAGE_TOKEN})
        start = AgentState.initial("You log in.", messages=[asked])
        final = agent(model).with_listeners(audit, recorder).run(start)
    assert final.status.value == "completed"
    got, refused = final.tool_executions
    assert got.value["api_key"] == TOOL_KEY  # the program has it
    assert final.context.store.messages[2].content == '{"api_key": "[redacted]", "user": "u"}'
    assert "[redacted]" in refused.error.message
    texts = {
        "requests": "\n".join(sent),
        "state": final.to_json(),
        "repr(state)": repr(final),
        "events": "\n".join(repr(event) for event in recorder.events),
        "audit log": (tmp_path / "run.jsonl").read_text(encoding="utf-8"),
        "structlog": repr(structured),
        "stdlib logs": debug_logs.getvalue(),
    }
    assert "[redacted]" in repr(got) and TOOL_KEY in got.value.values()
    found = {where: [s for s in PLANTED if s in text] for where, text in texts.items()}
    assert {where: hits for where, hits in found.items() if hits} == {}
    for tools in ("record", "live"):
        report = regress(agent(model), [tmp_path / "run.jsonl"], tools=tools)
        assert report.ok, report.summary()


LISTENER_KEY = "sk-planted-listener-key-9999"
LISTENER_BEARER = "planted-listener-bearer-1010"


def test_a_failing_listener_never_shows_the_secrets_its_error_names(debug_logs):
    """A listener (a webhook, an exporter) failing with an error that names a key or a
    bearer credential: the warning logged for a non-critical one, and the error a critical
    one fails the run with (kept in the state, its events and logs), say it redacted."""

    class Webhook:
        critical = False

        def __init__(self, critical: bool) -> None:
            self.critical = critical

        def __call__(self, event: object) -> None:
            raise ConnectionError(
                f"POST refused (Authorization: Bearer {LISTENER_BEARER}, key {LISTENER_KEY})"
            )

    recorder = capture_events()
    with capture_logs() as structured:
        shrugged = make_loop(reply("hi")).with_listeners(Webhook(False), recorder).run(initial())
        failed = make_loop(reply("hi")).with_listeners(Webhook(True), recorder).run(initial())
    assert shrugged.status.value == "completed"
    assert failed.status.value == "failed"
    assert failed.execution.error.type == "ListenerFailed"
    assert "[redacted]" in failed.execution.error.message
    assert any(entry.get("event") == "listener_failed" for entry in structured)
    texts = {
        "state": failed.to_json(),
        "repr(state)": repr(failed),
        "events": "\n".join(repr(event) for event in recorder.events),
        "structlog": repr(structured),
        "stdlib logs": debug_logs.getvalue(),
    }
    planted = (LISTENER_KEY, LISTENER_BEARER)
    found = {where: [s for s in planted if s in text] for where, text in texts.items()}
    assert {where: hits for where, hits in found.items() if hits} == {}


DEFAULT_KEY = "sk-planted-default-key-5656"
DEFAULT_BEARER = "planted-default-bearer-7878"


def test_a_tools_secret_default_is_never_sent_to_the_model():
    """A tool whose parameters default to credentials (a parameter named ``api_key``, a
    headers map with ``Authorization``, a key-shaped text): its schema — sent to the
    provider with every request, shown by ``describe`` — leaves those defaults out (they
    were sent in clear); other defaults stay, and a call without the argument still gets
    the function's default."""
    from agents import FunctionDriver, tool

    @tool
    def fetch(
        url: str,
        api_key: str = DEFAULT_KEY,
        headers: dict[str, str] = {"Authorization": f"Bearer {DEFAULT_BEARER}"},  # noqa: B006
        auth: str = f"Bearer {DEFAULT_BEARER}",
        retries: int = 2,
    ) -> str:
        """Fetch a page."""
        return "ok" if api_key == DEFAULT_KEY and retries == 2 else "wrong default"

    sent = []

    def model(request):
        sent.append(json.dumps([dict(schema) for schema in request.tools], default=repr))
        if len(request.messages) == 2:
            return [ToolCall(id="c1", name="fetch", arguments={"url": "u"})]
        return "done"

    loop = AgentLoop(FunctionDriver(model), tools=[fetch])
    final = loop.run(initial())
    assert final.tool_executions[0].value == "ok"
    properties = fetch.parameters["properties"]
    assert properties["retries"]["default"] == 2
    assert all("default" not in properties[name] for name in ("api_key", "headers", "auth"))
    shown = "\n".join([*sent, str(loop.describe()), loop.describe_markdown(), final.to_json()])
    assert DEFAULT_KEY not in shown and DEFAULT_BEARER not in shown


SIGNATURE = "planted-url-signature-4545"


def test_a_signed_urls_signature_never_shows_where_a_part_is_shown(tmp_path):
    """A part sent by a signed URL keeps the URL whole (the model fetches it), but its
    repr and the HTML report showed the signature and credential that let anyone fetch it;
    both show them redacted, as errors and telemetry do."""
    from agents import ImagePart
    from agents.cli import main

    url = (
        "https://bucket.s3.amazonaws.com/x.png?X-Amz-Credential=AKIA-planted"
        f"&X-Amz-Date=20261206&X-Amz-Signature={SIGNATURE}"
    )
    part = ImagePart.from_url(url)
    assert part.url == url and SIGNATURE in part.to_json()  # kept: the model is sent it
    state = make_loop(reply("a cat")).run(initial().with_user_message(["what is this?", part]))
    assert "X-Amz-Signature=[redacted]" in repr(part)
    for shown in (repr(part), repr(state), repr(state.messages[-2])):
        assert SIGNATURE not in shown and "AKIA-planted" not in shown
    saved, page = tmp_path / "run.json", tmp_path / "run.html"
    saved.write_text(state.to_json(), encoding="utf-8")
    assert main(["report", str(saved), "-o", str(page)]) == 0
    html = page.read_text(encoding="utf-8")
    assert "X-Amz-Date=20261206" in html and SIGNATURE not in html and "AKIA-planted" not in html


def test_an_mcp_resources_uri_keeps_no_secret_as_the_parts_name():
    """An MCP server's embedded resource brings its bytes and a URI, which the part keeps
    as its name (in every state, log and session): a password or a signed query in the
    URI was kept with it."""
    import base64

    from mcp.types import BlobResourceContents, EmbeddedResource

    from agents.mcp.parts import parts_of

    uri = f"https://me:{URL_PASSWORD}@files.example/r.pdf?X-Amz-Signature={SIGNATURE}"
    pdf = base64.b64encode(b"%PDF-1.4 a report").decode()
    resource = BlobResourceContents(uri=uri, mimeType="application/pdf", blob=pdf)
    (part,) = parts_of([EmbeddedResource(type="resource", resource=resource)], str)
    assert part.name == "https://me:[redacted]@files.example/r.pdf"
    assert part.data() == b"%PDF-1.4 a report"


def test_an_mcp_servers_arguments_never_show_their_credentials():
    """Servers often take their credentials as arguments (a database URL, ``--api-key=K``,
    ``--token T``); the repr of a stdio server showed them whole."""
    from agents.mcp import MCPServerStdio

    server = MCPServerStdio(
        "npx",
        [
            "-y",
            "@modelcontextprotocol/server-postgres",
            f"postgresql://me:{URL_PASSWORD}@127.0.0.1/db",
            f"--api-key={PAIR_KEY}",
            "--token",
            QUERY_KEY,
            "--verbose",
        ],
    )
    shown = repr(server)
    assert not [s for s in (URL_PASSWORD, PAIR_KEY, QUERY_KEY) if s in shown], shown
    assert shown == (
        "MCPServerStdio('npx', ['-y', '@modelcontextprotocol/server-postgres', "
        "'postgresql://me:[redacted]@127.0.0.1/db', '--api-key=[redacted]', '--token', "
        "'[redacted]', '--verbose'])"
    )
    given = MCPServerStdio("python", [Path("server.py"), "--token", Path(QUERY_KEY)])  # paths
    assert repr(given) == "MCPServerStdio('python', ['server.py', '--token', '[redacted]'])"


def test_a_urls_password_in_a_map_never_shows_in_a_repr_or_a_written_definition():
    """A password in a URL held under a key that is no secret's (``llm_options``'
    ``api_base``) was shown by the definition's and the state's repr, and written into the
    file ``to_text`` makes, whose docstring promises no credential in a file."""
    from agents.definitions import AgentDefinition

    base = f"http://me:{URL_PASSWORD}@127.0.0.1:9/v1"
    definition = AgentDefinition.from_text(
        f"---\nname: g\nmodel: openai/m\nllm_options:\n  api_base: {base}\n---\nYou greet.\n",
        "markdown",
    )
    state = initial().with_llm_config(model="openai/m", api_base=base)
    shown = [repr(definition), repr(state)]
    shown += [definition.to_text(kind) for kind in ("markdown", "yaml", "toml")]
    assert not [text for text in shown if URL_PASSWORD in text]
    assert "api_base: http://me:[redacted]@127.0.0.1:9/v1" in shown[3]
    assert definition.llm_options["api_base"] == base  # kept: the driver is given it


def test_a_urls_password_in_a_map_is_never_written(tmp_path):
    """The state's JSON, a session's row and an audit log wrote a URL's password held in a
    map under a key that is no secret's (``llm_config``'s ``api_base``, a tool's argument)
    as it was; it is written redacted, as values under secret keys are."""
    base = f"http://me:{URL_PASSWORD}@127.0.0.1:9/v1"
    state = initial().with_llm_config(model="openai/m", api_base=base)
    state = state.with_metadata("source", [{"url": base}])
    text = state.to_json()
    assert URL_PASSWORD not in text
    back = AgentState.from_json(text)
    assert back.llm_config["api_base"] == "http://me:[redacted]@127.0.0.1:9/v1"
    assert back.metadata["source"][0]["url"] == "http://me:[redacted]@127.0.0.1:9/v1"
    assert state.llm_config["api_base"] == base  # kept in memory: the driver is given it
    SQLiteSessionStore(tmp_path / "s.db").create(state, session_id="s1")
    log = tmp_path / "run.jsonl"
    with AuditLog.open(log) as audit:
        make_loop(reply("done"), listeners=[audit]).run(state)
    database = b"".join(path.read_bytes() for path in tmp_path.glob("s.db*"))  # -wal too
    written = [database, log.read_bytes()]
    assert not [data for data in written if URL_PASSWORD.encode() in data]
    assert all(b"http://me:[redacted]@127.0.0.1:9/v1" in data for data in written)


# litellm's own names for a provider's credentials (Bedrock, Azure AD, Vertex AI, watsonx,
# OCI), and a key in a URL's query (Google's APIs take ``?key=``): none names a secret by
# the words ``api_key``, ``password`` or ``token`` alone.
PROVIDER_CREDENTIALS = {
    "aws_access_key_id": "AKIAPLANTEDKEYID01",
    "aws_secret_access_key": "planted-aws-secret-02",
    "aws_session_token": "planted-aws-session-03",
    "aws_web_identity_token": "planted-web-identity-04",
    "azure_ad_token": "planted-azure-ad-05",
    "vertex_credentials": '{"private_key": "planted-vertex-06"}',
    "watsonx_credentials": {"apikey": "planted-watsonx-07"},
    "oci_key": "-----BEGIN PRIVATE KEY----- planted-oci-08",
    "langfuse_secret_key": "planted-langfuse-09",
    "private_key": "planted-private-10",
    "api_base": "https://127.0.0.1:9/v1beta?alt=sse&key=planted-query-key-11",
    "api_token": "planted-api-token-12",
    "github_token": "planted-github-13",
}


def test_provider_credentials_and_a_urls_query_key_are_never_written(tmp_path):
    """litellm's credential parameters in ``llm_config`` and a key in a URL's query were
    written as they were into the state's JSON, its ``repr``, a session's row and an
    audit log; each is written redacted (the state in memory keeps them)."""
    state = initial().with_llm_config(
        model="openai/m",
        max_tokens=5,
        eos_token="</s>",
        input_cost_per_token=2e-06,
        **PROVIDER_CREDENTIALS,
    )
    planted = re.findall(r"planted-[a-z-]+\d\d|AKIA\w+", str(PROVIDER_CREDENTIALS))
    assert len(planted) == len(PROVIDER_CREDENTIALS)
    text = state.to_json()
    assert [secret for secret in planted if secret in text + repr(state)] == []
    back = AgentState.from_json(text)
    assert back.llm_config["api_base"] == "https://127.0.0.1:9/v1beta?alt=sse&key=[redacted]"
    assert back.llm_config["aws_session_token"] == "[redacted]"
    assert back.llm_config["max_tokens"] == 5 and back.llm_config["model"] == "openai/m"
    assert back.llm_config["eos_token"] == "</s>"  # a tokenizer's, no credential
    assert back.llm_config["input_cost_per_token"] == 2e-06  # a price
    from agents.records.redaction import is_secret_key

    kept = ("time_to_first_token", "progress_token", "add_eos_token", "next_page_token")
    assert [name for name in kept if is_secret_key(name)] == []
    assert is_secret_key("X-Auth-Token") and is_secret_key("vault_token")
    assert state.llm_config["aws_session_token"] == "planted-aws-session-03"
    shown = repr(MCPServerStdio("srv", ["--api-token", "planted-flag-14", "--github-token=x1y2z3"]))
    assert "planted-flag-14" not in shown and "x1y2z3" not in shown
    SQLiteSessionStore(tmp_path / "s.db").create(state, session_id="s1")
    log = tmp_path / "run.jsonl"
    with AuditLog.open(log) as audit:
        make_loop(reply("done"), listeners=[audit]).run(state)
    database = b"".join(path.read_bytes() for path in tmp_path.glob("s.db*"))  # -wal too
    for data in (database, log.read_bytes()):
        assert [secret for secret in planted if secret.encode() in data] == []
