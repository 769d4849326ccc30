"""``agents serve``: a real server (uvicorn on 127.0.0.1, started as the command
line starts it) and a real HTTP client (httpx)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers import Browser

TESTS = Path(__file__).parent
TOKEN = "tok-serve-secret-0123"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    """``agents serve serve_agent:loop`` in a process of its own."""

    def __init__(self, database: Path, *options: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.database = database
        self.options = options
        self.target = "serve_agent:loop"
        self.path = str(TESTS)
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> Server:
        env = {
            **os.environ,
            "PYTHONPATH": self.path,
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        }
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "agents",
                "serve",
                self.target,
                "--port",
                str(self.port),
                "--database",
                str(self.database),
                *self.options,
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", self.port)) == 0:
                    return self
            if self.process.poll() is not None:
                error = self.process.stderr.read().decode()  # type: ignore[union-attr]
                self.stop()
                raise AssertionError(error)
            time.sleep(0.1)
        self.stop()
        raise AssertionError("the server did not start")

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()
        if self.process.stderr is not None:
            self.process.stderr.close()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)
        if self.process is not None and self.process.stderr is not None:
            self.process.stderr.close()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    running = Server(tmp_path / "sessions.sqlite").start()
    yield running
    running.stop()


def sse(lines: Iterator[str]) -> Iterator[dict[str, Any]]:
    """Server-Sent Events from a response's lines: ``{"id", "event", "data"}`` each."""
    event: dict[str, Any] = {}
    for line in lines:
        if not line:
            if event:
                yield event
            event = {}
            continue
        field, _, value = line.partition(": ")
        event[field] = json.loads(value) if field == "data" else value


def stream(client: httpx.Client, method: str, url: str, **options: Any) -> list[dict[str, Any]]:
    with client.stream(method, url, timeout=60, **options) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        return list(sse(response.iter_lines()))


def send(client: httpx.Client, base: str, session: str, message: str) -> list[dict[str, Any]]:
    """POST a user message to a session; the run's events, streamed to the run's end."""
    return stream(client, "POST", f"{base}/sessions/{session}/messages", json={"message": message})


@contextlib.contextmanager
def posting(
    client: httpx.Client, base: str, session: str, message: str
) -> Iterator[Iterator[dict[str, Any]]]:
    """POST a user message to a session; the run's events as they arrive (leaving the block
    drops the stream)."""
    with client.stream(
        "POST", f"{base}/sessions/{session}/messages", json={"message": message}, timeout=60
    ) as response:
        assert response.status_code == 200, response.read()
        yield sse(response.iter_lines())


def dropped_after(
    client: httpx.Client, base: str, session: str, message: str, count: int
) -> list[dict[str, Any]]:
    """POST a user message and read ``count`` events of the run; then the client goes away
    (the run goes on)."""
    seen: list[dict[str, Any]] = []
    with posting(client, base, session, message) as events:
        for event in events:
            seen.append(event)
            if len(seen) == count:
                break
    return seen


def new_session(client: httpx.Client, base: str) -> str:
    created = client.post(f"{base}/sessions", json={"system_prompt": "You help."})
    assert created.status_code == 201, created.text
    return str(created.json()["session_id"])


def test_a_message_with_a_tool_is_answered_as_a_stream(server):
    """POST a message: each engine event is one SSE event with the event's JSON, numbered
    from the session's event log; the state and the timeline are there after."""
    with httpx.Client() as client:
        session = new_session(client, server.url)
        events = stream(
            client, "POST", f"{server.url}/sessions/{session}/messages", json={"message": "add 2 3"}
        )
        kinds = [event["event"] for event in events]
        assert kinds[0] == "ExecutionStarted" and kinds[-2:] == ["ExecutionCompleted", "RunEnded"]
        assert "StepCompleted" in kinds
        assert [int(event["id"]) for event in events] == list(range(1, len(events) + 1))
        assert events[-2]["data"]["final_response"] == "tool said: 5"
        state = client.get(f"{server.url}/sessions/{session}")
        assert state.status_code == 200 and json.loads(state.text)["kind"] == "AgentState"
        timeline = client.get(f"{server.url}/sessions/{session}/timeline").json()
        assert [row["tools"] for row in timeline["rows"]] == [["add"], []]
        assert timeline["status"] == "completed"


def test_a_page_elsewhere_cannot_reach_the_server_by_dns_rebinding(server):
    """A web page the user visits can point its own name at 127.0.0.1 and call the server
    as same-origin (DNS rebinding): it then drove the agent (sessions, messages, tools).
    ``agents serve`` on a loopback address answers only to a loopback ``Host``: any other is
    refused (403, one line of JSON) before anything runs; ``localhost`` and ``127.0.0.1``
    work, on any path, the page's too."""
    port = server.port
    with httpx.Client() as client:
        for name in ("evil.example", "attacker.test:8080", f"127.0.0.1.nip.io:{port}"):
            answer = client.post(
                f"{server.url}/sessions", json={"session_id": "rebound"}, headers={"Host": name}
            )
            assert answer.status_code == 403, (name, answer.text)
            assert answer.json()["error"].startswith("this server answers to 127.0.0.1")
            assert client.get(f"{server.url}/", headers={"Host": name}).status_code == 403
        assert client.get(f"{server.url}/sessions/rebound").status_code == 404  # none made
        for name in (f"localhost:{port}", f"127.0.0.1:{port}", "LOCALHOST"):
            created = client.post(f"{server.url}/sessions", json={}, headers={"Host": name})
            assert created.status_code == 201, (name, created.text)


def test_a_page_elsewhere_cannot_make_the_agent_run(server):
    """Any web page may send a ``text/plain`` POST to 127.0.0.1 without asking (no CORS
    preflight); it could make the agent run a message of its choosing. ``agents serve``
    refuses a request whose ``Origin`` is not its own (403) before anything runs; its own
    page's (same origin) and a client sending no ``Origin`` (curl, as the how-to's
    commands: form-encoded) are answered."""
    with httpx.Client() as client:
        session = new_session(client, server.url)
        messages = f"{server.url}/sessions/{session}/messages"
        for origin in ("http://evil.example", "null", f"http://localhost:{server.port}"):
            headers = {"Content-Type": "text/plain", "Origin": origin}
            answer = client.post(messages, content=b'{"message": "add 2 3"}', headers=headers)
            assert answer.status_code == 403, (origin, answer.text)
            assert "another origin" in answer.json()["error"]
        assert client.get(f"{server.url}/sessions/{session}").json()["execution"] is None
        own = {"Origin": server.url, "Content-Type": "text/plain"}
        body = b'{"message": "add 2 3"}'
        kinds = [e["event"] for e in stream(client, "POST", messages, headers=own, content=body)]
        assert kinds[-1] == "RunEnded"
        form = {"Content-Type": "application/x-www-form-urlencoded"}
        kinds = [e["event"] for e in stream(client, "POST", messages, headers=form, content=body)]
        assert kinds[-1] == "RunEnded"


def test_the_allowed_hosts_of_the_application():
    """``app(allowed_hosts=...)`` (what ``agents serve`` passes on a loopback address):
    other names refused with 403, an IPv6 loopback with its port taken; without it, any
    host (an application mounted in a service of its own decides)."""
    from serve_agent import loop

    from agents import InMemorySessionStore
    from agents.serve import app
    from agents.serve.asgi import LOOPBACK_HOSTS, is_loopback

    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("example.com")

    async def answers(application: Any, host: str) -> int:
        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://x") as client:
            answer = await client.post("/sessions", json={}, headers={"Host": host})
            return answer.status_code

    guarded = app(lambda s: loop(), store=InMemorySessionStore(), allowed_hosts=LOOPBACK_HOSTS)
    open_ = app(lambda s: loop(), store=InMemorySessionStore())
    assert asyncio.run(answers(guarded, "evil.example")) == 403
    assert asyncio.run(answers(guarded, "[::1]:8000")) == 201
    assert asyncio.run(answers(open_, "evil.example")) == 201


def test_an_approval_round_trip(server):
    """A call that needs approval suspends the run (the stream says which calls wait);
    approving it resumes the run, whose events the session's stream carries on with."""
    with httpx.Client() as client:
        session = new_session(client, server.url)
        first = send(client, server.url, session, "refund 40")
        waiting = next(e for e in first if e["event"] == "ApprovalRequested")["data"]["calls"]
        assert [call["name"] for call in waiting] == ["refund"]
        decided = client.post(
            f"{server.url}/sessions/{session}/approvals",
            json={"call_id": waiting[0]["id"], "approved": True},
        )
        assert decided.status_code == 202, decided.text
        after = decided.json()["events_after"]
        rest = stream(client, "GET", f"{server.url}/sessions/{session}/events?after={after}")
        assert rest[-2]["data"]["final_response"] == "tool said: refunded 40"
        assert int(rest[0]["id"]) == after + 1


def test_a_tools_question_round_trip(server):
    """A tool call that asks a human suspends the run (the stream says what it asks); a bad
    answer is refused with a one-line error and changes nothing; the answer resumes the
    run: the call is made again with it."""
    with httpx.Client() as client:
        session = new_session(client, server.url)
        url = f"{server.url}/sessions/{session}"
        first = stream(client, "POST", f"{url}/messages", json={"message": "book table"})
        (asked,) = next(e for e in first if e["event"] == "InputRequested")["data"]["questions"]
        assert (asked["call_id"], asked["message"]) == ("b1", "Which date for the table?")
        assert asked["schema"]["required"] == ["date"]
        completed = next(e for e in first if e["event"] == "ExecutionCompleted")["data"]
        assert completed["status"] == "suspended" and completed["pending_inputs"] == [asked]
        for body, problem in [
            ({"call_id": "b9", "content": {"date": "x"}}, "no pending question"),
            ({"call_id": "b1", "content": {"date": 3}}, "does not fit"),
            ({"call_id": "b1", "action": "later"}, "action must be one of"),
            ({"call_id": "b1", "content": "x"}, "wrong type"),
            ('{"call_id": "b1", "content": {"date": NaN}}', "not a JSON number"),
            ({"call_id": "b1", "content": {"date": _nested(300)}}, "nested deeper"),
        ]:
            if isinstance(body, str):  # what a JSON library would not write
                refused = client.post(f"{url}/inputs", content=body.encode())
            else:
                refused = client.post(f"{url}/inputs", json=body)
            assert refused.status_code == 422 and problem in refused.json()["error"], refused.text
        state = json.loads(client.get(url).text)
        assert state["execution"]["pending_inputs"][0]["call_id"] == "b1"
        given = client.post(f"{url}/inputs", json={"call_id": "b1", "content": {"date": "May 4"}})
        assert given.status_code == 202, given.text
        after = given.json()["events_after"]
        rest = stream(client, "GET", f"{url}/events?after={after}")
        assert rest[-2]["data"]["final_response"] == "tool said: booked table on May 4"


def _nested(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


def test_a_dropped_stream_resumes_with_last_event_id(server):
    """A client that drops its stream mid-run rejoins with ``Last-Event-ID``: the run went
    on, and it gets every later event once, none lost, none repeated."""
    with httpx.Client() as client:
        session = new_session(client, server.url)
        seen = dropped_after(client, server.url, session, "slow", 3)
        last = seen[-1]["id"]
        rest = stream(
            client,
            "GET",
            f"{server.url}/sessions/{session}/events",
            headers={"Last-Event-ID": last},
        )
        numbers = [int(e["id"]) for e in seen] + [int(e["id"]) for e in rest]
        assert numbers == list(range(1, len(numbers) + 1))
        assert rest[-1]["event"] == "RunEnded"
        everything = stream(client, "GET", f"{server.url}/sessions/{session}/events")
        assert [e["data"] for e in everything] == [e["data"] for e in seen + rest]


def test_a_slow_tools_start_is_streamed_while_it_runs(server):
    """A tool's start reaches the stream while the call runs (within 50 ms of its start),
    not with the step's end (the run does not wait for that commit)."""
    with httpx.Client() as client:
        session = new_session(client, server.url)
        arrived: dict[str, float] = {}
        with posting(client, server.url, session, "slow") as events:
            for event in events:
                arrived.setdefault(event["event"], time.monotonic())
        assert list(arrived)[-1] == "RunEnded"
        assert arrived["ToolCallCompleted"] - arrived["ToolCallStarted"] > 0.25  # the tool: 0.4 s


def test_two_clients_racing_on_one_session(server):
    """Two messages at once on one session: one runs, the other is refused with 409."""
    with httpx.Client() as client:
        session = new_session(client, server.url)
    codes: list[int] = []

    def send() -> None:
        with (
            httpx.Client() as own,
            own.stream(
                "POST",
                f"{server.url}/sessions/{session}/messages",
                json={"message": "slow"},
                timeout=60,
            ) as response,
        ):
            codes.append(response.status_code)
            response.read()

    threads = [threading.Thread(target=send) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(codes) == [200, 409]


def test_a_killed_server_restarts_and_the_session_goes_on(tmp_path):
    """SIGKILL mid-run; another server process on the same database: rejoining the
    session's stream resumes the run from its last committed step; the events written
    before the kill are all there, and the run ends."""
    first = Server(tmp_path / "sessions.sqlite").start()
    with httpx.Client() as client:
        session = new_session(client, first.url)
        seen = []
        with posting(client, first.url, session, "slow") as events:
            for event in events:
                seen.append(event)
                if event["event"] == "StepCompleted":
                    break
        first.kill()
    second = Server(tmp_path / "sessions.sqlite").start()
    try:
        with httpx.Client() as client:
            everything = stream(client, "GET", f"{second.url}/sessions/{session}/events")
            assert [e["data"] for e in everything[: len(seen)]] == [e["data"] for e in seen]
            assert everything[-1]["event"] == "RunEnded"
            state = json.loads(client.get(f"{second.url}/sessions/{session}").text)
            assert state["execution"]["status"] == "completed"
    finally:
        second.stop()


def test_steering_reaches_the_run_in_progress(server):
    """``POST /steer`` during a run: the message joins the conversation before the next
    inference."""
    with httpx.Client() as client:
        session = new_session(client, server.url)
        with posting(client, server.url, session, "slow") as events:
            steered = False
            for _event in events:
                if not steered:
                    answer = client.post(
                        f"{server.url}/sessions/{session}/steer", json={"message": "hurry up"}
                    )
                    assert (
                        answer.status_code == 202 and answer.json()["to"] == "the run in progress"
                    )
                    steered = True
        state = json.loads(client.get(f"{server.url}/sessions/{session}").text)
        contents = [m["content"] for m in state["context"]["store"]["messages"]]
        assert "hurry up" in contents


def test_the_token_and_bad_input(tmp_path):
    """With a token every API request needs it (the page does not); bad JSON is 400,
    unknown fields 422, an unknown session 404, a body too large 413 — each one line of
    JSON that shows no secret."""
    server = Server(tmp_path / "s.sqlite", "--token", TOKEN).start()
    try:
        with httpx.Client() as client:
            assert client.post(f"{server.url}/sessions", json={}).status_code == 401
            assert client.get(f"{server.url}/").status_code == 200
            auth = {"Authorization": f"Bearer {TOKEN}"}
            session = client.post(f"{server.url}/sessions", json={}, headers=auth).json()[
                "session_id"
            ]
            url = f"{server.url}/sessions/{session}/messages"
            cases = [
                (client.post(url, content=b"{not json", headers=auth), 400),
                (client.post(url, json={"message": "hi", "extra": 1}, headers=auth), 422),
                (client.post(url, json={"message": 7}, headers=auth), 422),
                (
                    client.post(
                        f"{server.url}/sessions/nope/messages", json={"message": "x"}, headers=auth
                    ),
                    404,
                ),
                (client.post(url, content=b"x" * 31_000_000, headers=auth), 413),
                (
                    client.post(
                        f"{server.url}/sessions/{session}/steer",
                        content=b"x" * 2_000_000,
                        headers=auth,
                    ),
                    413,
                ),
            ]
            for response, code in cases:
                assert response.status_code == code, response.text
                body = response.json()
                assert set(body) == {"error"} and "\n" not in body["error"]
                assert TOKEN not in response.text
    finally:
        server.stop()


def test_text_that_is_not_unicode_and_odd_numbers(tmp_path):
    """A message holding a lone surrogate (JSON's ``"\\ud800"``) runs, is stored and comes
    back as that escape; an id no store can keep or no URL can name is 422; an event
    number in digits ``int`` refuses ("²", 5,000 of them) is 400 — each one line, and the
    server logs no traceback."""
    server = Server(tmp_path / "s.sqlite").start()
    try:
        _not_unicode_and_odd_numbers(server)
        assert server.process is not None
        server.process.terminate()
        _, errors = server.process.communicate(timeout=10)
        assert b"Traceback" not in errors, errors.decode()
    finally:
        server.stop()


def _not_unicode_and_odd_numbers(server: Server) -> None:
    with httpx.Client() as client:
        session = client.post(f"{server.url}/sessions", json={}).json()["session_id"]
        url = f"{server.url}/sessions/{session}"
        with client.stream(
            "POST", f"{url}/messages", content=b'{"message": "hi \\ud800"}', timeout=60
        ) as response:
            events = list(sse(response.iter_lines()))
        assert events[-1]["data"] == {"type": "RunEnded", "step": None, "status": "completed"}
        stored = client.get(url)
        assert '"you said: hi \\ud800"' in stored.text
        assert json.loads(stored.text)["context"]["store"]["messages"][0]["content"] == "hi \ud800"
        assert client.get(f"{url}/timeline").status_code == 200
        for bad in ('"\\ud800"', '"a\\u0000b"', '"a/b"'):
            body = f'{{"session_id": {bad}}}'.encode()
            refused = client.post(f"{server.url}/sessions", content=body)
            assert refused.status_code == 422, refused.text
            assert set(refused.json()) == {"error"}
        for header in (b"\xb2", b"9" * 5_000):
            odd = client.get(f"{url}/events", headers={"Last-Event-ID": header})
            assert odd.status_code == 400 and odd.json() == {
                "error": "Last-Event-ID must be an event number"
            }
        events_url = f"{url}/events?after=" + "9" * 5_000
        assert client.get(events_url).status_code == 400
        thread = run_input("t-\udcff", "r", [{"id": "u", "role": "user", "content": "x"}])
        refused = client.post(f"{server.url}/ag-ui", content=_escaped(thread))
        assert refused.status_code == 422 and "threadId" in refused.json()["error"]
        said = run_input("t-odd", "r", [{"id": "u", "role": "user", "content": "x \udcff"}])
        with client.stream(
            "POST", f"{server.url}/ag-ui", content=_escaped(said), timeout=60
        ) as response:
            lines = [line for line in response.iter_lines() if line.startswith("data: ")]
        from ag_ui.core import Event
        from pydantic import TypeAdapter

        parsed = [TypeAdapter(Event).validate_json(line.removeprefix("data: ")) for line in lines]
        assert parsed[-1].type.value == "RUN_FINISHED"
        assert parsed[-1].result == "you said: x \ufffd"  # AG-UI is for display


def _escaped(data: dict[str, Any]) -> bytes:
    return json.dumps(data).encode()  # ensure_ascii: a lone surrogate as its escape


def test_a_port_out_of_range_and_a_libpq_connection_string_on_the_command_line(tmp_path):
    """``--port 99999`` is one line and exit 2 (uvicorn hung with it); libpq's ``key=value``
    connection string is PostgreSQL, not the name of a new SQLite file holding the
    password (as it was): a server that cannot be reached is one line without it."""
    env = {**os.environ, "PYTHONPATH": str(TESTS)}
    command = [sys.executable, "-m", "agents", "serve", "serve_agent:loop"]
    conninfo = "host=127.0.0.1 port=1 user=u password=planted-pw-77 dbname=x"
    mysql = "mysql://u:planted-pw-77@127.0.0.1/db"  # was the name of a new SQLite file
    refused = (["--port", "99999"], ["--port", "²"], ["--database", conninfo])
    for options in (*refused, ["--database", mysql]):
        done = subprocess.run(
            [*command, *options], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 2, done
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
        assert "planted-pw-77" not in done.stderr + done.stdout
    assert list(tmp_path.iterdir()) == []


def test_a_taken_port_is_one_line_and_port_0_is_the_port_chosen(tmp_path):
    """A port another process holds: ``agents serve`` printed "serving ... on" that port,
    then uvicorn's error, and exited 3 (``mcp-serve`` too); now one line, exit 2, and
    nothing said served. ``--port 0`` says the port the system chose, which serves."""
    env = {**os.environ, "PYTHONPATH": str(TESTS), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        for command in (["serve"], ["mcp-serve", "--transport", "http"]):
            done = subprocess.run(
                [sys.executable, "-m", "agents", *command, "serve_agent:loop", "--port", port],
                cwd=tmp_path,
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert done.returncode == 2, done
            assert done.stdout == ""
            assert done.stderr == (
                f"agents {command[0]}: [Errno 98] cannot listen on 127.0.0.1:{port}: "
                "Address already in use\n"
            )
    process = subprocess.Popen(
        [sys.executable, "-m", "agents", "serve", "serve_agent:loop", "--port", "0"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        said = process.stdout.readline()  # type: ignore[union-attr]
        chosen = re.fullmatch(r"serving serve_agent:loop on http://127\.0\.0\.1:(\d+)/\n", said)
        assert chosen is not None and chosen.group(1) != "0", said
        page = httpx.get(f"http://127.0.0.1:{chosen.group(1)}/", timeout=30, trust_env=False)
        assert page.status_code == 200 and "<html" in page.text.lower()
    finally:
        process.terminate()
        process.wait(10)
        process.stdout.close()  # type: ignore[union-attr]


def test_a_sqlite_url_names_the_file_as_dbos_reads_it(tmp_path, monkeypatch):
    """``--database sqlite:///path`` (the URL DBOS takes) is that SQLite file, relative or
    absolute (``sqlite:////abs``): it was taken for a file named ``sqlite:///...``."""
    from agents.cli.serving import store_of

    monkeypatch.chdir(tmp_path)
    store_of("sqlite:///relative.sqlite").close()
    store_of(f"sqlite:///{tmp_path / 'sub'}.sqlite").close()
    assert {p.name for p in tmp_path.glob("*.sqlite")} == {"relative.sqlite", "sub.sqlite"}


# -- AG-UI --------------------------------------------------------------------------------------


def agui(client: httpx.Client, base: str, body: dict[str, Any]) -> list[Any]:
    """POST /ag-ui; every event parsed by the ag-ui-protocol package's own types."""
    from ag_ui.core import Event
    from pydantic import TypeAdapter

    adapter: TypeAdapter[Any] = TypeAdapter(Event)
    with client.stream("POST", f"{base}/ag-ui", json=body, timeout=60) as response:
        assert response.status_code == 200, response.read()
        return [
            adapter.validate_json(line.removeprefix("data: "))
            for line in response.iter_lines()
            if line.startswith("data: ")
        ]


def run_input(thread: str, run: str, messages: list[dict[str, Any]], **more: Any) -> dict[str, Any]:
    return {
        "threadId": thread,
        "runId": run,
        "messages": messages,
        "tools": [],
        "context": [],
        "state": None,
        "forwardedProps": None,
        **more,
    }


def test_ag_ui_runs_answer_with_ag_ui_events(server):
    """``RunAgentInput`` in, AG-UI events out: RUN_STARTED, the tool call's START/ARGS/END
    and RESULT, the answer's TEXT_MESSAGE_START/CONTENT/END, RUN_FINISHED; the thread is
    the server's session."""
    with httpx.Client() as client:
        events = agui(
            client,
            server.url,
            run_input("thread-1", "run-1", [{"id": "u1", "role": "user", "content": "add 2 3"}]),
        )
        kinds = [event.type.value for event in events]
        assert kinds[0] == "RUN_STARTED" and kinds[-1] == "RUN_FINISHED"
        assert kinds[1:4] == ["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END"]
        assert "TOOL_CALL_RESULT" in kinds
        assert kinds[-4:-1] == ["TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"]
        assert events[-3].delta == "tool said: 5"
        assert events[-1].result == "tool said: 5"
        session = json.loads(client.get(f"{server.url}/sessions/thread-1").text)
        assert session["kind"] == "AgentState"


def test_ag_ui_streams_reasoning_with_the_protocols_reasoning_events(server):
    """A reasoning model's answer: a reasoning message (REASONING_START, MESSAGE_START,
    CONTENT, MESSAGE_END, END) per part, what the provider withheld as its encrypted
    value, then the text; every event valid by the ag-ui-protocol package's types."""
    with httpx.Client() as client:
        events = agui(
            client,
            server.url,
            run_input("thread-r", "run-r", [{"id": "u1", "role": "user", "content": "think"}]),
        )
    kinds = [event.type.value for event in events]
    first = kinds.index("REASONING_START")
    assert kinds[first : first + 5] == [
        "REASONING_START",
        "REASONING_MESSAGE_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END",
        "REASONING_END",
    ]
    assert events[first + 2].delta == "The user wants me to think."
    assert "REASONING_ENCRYPTED_VALUE" in kinds
    assert kinds.index("REASONING_END") < kinds.index("TEXT_MESSAGE_START")
    texts = [e.delta for e in events if e.type.value == "TEXT_MESSAGE_CONTENT"]
    assert texts == ["I thought about it."]


def test_ag_ui_takes_images_and_documents_in_a_user_message(server):
    """An AG-UI user message of text, an image inline (base64, 2 MB: past the 1 MB other
    requests may have) and a document by URL: the agent gets them as parts (it got the text
    alone), the session stores the image as a blob reference; a provider's file handle or
    bytes that are not base64 are a 422 naming the part, and nothing runs."""
    import base64

    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8_000
    image = {"type": "data", "value": base64.b64encode(png).decode(), "mimeType": "image/png"}
    content = [
        {"type": "text", "text": "what are these?"},
        {"type": "image", "source": image},
        {"type": "document", "source": {"type": "url", "value": "https://a.test/terms.pdf"}},
    ]
    with httpx.Client() as client:
        events = agui(
            client,
            server.url,
            run_input("thread-m", "run-1", [{"id": "u1", "role": "user", "content": content}]),
        )
        said = f"you sent image/png of {len(png)} bytes, https://a.test/terms.pdf"
        assert events[-1].result == said
        text = client.get(f"{server.url}/sessions/thread-m").text
        assert len(text) < 10_000 and '"kind":"Blob"' in text.replace(" ", "")
        for source, words in (
            ({"type": "file", "value": "file-abc123"}, "file handle"),
            ({"type": "data", "value": "not base64!", "mimeType": "image/png"}, "not base64"),
            ({"type": "url", "value": "ftp://a.test/x.png"}, "http(s)"),
        ):
            part = {"type": "image", "source": source}
            body = run_input("thread-n", "run-1", [{"id": "u", "role": "user", "content": [part]}])
            refused = client.post(f"{server.url}/ag-ui", json=body)
            assert refused.status_code == 422, refused.text
            assert "messages[0].content[0]" in refused.text and words in refused.text
        assert client.get(f"{server.url}/sessions/thread-n").status_code == 404


def test_a_message_may_hold_images_and_documents(server):
    """``POST /sessions/{id}/messages`` with a list of text and parts: an image inline (a
    data URL, 2 MB: past the 1 MB other requests may have) and a document by URL reach the
    agent as parts (the route took text alone) and the session holds the image as a blob
    reference; a part that is not one is a 422 naming it, and nothing runs."""
    import base64

    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8_000
    message = [
        "what are these?",
        {"type": "image", "url": "data:image/png;base64," + base64.b64encode(png).decode()},
        {"type": "document", "url": "https://a.test/terms", "media_type": "application/pdf"},
    ]
    with httpx.Client() as client:
        session = new_session(client, server.url)
        url = f"{server.url}/sessions/{session}/messages"
        events = stream(client, "POST", url, json={"message": message})
        said = f"you sent image/png of {len(png)} bytes, https://a.test/terms"
        assert events[-2]["data"]["final_response"] == said
        text = client.get(f"{server.url}/sessions/{session}").text
        assert len(text) < 10_000 and '"kind":"Blob"' in text.replace(" ", "")
        before = client.get(f"{server.url}/sessions/{session}").text
        for part, words in (
            ({"type": "image", "url": "data:image/png;base64,not base64!"}, "base64"),
            ({"type": "image", "url": "ftp://a.test/x.png"}, "http(s)"),
            ({"type": "image", "url": "https://a.test/x"}, "media type"),
            ({"type": "video", "url": "https://a.test/x.mp4"}, "a part of type image"),
            ({"type": "image", "url": "https://a.test/x.png", "alt": "x"}, "its type, url"),
            ({"type": "image", "url": 5}, "its type, url"),
            ({"type": ["image"], "url": "https://a.test/x.png"}, "a part of type image"),
            (7, "a part of type image"),
        ):
            refused = client.post(url, json={"message": ["look", part]})
            assert refused.status_code == 422, refused.text
            assert "message[1]" in refused.text and words in refused.text, refused.text
        refused = client.post(url, json={"message": []})
        assert refused.status_code == 422 and "non-empty" in refused.text
        assert client.get(f"{server.url}/sessions/{session}").text == before


def test_ag_ui_keeps_the_servers_history_not_the_clients(server):
    """A second turn whose messages lost the first turn's tool call (as a client dropping a
    streamed call would send): the server's session goes on from its own history."""
    with httpx.Client() as client:
        agui(
            client,
            server.url,
            run_input("thread-2", "run-1", [{"id": "u1", "role": "user", "content": "add 1 1"}]),
        )
        broken_copy = [
            {"id": "u1", "role": "user", "content": "add 1 1"},
            {"id": "u2", "role": "user", "content": "hello again"},
        ]
        second = agui(client, server.url, run_input("thread-2", "run-2", broken_copy))
        assert second[-1].result == "you said: hello again"
        state = json.loads(client.get(f"{server.url}/sessions/thread-2").text)
        roles = [m["role"] for m in state["context"]["store"]["messages"]]
        assert roles == ["user", "assistant", "tool", "assistant", "user", "assistant"]


def test_ag_ui_never_takes_a_user_message_twice(server):
    """A new run whose newest user message a run of the thread took already (a client's
    "regenerate", or its history sent back with no new message) is a 422 naming it; the
    session is not touched, and a new message then goes on as before."""
    with httpx.Client() as client:
        first = [{"id": "u1", "role": "user", "content": "hello"}]
        agui(client, server.url, run_input("thread-once", "run-1", first))
        url = f"{server.url}/sessions/thread-once"
        before = client.get(url).text
        answered = [*first, {"id": "a1", "role": "assistant", "content": "you said: hello"}]
        for run, messages in (("run-2", first), ("run-3", answered)):
            refused = client.post(
                f"{server.url}/ag-ui", json=run_input("thread-once", run, messages)
            )
            assert refused.status_code == 422, refused.text
            assert "'u1' was taken by an earlier run" in refused.text
            assert client.get(url).text == before
        new = [*answered, {"id": "u2", "role": "user", "content": "again"}]
        assert agui(client, server.url, run_input("thread-once", "run-4", new))[-1].result == (
            "you said: again"
        )
        state = json.loads(client.get(url).text)
        users = [m for m in state["context"]["store"]["messages"] if m["role"] == "user"]
        assert [m["content"] for m in users] == ["hello", "again"]


def test_ag_ui_never_queues_a_user_message_twice_while_calls_wait(server):
    """A user message sent while calls wait for approval is queued for the next inference;
    the same message sent again (its id) before that is a 422 too, not a second copy."""
    with httpx.Client() as client:
        first = [{"id": "u1", "role": "user", "content": "refund 10 20"}]
        agui(client, server.url, run_input("thread-queued", "run-1", first))
        url = f"{server.url}/sessions/thread-queued"
        steer = [*first, {"id": "u2", "role": "user", "content": "and hurry"}]
        queued = agui(client, server.url, run_input("thread-queued", "run-2", steer))
        assert queued[-1].outcome.type == "interrupt"
        before = client.get(url).text
        assert json.loads(before)["context"]["steering"][0]["content"] == "and hurry"
        refused = client.post(
            f"{server.url}/ag-ui", json=run_input("thread-queued", "run-3", steer)
        )
        assert refused.status_code == 422 and "'u2' was taken" in refused.text
        assert client.get(url).text == before


def test_ag_ui_interrupts_answered_in_one_resume(server):
    """Two calls waiting for approval end the run with an interrupt outcome, one interrupt
    per call; one ``resume`` answering both (one approved, one cancelled) finishes the run;
    an interrupt no entry answers stays open."""
    with httpx.Client() as client:
        first = agui(
            client,
            server.url,
            run_input(
                "thread-3", "run-1", [{"id": "u1", "role": "user", "content": "refund 10 20"}]
            ),
        )
        outcome = first[-1].outcome
        assert outcome.type == "interrupt"
        ten, twenty = outcome.interrupts
        assert (ten.tool_call_id, twenty.tool_call_id) == ("r1", "r2")
        resumed = agui(
            client,
            server.url,
            run_input(
                "thread-3",
                "run-2",
                [],
                resume=[
                    {"interruptId": ten.id, "status": "resolved", "payload": {"approved": True}},
                    {"interruptId": twenty.id, "status": "cancelled"},
                ],
            ),
        )
        assert resumed[-1].outcome.type == "success"
        assert resumed[-1].result.startswith("tool said: refunded 10; ")
        assert "cancelled" in resumed[-1].result
        # A new turn asks again; answering one of two leaves the other open.
        again = agui(
            client,
            server.url,
            run_input("thread-3", "run-3", [{"id": "u2", "role": "user", "content": "refund 1 2"}]),
        )
        one, two = again[-1].outcome.interrupts
        partial = agui(
            client,
            server.url,
            run_input(
                "thread-3",
                "run-4",
                [],
                resume=[
                    {"interruptId": one.id, "status": "resolved", "payload": {"approved": True}}
                ],
            ),
        )
        assert partial[-1].outcome.type == "interrupt"
        assert [i.id for i in partial[-1].outcome.interrupts] == [two.id]
        bad = client.post(
            f"{server.url}/ag-ui",
            json=run_input(
                "thread-3", "run-5", [], resume=[{"interruptId": "nope", "status": "cancelled"}]
            ),
        )
        assert bad.status_code == 422 and "nope" in bad.json()["error"]
        # Two answers to one interrupt contradict each other (or repeat): neither is taken.
        twice = [
            {"interruptId": two.id, "status": "resolved", "payload": {"approved": True}},
            {"interruptId": two.id, "status": "resolved", "payload": {"approved": False}},
        ]
        both = client.post(
            f"{server.url}/ag-ui", json=run_input("thread-3", "run-5", [], resume=twice)
        )
        assert both.status_code == 422, both.text
        assert f"resume[1] answers {two.id!r} again" in both.json()["error"]
        # A cancelled entry's payload is an object (its reason) or nothing, never "yes".
        said = [{"interruptId": two.id, "status": "cancelled", "payload": "yes"}]
        odd = client.post(
            f"{server.url}/ag-ui", json=run_input("thread-3", "run-5", [], resume=said)
        )
        assert odd.status_code == 422, odd.text
        assert "resume[0].payload must be an object" in odd.json()["error"]
        state = json.loads(client.get(f"{server.url}/sessions/thread-3").text)
        decided = [d["call_id"] for d in state["execution"]["approvals"]]
        assert decided == [one.tool_call_id]  # the other still waits
        assert client.post(f"{server.url}/ag-ui", json={"threadId": 1}).status_code == 422


def test_ag_ui_questions_are_interrupts_answered_by_a_resume(server):
    """A tool call's question ends the run with an ``input`` interrupt carrying the
    question's schema; a ``resolved`` resume with the answer as payload finishes it; an
    answer that does not fit is refused."""
    with httpx.Client() as client:
        first = agui(
            client,
            server.url,
            run_input("thread-q", "run-1", [{"id": "u1", "role": "user", "content": "book car"}]),
        )
        (interrupt,) = first[-1].outcome.interrupts
        assert (interrupt.reason, interrupt.tool_call_id) == ("input", "b1")
        assert interrupt.message == "Which date for the car?"
        assert interrupt.response_schema["required"] == ["date"]
        wrong = client.post(
            f"{server.url}/ag-ui",
            json=run_input(
                "thread-q",
                "run-2",
                [],
                resume=[{"interruptId": "b1", "status": "resolved", "payload": {"date": 1}}],
            ),
        )
        assert wrong.status_code == 422 and "does not fit" in wrong.json()["error"]
        # An answer is never read as what it does not say: a payload that is not an object
        # is not an empty answer, an unknown action is not a dismissal; nothing runs.
        for status, payload, said in (
            ("resolved", "May 5", "resume[0].payload must be an object"),
            ("cancelled", {"action": "declined"}, "action must be 'decline' or 'cancel'"),
            ("cancelled", ["decline"], "resume[0].payload must be an object"),
        ):
            entry = {"interruptId": "b1", "status": status, "payload": payload}
            refused = client.post(
                f"{server.url}/ag-ui", json=run_input("thread-q", "run-2", [], resume=[entry])
            )
            assert refused.status_code == 422 and said in refused.json()["error"], refused.text
        resumed = agui(
            client,
            server.url,
            run_input(
                "thread-q",
                "run-3",
                [],
                resume=[{"interruptId": "b1", "status": "resolved", "payload": {"date": "May 5"}}],
            ),
        )
        assert resumed[-1].outcome.type == "success"
        assert resumed[-1].result == "tool said: booked car on May 5"


# -- the page, in headless Chromium -------------------------------------------------------------


@pytest.mark.skipif(
    __import__("helpers").CHROMIUM is None,
    reason="Chromium is not installed here (.ci/run installs Debian's chromium)",
)
def test_the_page_chats_approves_and_shows_the_timeline(server, tmp_path):
    """In headless Chromium: type a message, send it, approve the call the agent asks to
    make, see the answer and the timeline; answer a tool's question in its form; a
    screenshot of the page is taken."""
    browser = Browser(f"{server.url}/", tmp_path / "profile")
    try:
        browser.wait_for("document.readyState === 'complete' && !!document.getElementById('send')")
        browser.evaluate(
            "document.getElementById('message').value = 'refund 7';"
            "document.getElementById('send').requestSubmit(); true"
        )
        browser.wait_for("!!document.querySelector('.approval button')")
        assert "refund" in browser.evaluate("document.querySelector('.approval').textContent")
        browser.evaluate("document.querySelector('.approval button').click(); true")
        browser.wait_for("document.getElementById('log').textContent.includes('refunded 7')")
        rows = browser.wait_for(
            "document.querySelectorAll('#timeline tbody tr').length >= 2 &&"
            " [...document.querySelectorAll('#timeline tbody tr')].map(r => r.textContent)"
        )
        assert any("refund" in row for row in rows)
        # A tool's question: a small form, answered in the page.
        browser.evaluate(
            "document.getElementById('message').value = 'book room';"
            "document.getElementById('send').requestSubmit(); true"
        )
        browser.wait_for("!!document.querySelector('.question input[name=date]')")
        assert "Which date for the room?" in browser.evaluate(
            "document.querySelector('.question').textContent"
        )
        # Left blank, the date is not answered (not answered as ""): the server says what
        # is missing and the form stays.
        browser.evaluate("document.querySelector('.question button').click(); true")
        said = browser.wait_for(
            "[...document.querySelectorAll('#log .error')].map(p => p.textContent).join()"
        )
        assert "does not fit" in said and "date" in said, said
        assert browser.evaluate("!!document.querySelector('.question input[name=date]')")
        browser.evaluate(
            "document.querySelector('.question input[name=date]').value = 'June 1';"
            "document.querySelector('.question button').click(); true"
        )
        browser.wait_for("document.getElementById('log').textContent.includes('room on June 1')")
        shot = browser.call("Page.captureScreenshot", format="png")["data"]
        png = tmp_path / "page.png"
        png.write_bytes(__import__("base64").b64decode(shot))
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5_000
    finally:
        browser.close()


@pytest.mark.skipif(
    __import__("helpers").CHROMIUM is None,
    reason="Chromium is not installed here (.ci/run installs Debian's chromium)",
)
def test_the_page_joins_the_stream_again_when_its_server_died(tmp_path):
    """In headless Chromium: the server killed (SIGKILL) while the page follows a run, and
    started again on the same port and database: the page joins the session's stream again
    from the last event it saw — the run resumes there — and shows the answer once (it
    stopped where the stream broke, the answer never shown)."""
    first = Server(tmp_path / "sessions.sqlite").start()
    browser = Browser(f"{first.url}/", tmp_path / "profile")
    second = Server(tmp_path / "sessions.sqlite")
    second.port, second.url = first.port, first.url
    try:
        browser.wait_for("document.readyState === 'complete' && !!document.getElementById('send')")
        browser.evaluate(
            "document.getElementById('message').value = 'slow';"
            "document.getElementById('send').requestSubmit(); true"
        )
        log = "document.getElementById('log').textContent"
        browser.wait_for(f"{log}.includes('tool slow')")
        first.kill()
        second.start()
        browser.wait_for(f"{log}.includes('tool said: done')", seconds=60)
        shown = browser.evaluate(log)
        assert shown.count("tool said: done") == 1 and "failed" not in shown
        assert shown.count("tool slow") == 4  # each call once, before and after the kill
    finally:
        browser.close()
        second.stop()


def test_the_served_example_chats_and_waits_for_approval(tmp_path):
    """``agents serve examples.served_agent:loop``: an order looked up, then a refund that
    waits for approval and is made once approved."""
    examples = TESTS.parent / "examples"
    server = Server(tmp_path / "s.sqlite")
    server.target = "served_agent:loop"
    server.path = str(examples)
    server.start()
    try:
        with httpx.Client() as client:
            session = new_session(client, server.url)
            looked = send(client, server.url, session, "status of A-1")
            assert "shipped" in looked[-2]["data"]["final_response"]
            asked = send(client, server.url, session, "refund A-1 15")
            (call,) = next(e for e in asked if e["event"] == "ApprovalRequested")["data"]["calls"]
            answer = client.post(
                f"{server.url}/sessions/{session}/approvals",
                json={"call_id": call["id"], "approved": True},
            )
            after = answer.json()["events_after"]
            done = stream(client, "GET", f"{server.url}/sessions/{session}/events?after={after}")
            assert done[-2]["data"]["final_response"] == "Done: refunded 15.00 on A-1"
    finally:
        server.stop()


def test_the_events_after_a_cursor_are_all_of_them_past_a_runs_end(tmp_path):
    """``agents serve examples.support_agent:loop``: "Refund A-1" waits for approval of
    ``call_2``; once it is rejected, the resumed run blocks it and waits again, for
    ``call_3``. ``GET /events`` with ``Last-Event-ID: 7`` gives every stored event after 7,
    through the first resumed run's end to the new ``ApprovalRequested``, not only the
    events up to the first ``RunEnded``."""
    server = Server(tmp_path / "s.sqlite")
    server.target = "examples.support_agent:loop"
    server.path = str(TESTS.parent)
    server.start()
    try:
        with httpx.Client() as client:
            session = new_session(client, server.url)
            first = send(client, server.url, session, "Refund A-1")
            (call,) = next(e for e in first if e["event"] == "ApprovalRequested")["data"]["calls"]
            assert call["id"] == "call_2"
            rejected = client.post(
                f"{server.url}/sessions/{session}/approvals",
                json={"call_id": "call_2", "approved": False, "reason": "too much"},
            )
            assert rejected.status_code == 202, rejected.text
            url = f"{server.url}/sessions/{session}/events"
            everything = stream(client, "GET", url)  # follows the resumed run to its end
            assert [int(e["id"]) for e in everything] == list(range(1, len(everything) + 1))
            assert [e["event"] for e in everything].count("RunEnded") == 2
            waiting = [e for e in everything if e["event"] == "ApprovalRequested"]
            assert [e["data"]["calls"][0]["id"] for e in waiting] == ["call_2", "call_3"]
            after = stream(client, "GET", url, headers={"Last-Event-ID": "7"})
            assert [e["id"] for e in after] == [e["id"] for e in everything[7:]]
            assert after[-1]["event"] == "RunEnded" and int(after[-1]["id"]) > 12
    finally:
        server.stop()


# -- the event log as the server writes it ---------------------------------------------------


def test_the_event_log_commits_runs_events_together_and_keeps_the_latest_run(tmp_path):
    """Events of several sessions handed over at once are committed (numbers per session,
    in order); a stream reads what this process wrote from memory, and from the store when
    memory cannot hold it all (another process wrote in between, or an earlier run)."""
    from agents import AgentLoop, SessionRuntime, SQLiteSessionStore
    from agents.serve.runs import Runs, event_type

    store = SQLiteSessionStore(tmp_path / "events.sqlite")
    runs = Runs(SessionRuntime(store, lambda session: AgentLoop(lambda request: "x")))
    writers = [
        threading.Thread(
            target=runs.log.write,
            args=(f"s{n}", [json.dumps({"type": "StepStarted", "n": i}) for i in range(3)]),
        )
        for n in range(8)
    ]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join()
    for n in range(8):
        assert [number for number, _ in store.events(f"s{n}")] == [1, 2, 3]
        assert runs.log.kept(f"s{n}", 1) == store.events(f"s{n}", after=1)
    assert event_type(store.events("s0")[0][1]) == "StepStarted"
    store.append_events("s0", ['{"type":"Other"}'])  # another process's run
    runs.log.write("s0", ['{"type":"RunEnded","step":null}'])
    assert runs.log.kept("s0", 0) is None  # not all in memory: the store is read
    assert runs.log.kept("s0", 4) == [(5, '{"type":"RunEnded","step":null}')]
    assert runs.last("s0") == 5
    runs.log.forget("s0")  # a run starting or ending forgets the events
    assert runs.log.kept("s0", 4) is None
    # One batch that cannot be written (a null where the log keeps text) spoils the group's
    # transaction: the others are written alone, only its run is told.
    from agents.serve.event_log import Pending

    group = [Pending("g1", ['{"type":"A"}']), Pending("g2", [None]), Pending("g3", ["{}"])]
    runs.log._commit(group)  # type: ignore[arg-type]
    assert [p.done.is_set() for p in group] == [True, True, True]
    assert [p.error is None for p in group] == [True, False, True]
    assert store.events("g1") == [(1, '{"type":"A"}')] and store.events("g2") == []
    store.close()
    with pytest.raises(Exception, match="closed"):  # a failed write fails the run's write
        runs.log.write("s1", ['{"type":"StepStarted"}'])


def test_a_writer_waits_at_the_steps_end_for_what_it_did_not_wait_for(tmp_path):
    """A tool's start and streamed text are handed to the log without waiting for their
    commit; the next write that waits (the step's end) returns once they are committed too,
    in order, and raises the failure of one that could not be written."""
    from agents import AgentLoop, SessionRuntime, SQLiteSessionStore
    from agents.serve.event_log import RunWriter
    from agents.serve.runs import Runs

    store = SQLiteSessionStore(tmp_path / "events.sqlite")
    runs = Runs(SessionRuntime(store, lambda session: AgentLoop(lambda request: "x")))
    writer = RunWriter(runs.log, runs.store, "s1")
    writer._held.append('{"type":"ToolCallStarted","step":1}')
    writer.flush(wait=False)
    writer._held.append('{"type":"InferenceDelta","step":1}')
    writer.flush(wait=False)
    writer.write({"type": "StepCompleted", "step": 1})
    assert [event_type_of(text) for _, text in store.events("s1")] == [
        "ToolCallStarted",
        "InferenceDelta",
        "StepCompleted",
    ]
    try:  # what the store raises for a batch that is not text
        store.append_events("other", [None])  # type: ignore[list-item]
    except Exception as exc:
        refused = type(exc)
    writer._held.append(None)  # type: ignore[arg-type]
    writer.flush(wait=False)
    with pytest.raises(refused):
        writer.write({"type": "StepCompleted", "step": 2})
    assert [n for n, _ in store.events("s1")] == [1, 2, 3, 4]  # the step's end got in alone
    store.close()


def event_type_of(text: str) -> str:
    return str(json.loads(text)["type"])


def run_served(runs: Any, session_id: str, message: str) -> None:
    """A run the server's way (``Runs.start``), waited for."""
    runs.start(session_id, lambda runtime: runtime.send(session_id, message))
    deadline = time.monotonic() + 30
    while runs.running(session_id):
        assert time.monotonic() < deadline, "the run did not end"
        time.sleep(0.01)


def test_a_steps_events_are_committed_with_its_checkpoint(tmp_path):
    """A step's events (its end the last of them) commit in the step's checkpoint
    transaction, a run's in its last save: one transaction a step. What the log holds is
    what a stream would read, in order, numbered from 1."""
    from agents import AgentLoop, AgentState, SessionRuntime, SQLiteSessionStore
    from agents.serve.runs import Runs
    from agents.testing import FunctionDriver

    class Counted(SQLiteSessionStore):  # the real store, its writes counted
        def __init__(self, path: Path) -> None:
            super().__init__(path)
            self.saves: list[tuple[int, list[str]]] = []

        def save_with_events(self, session, events, step_execution=None):  # type: ignore[no-untyped-def]
            found = super().save_with_events(session, events, step_execution)
            self.saves.append((session.state.step_count, [event_type_of(e) for e in events]))
            return found

    def answer(request: Any) -> Any:
        done = sum(1 for m in request.messages if m.role.value == "tool")
        return (
            "done"
            if done == 3
            else [ToolCall(id=f"c{done}", name="add", arguments={"a": 1, "b": 2})]
        )

    from agents import ToolCall, tool

    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    store = Counted(tmp_path / "events.sqlite")
    runtime = SessionRuntime(store, lambda session: AgentLoop(FunctionDriver(answer), tools=[add]))
    runs = Runs(runtime)
    held = []  # what memory holds of the session's events when the run starts and ends
    forget = runs.log.forget

    def looked_at(session_id: str) -> None:
        held.append(runs.log.kept(session_id, 0))
        forget(session_id)

    runs.log.forget = looked_at  # type: ignore[method-assign]
    session = runtime.create(AgentState.initial()).session_id
    run_served(runs, session, "go")
    checkpoints = [(steps, kinds) for steps, kinds in store.saves if "StepCompleted" in kinds]
    assert [steps for steps, _ in checkpoints] == [1, 2, 3, 4]  # each step with its own end
    for _, kinds in checkpoints:
        assert kinds.count("StepCompleted") == 1 and kinds[-1] in (
            "StepCompleted",
            "ExecutionCompleted",
        )
    assert store.saves[-1][1][-1] == "ExecutionCompleted"  # the run's end with its last save
    logged = store.events(session)
    assert [number for number, _ in logged] == list(range(1, len(logged) + 1))
    kinds = [event_type_of(text) for _, text in logged]
    assert kinds[0] == "ExecutionStarted" and kinds[-1] == "RunEnded"
    assert kinds.count("ToolCallStarted") == 3 and kinds.count("StepCompleted") == 4
    calls = [k for k in kinds if k.startswith("ToolCall")]  # each start before its end,
    assert calls == ["ToolCallStarted", "ToolCallCompleted"] * 3  # whoever committed it
    assert held == [None, logged]  # what this process kept is what it wrote
    assert runs.log.kept(session, 0) is None  # until the run's end


def test_a_step_whose_checkpoint_fails_still_logs_its_events(tmp_path):
    """The checkpoint that would have committed a step's events fails (another writer
    moved the session on): the events are written with the run's failure, before it."""
    from agents import AgentLoop, AgentState, SessionRuntime, SQLiteSessionStore, ToolCall, tool
    from agents.serve.runs import Runs
    from agents.testing import FunctionDriver

    path = tmp_path / "events.sqlite"
    store = SQLiteSessionStore(path)

    @tool
    def meddle() -> str:
        """Another process saves the session meanwhile."""
        other = SQLiteSessionStore(path)
        other.save(other.load(session))
        other.close()
        return "meddled"

    driver = FunctionDriver(lambda request: [ToolCall(id="m", name="meddle", arguments={})])
    runtime = SessionRuntime(store, lambda s: AgentLoop(driver, tools=[meddle], max_steps=3))
    runs = Runs(runtime)
    session = runtime.create(AgentState.initial()).session_id
    run_served(runs, session, "go")
    kinds = [event_type_of(text) for _, text in store.events(session)]
    assert kinds[-2:] == ["RunFailed", "RunEnded"]
    assert "StepCompleted" in kinds and kinds.index("StepCompleted") < kinds.index("RunFailed")
    assert kinds.count("StepStarted") == 1  # the failed checkpoint ended the run
    failed = json.loads(store.events(session)[-2][1])
    assert failed["error"] == "Conflict"


def test_a_deferred_write_waits_its_time_or_is_taken_back(tmp_path):
    """A deferred write holds back its session's later writes, not other sessions'; the
    session's run can take all of them back (in order) before they are written, and one
    nobody takes is written once its time comes."""
    from agents import AgentLoop, SessionRuntime, SQLiteSessionStore
    from agents.serve.runs import Runs

    store = SQLiteSessionStore(tmp_path / "events.sqlite")
    runs = Runs(SessionRuntime(store, lambda session: AgentLoop(lambda request: "x")))
    first = runs.log.write("s1", ['{"type":"ToolCallStarted"}'], wait=False, defer=30.0)
    second = runs.log.write("s1", ['{"type":"InferenceDelta"}'], wait=False)
    runs.log.write("s2", ['{"type":"StepStarted"}'])  # another session's: written now
    assert store.events("s2") == [(1, '{"type":"StepStarted"}')]
    assert store.events("s1") == [] and not second.done.is_set()
    assert runs.log.take_back("s1") == [first, second]
    assert runs.log.take_back("s1") == []
    started = time.monotonic()
    late = runs.log.write("s1", ['{"type":"ToolCallStarted"}'], wait=False, defer=0.2)
    assert late.done.wait(10) and late.error is None
    assert time.monotonic() - started >= 0.2
    assert store.events("s1") == [(1, '{"type":"ToolCallStarted"}')]


def test_served_runs_take_their_ids_from_the_runtime(tmp_path):
    """A run the server starts gets its execution id from the runtime's id factory (it
    came from a random one whatever the runtime was given)."""
    from agents import AgentLoop, AgentState, SessionRuntime, SQLiteSessionStore
    from agents.serve.runs import Runs
    from agents.testing import SequentialIds

    store = SQLiteSessionStore(tmp_path / "ids.sqlite")
    runtime = SessionRuntime(store, lambda s: AgentLoop(lambda r: "x"), ids=SequentialIds())
    runs = Runs(runtime)
    session = runtime.create(AgentState.initial()).session_id
    run_served(runs, session, "hello")
    state = store.load(session).state
    assert state is not None and state.execution is not None
    assert state.execution.execution_id == SequentialIds().new_id("execution")


def test_a_run_started_as_the_last_one_ends_waits_for_it(tmp_path):
    """A client that saw a run's last event may act at once (approve, send): the run is
    still leaving its thread then, and the new one waits for it instead of being refused
    as busy (the served example's approval failed so, now and then, with 409)."""
    from agents import AgentLoop, AgentState, SessionRuntime, SQLiteSessionStore
    from agents.serve.runs import Runs

    store = SQLiteSessionStore(tmp_path / "ending.sqlite")
    runtime = SessionRuntime(store, lambda s: AgentLoop(lambda r: "x"))
    runs = Runs(runtime)
    leave = runs._finish

    def slow_to_leave(session_id: str) -> None:  # the run's thread scheduled late
        time.sleep(0.3)
        leave(session_id)

    runs._finish = slow_to_leave  # type: ignore[method-assign]
    session = runtime.create(AgentState.initial()).session_id
    runs.start(session, lambda rt: rt.send(session, "one"))
    deadline = time.monotonic() + 10
    while not any(event_type_of(text) == "RunEnded" for _, text in store.events(session)):
        assert time.monotonic() < deadline
        time.sleep(0.005)
    assert runs.running(session)  # its last event is out, its thread not gone yet
    runs.start(session, lambda rt: rt.send(session, "two"))  # no Busy
    while runs.running(session):
        assert time.monotonic() < deadline + 10
        time.sleep(0.01)
    users = [m.content for m in store.load(session).state.messages if m.role.value == "user"]
    assert users == ["one", "two"]


def test_a_finished_stream_leaves_nothing_behind(tmp_path):
    """A long-lived server streams thousands of sessions: once a stream is over, nothing
    of it stays in the table of waiting streams (an empty entry per session streamed was
    kept for good)."""
    from agents import AgentLoop, AgentState, SessionRuntime, SQLiteSessionStore
    from agents.serve.runs import Runs

    store = SQLiteSessionStore(tmp_path / "streams.sqlite")
    runtime = SessionRuntime(store, lambda s: AgentLoop(lambda r: "x"))
    runs = Runs(runtime)

    async def streamed(session_id: str) -> list[str]:
        before = runs.start(session_id, lambda rt: rt.send(session_id, "hi"))
        return [event_type_of(text) async for _, text in runs.stream(session_id, before)]

    for _ in range(3):
        session = runtime.create(AgentState.initial()).session_id
        assert asyncio.run(streamed(session))[-1] == "RunEnded"
        while runs.running(session):
            time.sleep(0.01)
    assert runs._waiting == {}


def test_a_session_created_again_streams_none_of_the_deleted_ones_events(server):
    """A deleted session's events are gone with it: a session created again with the same
    id streams only its own (the server kept the old run's events in memory and streamed
    them — another conversation's text — to the new session's readers)."""
    with httpx.Client() as client:
        created = client.post(f"{server.url}/sessions", json={"session_id": "reused"})
        assert created.status_code == 201
        old = send(client, server.url, "reused", "add 2 3")
        assert old[-2]["data"]["final_response"] == "tool said: 5"
        assert client.delete(f"{server.url}/sessions/reused").status_code == 204
        again = client.post(f"{server.url}/sessions", json={"session_id": "reused"})
        assert again.status_code == 201
        events = stream(client, "GET", f"{server.url}/sessions/reused/events?after=0")
        assert events == []
        new = send(client, server.url, "reused", "hello")
        assert [int(event["id"]) for event in new] == list(range(1, len(new) + 1))
        assert "tool said: 5" not in json.dumps(new)


def test_two_servers_share_one_postgresql_database(postgres_dsn):
    """Two server processes on one PostgreSQL database (``--database`` a URL): runs on both
    at once keep every event, numbered in order, and either server streams any session's
    log as it was streamed live."""
    first, second = Server(postgres_dsn).start(), Server(postgres_dsn).start()  # type: ignore[arg-type]
    servers = [first, second]
    try:
        with httpx.Client() as client:
            sessions = [new_session(client, first.url) for _ in range(4)]
            found: dict[str, list[dict[str, Any]]] = {}

            def talk(index: int) -> None:
                with httpx.Client() as own:
                    base = servers[index % 2].url
                    found[sessions[index]] = send(own, base, sessions[index], f"add {index} 1")

            talkers = [threading.Thread(target=talk, args=(i,)) for i in range(4)]
            for talker in talkers:
                talker.start()
            for talker in talkers:
                talker.join()
            for index, name in enumerate(sessions):
                streamed = found[name]
                assert streamed[-2]["data"]["final_response"] == f"tool said: {index + 1}"
                numbers = [int(e["id"]) for e in streamed]
                assert numbers == list(range(1, len(numbers) + 1))
                other = servers[(index + 1) % 2].url  # not the one that ran it
                stored = stream(client, "GET", f"{other}/sessions/{name}/events")
                assert [e["data"] for e in stored] == [e["data"] for e in streamed]
    finally:
        first.stop()
        second.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def shared_database(request: Any, tmp_path: Path) -> Any:
    """A database two server processes share: a SQLite file, or a PostgreSQL URL."""
    if request.param == "sqlite":
        return tmp_path / "shared.sqlite"
    return request.getfixturevalue("postgres_dsn")


@pytest.fixture
def two_servers(shared_database: Any) -> Iterator[tuple[Server, Server]]:
    first, second = Server(shared_database).start(), Server(shared_database).start()
    yield first, second
    first.stop()
    second.stop()


def test_a_stream_dropped_on_one_server_resumes_on_another_while_the_run_goes_on(two_servers):
    """A dropped stream resumes with ``Last-Event-ID`` on another
    server process while the run goes on in the first — every later event once (the second
    process resumed the run too, so it was made twice and its events repeated)."""
    first, second = two_servers
    with httpx.Client() as client:
        session = new_session(client, first.url)
        seen = dropped_after(client, first.url, session, "slow", 3)  # goes on in the first
        rest = stream(
            client,
            "GET",
            f"{second.url}/sessions/{session}/events",
            headers={"Last-Event-ID": seen[-1]["id"]},
        )
        kinds = [e["event"] for e in seen + rest]
        assert kinds.count("ExecutionStarted") == 1 and kinds[-1] == "RunEnded"
        assert kinds.count("RunEnded") == 1
        numbers = [int(e["id"]) for e in seen + rest]
        assert numbers == list(range(1, len(numbers) + 1))
        assert rest[-2]["data"]["final_response"] == "tool said: done"
        everything = stream(client, "GET", f"{first.url}/sessions/{session}/events")
        assert [e["data"] for e in everything] == [e["data"] for e in seen + rest]


def test_a_run_in_progress_on_one_server_is_busy_on_the_other(two_servers):
    """While one process runs a session, another refuses what would start or change a run
    of it — a message, a deletion, a steering message — with 409 and says why; once the
    run is over, it takes them."""
    first, second = two_servers
    with httpx.Client() as client:
        session = new_session(client, first.url)
        seen = dropped_after(client, first.url, session, "slow", 3)
        assert seen[-1]["event"] != "RunEnded"
        base = f"{second.url}/sessions/{session}"
        refused = [
            client.post(f"{base}/messages", json={"message": "add 1 1"}),
            client.delete(base),
            client.post(f"{base}/steer", json={"message": "hurry"}),
        ]
        for answer in refused:
            assert answer.status_code == 409, answer.text
            assert "another server process" in answer.json()["error"]
        stream(client, "GET", f"{base}/events", headers={"Last-Event-ID": seen[-1]["id"]})
        after = send(client, second.url, session, "add 1 1")
        assert after[-2]["data"]["final_response"] == "tool said: 2"
        assert client.delete(base).status_code == 204


def test_resuming_a_session_whose_run_is_over_writes_nothing(tmp_path):
    """A stream that finds a session unfinished asks for its run to go on; when that run
    ended meanwhile (in another process, say) nothing runs and its log gets no second
    ``RunEnded``; an unfinished one goes on from its last checkpoint."""
    from agents import AgentLoop, AgentState, SessionRuntime, SQLiteSessionStore
    from agents.records.execution import ExecutionState
    from agents.serve.runs import Runs
    from agents.testing import FunctionDriver

    store = SQLiteSessionStore(tmp_path / "resume.sqlite")
    runtime = SessionRuntime(store, lambda s: AgentLoop(FunctionDriver(lambda r: "x")))
    runs = Runs(runtime)
    done = runtime.create(AgentState.initial()).session_id
    runtime.send(done, "hi")
    runs.resume(done)
    while runs.running(done):
        time.sleep(0.01)
    assert store.events(done) == []
    left = runtime.create(AgentState.initial())  # a run committed, then its process died
    assert left.state is not None
    pending = left.state.with_user_message("hi").with_execution(ExecutionState.pending("e1"))
    store.save(left.with_state(pending))
    runs.resume(left.session_id)
    while runs.running(left.session_id):
        time.sleep(0.01)
    kinds = [event_type_of(text) for _, text in store.events(left.session_id)]
    assert kinds[-1] == "RunEnded" and kinds.count("RunEnded") == 1
    assert store.load(left.session_id).state.final_response == "x"
    runs.close()
    store.close()


def test_a_store_that_cannot_be_used_is_a_503_with_one_line(tmp_path):
    """The session store locked by another process past its timeout: the request gets
    ``503`` and a one-line JSON error naming the reason (it was a 500 and a traceback in the
    server's log); once the lock is gone, the same request succeeds."""
    import sqlite3

    from agents import AgentLoop, SQLiteSessionStore
    from agents.serve import app
    from agents.testing import FunctionDriver

    path = tmp_path / "locked.sqlite"
    store = SQLiteSessionStore(path, timeout=0.05)
    application = app(lambda s: AgentLoop(FunctionDriver(lambda r: "x")), store=store)

    async def create() -> httpx.Response:
        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://local") as client:
            return await client.post("/sessions", json={"session_id": "s1"})

    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    try:
        refused = asyncio.run(create())
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert refused.status_code == 503
    assert "locked" in refused.json()["error"] and "\n" not in refused.text
    assert asyncio.run(create()).status_code == 201
    store.close()


def test_a_message_loads_its_session_once(tmp_path):
    """Sending a message checks that the session exists without loading it (a long
    conversation was read twice a message: the handler's 404 check, then the run); an
    unknown session is still a 404 before anything runs."""
    from agents import AgentLoop, SQLiteSessionStore
    from agents.serve import app
    from agents.testing import FunctionDriver

    class Counting(SQLiteSessionStore):
        loads = 0

        def load(self, session_id):
            Counting.loads += 1
            return super().load(session_id)

    store = Counting(tmp_path / "count.sqlite")
    application = app(lambda s: AgentLoop(FunctionDriver(lambda r: "x")), store=store)

    async def talk() -> tuple[int, int]:
        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://local") as client:
            await client.post("/sessions", json={"session_id": "s1"})
            unknown = await client.post("/sessions/nope/messages", json={"message": "hi"})
            before = Counting.loads
            async with client.stream(
                "POST", "/sessions/s1/messages", json={"message": "hi"}
            ) as response:
                assert response.status_code == 200
                [line async for line in response.aiter_lines()]
            return unknown.status_code, Counting.loads - before

    status, loads = asyncio.run(talk())
    assert status == 404
    assert loads == 1  # the run's own
    store.close()


def _inbox_runs(tmp_path: Path, answer: Any, hooks: Any = ()) -> tuple[Any, Any, str]:
    from agents import AgentLoop, AgentState, SessionRuntime, SQLiteSessionStore
    from agents.serve.runs import Runs
    from agents.testing import FunctionDriver

    store = SQLiteSessionStore(tmp_path / "inbox.sqlite")
    runtime = SessionRuntime(store, lambda s: AgentLoop(FunctionDriver(answer), hooks=hooks))
    return store, Runs(runtime), runtime.create(AgentState.initial()).session_id


def _hand_both_while_paused(
    runs: Any, session: str, paused: threading.Event, resume: threading.Event
) -> None:
    """Start a run of ``session``; once it is ``paused``, hand it a steering message and a
    follow-up, ``resume`` it and wait until it has ended."""
    runs.start(session, lambda rt: rt.send(session, "hi"))
    assert paused.wait(10)
    assert runs.hand(session, "steer", "also say bye")
    assert runs.hand(session, "follow_up", "and then this")
    resume.set()
    while runs.running(session):
        time.sleep(0.01)


def test_a_follow_up_handed_during_the_last_inference_starts_another_step(tmp_path):
    """Steering and a follow-up handed to a run while the model writes its final answer
    (after the run's last "before step"): the follow-up starts another step, as one queued
    in the state does, and the steering joins it (both were dropped: the run ended without
    taking them, though the client was told they went to the run in progress)."""
    asked, handed = threading.Event(), threading.Event()

    def answer(request: Any) -> str:
        if not asked.is_set():  # the first answer is written while the messages arrive
            asked.set()
            handed.wait(10)
        return "answered"

    store, runs, session = _inbox_runs(tmp_path, answer)
    _hand_both_while_paused(runs, session, asked, handed)
    texts = [m.content for m in store.load(session).state.messages]
    assert texts == ["hi", "answered", "and then this", "also say bye", "answered"]
    store.close()


def test_what_reaches_a_run_after_its_last_step_is_kept_for_the_next_run(tmp_path):
    """A steering message and a follow-up handed over once the run has taken its last step
    (here: while an after-execution hook works) are queued in the stored session for its
    next run, and the run's stream still ends with ``RunEnded``; once the run has let go,
    ``hand`` refuses (the server saves such a message for the next run itself)."""
    from agents import HookTrigger, hook

    finishing, go_on = threading.Event(), threading.Event()

    @hook(HookTrigger.AFTER_EXECUTION, name="slow_to_finish")
    def slow_to_finish(context: Any) -> Any:
        finishing.set()
        go_on.wait(10)
        return context

    store, runs, session = _inbox_runs(tmp_path, lambda request: "answered", [slow_to_finish])
    _hand_both_while_paused(runs, session, finishing, go_on)
    state = store.load(session).state
    assert [m.content for m in state.messages] == ["hi", "answered"]
    assert [m.content for m in state.context.steering] == ["also say bye"]
    assert [m.content for m in state.context.follow_ups] == ["and then this"]
    assert event_type_of(store.events(session)[-1][1]) == "RunEnded"
    assert not runs.hand(session, "steer", "too late")
    store.close()


def test_steering_messages_sent_at_once_between_runs_are_all_kept(tmp_path):
    """Several steering messages and follow-ups sent at the same moment to a session with
    no run in progress: each is accepted and queued for the next run (each request read the
    session before taking its turn, so all but one failed with 409, a stale version)."""
    from agents import AgentLoop, AgentState, SQLiteSessionStore
    from agents.serve import app
    from agents.testing import FunctionDriver

    store = SQLiteSessionStore(tmp_path / "steer.sqlite")
    session = store.create(AgentState.initial()).session_id
    application = app(lambda s: AgentLoop(FunctionDriver(lambda r: "x")), store=store)

    async def send_all() -> list[int]:
        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://local") as client:
            answers = await asyncio.gather(
                *(
                    client.post(
                        f"/sessions/{session}/{'steer' if n % 2 else 'follow-ups'}",
                        json={"message": f"m{n}"},
                    )
                    for n in range(6)
                )
            )
        return [answer.status_code for answer in answers]

    assert asyncio.run(send_all()) == [202] * 6
    context = store.load(session).state.context
    queued = [m.content for m in (*context.steering, *context.follow_ups)]
    assert sorted(queued) == [f"m{n}" for n in range(6)]
    store.close()


def test_unknown_routes_and_methods_are_one_line_of_json_too(server):
    """A path the API has not and a method a path does not take: ``404`` and ``405`` as one
    line of JSON like every other error (Starlette answered them in plain text)."""
    with httpx.Client() as client:
        missing = client.get(f"{server.url}/no/such/path")
        assert missing.status_code == 404 and set(missing.json()) == {"error"}
        wrong = client.put(f"{server.url}/sessions")
        assert wrong.status_code == 405 and set(wrong.json()) == {"error"}
        assert "POST" in wrong.headers["allow"]


def test_closing_keeps_the_leases_of_runs_in_progress_until_they_end(tmp_path):
    """``Runs.close`` (the server shutting down) while a run goes on: its lease stays held
    until the run has ended — another process must not take the session up while this one
    still writes it (the leases were given back at once) — and no new run starts."""
    from agents.persistence.leases import FileRunLeases
    from agents.serve.runs import Busy

    paused, resume = threading.Event(), threading.Event()

    def answer(request: Any) -> str:
        paused.set()
        resume.wait(10)
        return "answered"

    store, runs, session = _inbox_runs(tmp_path, answer)
    other = FileRunLeases(str(tmp_path / "inbox.sqlite") + "-runs")  # another server's view
    try:
        runs.start(session, lambda rt: rt.send(session, "hi"))
        assert paused.wait(10)
        runs.close()
        assert other.held(session)
        with pytest.raises(Busy, match="shutting down"):
            runs.start("another", lambda rt: rt.send("another", "hi"))
        resume.set()
        while runs.running(session):
            time.sleep(0.01)
        assert not other.held(session) and other.acquire(session)
        assert store.load(session).state.final_response == "answered"
    finally:
        other.close()
        store.close()


def test_the_streamed_timeline_rows_agree_with_get_timeline(server):
    """Each ``StepCompleted`` row of the stream is the row ``GET /timeline`` gives, the
    final step's stop reason included; ``ExecutionCompleted`` carries the last row as the
    timeline gives it once the run is over."""
    with httpx.Client() as client:
        session = new_session(client, server.url)
        events = send(client, server.url, session, "add 2 3")
        streamed = [e["data"]["timeline"] for e in events if e["event"] == "StepCompleted"]
        rows = client.get(f"{server.url}/sessions/{session}/timeline").json()["rows"]
        assert streamed == rows and rows[-1]["stop_reason"] == "completed"
        (ended,) = [e["data"] for e in events if e["event"] == "ExecutionCompleted"]
        assert ended["timeline"] == rows[-1]


def test_a_run_stopped_after_its_last_step_gets_the_rows_reason_at_its_end():
    """A run stopped by its step limit at the next step's start: the step's own row had no
    reason to stop yet; ``ExecutionCompleted`` carries the row as the timeline gives it."""
    from helpers import add, initial, make_loop

    from agents.records.codec import encode_value
    from agents.serve.event_log import event_data
    from agents.testing import call, capture_events

    recorder = capture_events()
    final = make_loop(call("add", a=1, b=2), tools=[add], max_steps=1, listeners=[recorder]).run(
        initial()
    )
    data = [event_data(e) for e in recorder.events]
    (step,) = [d for d in data if d["type"] == "StepCompleted"]
    (ended,) = [d for d in data if d["type"] == "ExecutionCompleted"]
    assert step["timeline"]["stop_reason"] is None
    assert ended["timeline"]["stop_reason"] == "steps_limit"
    assert ended["timeline"] == encode_value(final.timeline()[-1])


@pytest.mark.parametrize(
    "payload",
    [
        None,
        {},
        {"approved": "false"},
        {"approved": "no"},
        {"approved": 0},
        {"approved": 1},
        {"approved": {"x": 1}},
        {"approved": True, "reason": 3},
        {"approved": True, "extra": 1},
    ],
    ids=repr,
)
def test_a_decision_that_is_not_a_boolean_approves_nothing_on_any_route(server, payload):
    """An AG-UI ``resume`` whose payload's ``approved`` is missing or not a boolean
    (``"false"``, ``"no"``, ``0``, an object) is a 422 and approves nothing, as ``POST
    /approvals`` refuses the same decision: the refund stays waiting, not made."""
    with httpx.Client() as client:
        thread = f"thread-{abs(hash(repr(payload)))}"
        first = agui(
            client,
            server.url,
            run_input(thread, "run-1", [{"id": "u1", "role": "user", "content": "refund 10"}]),
        )
        (interrupt,) = first[-1].outcome.interrupts
        entry: dict[str, Any] = {"interruptId": interrupt.id, "status": "resolved"}
        if payload is not None:
            entry["payload"] = payload
        refused = client.post(
            f"{server.url}/ag-ui", json=run_input(thread, "run-2", [], resume=[entry])
        )
        assert refused.status_code == 422, refused.text
        rest = client.post(
            f"{server.url}/sessions/{thread}/approvals",
            json={"call_id": interrupt.id, **(payload or {})},
        )
        assert rest.status_code == 422, rest.text
        state = json.loads(client.get(f"{server.url}/sessions/{thread}").text)
        assert [c["id"] for c in state["execution"]["pending_approvals"]] == [interrupt.id]
        assert state["execution"]["approvals"] == []
        assert all(m["role"] != "tool" for m in state["context"]["store"]["messages"])


def agui_lines(
    client: httpx.Client, base: str, body: dict[str, Any], **headers: str
) -> list[tuple[str, Any]]:
    """POST /ag-ui; ``(id, event)`` of each event, parsed by ag-ui-protocol's types."""
    from ag_ui.core import Event
    from pydantic import TypeAdapter

    adapter: TypeAdapter[Any] = TypeAdapter(Event)
    with client.stream("POST", f"{base}/ag-ui", json=body, headers=headers, timeout=60) as reply:
        assert reply.status_code == 200, reply.read()
        return [
            (event["id"], adapter.validate_python(event["data"]))
            for event in sse(reply.iter_lines())
        ]


def test_a_repeated_ag_ui_run_id_replays_its_events_and_runs_nothing(server):
    """The same request POSTed twice (same threadId, runId and message): the second gets
    the first's events, ids and all, and nothing runs again — one user message, one tool
    call in the session."""
    body = run_input("thread-twice", "run-1", [{"id": "u1", "role": "user", "content": "add 2 3"}])
    with httpx.Client() as client:
        first = agui_lines(client, server.url, body)
        second = agui_lines(client, server.url, body)
        assert [(i, e.model_dump()) for i, e in second] == [(i, e.model_dump()) for i, e in first]
        assert first[-1][1].result == "tool said: 5"
        state = json.loads(client.get(f"{server.url}/sessions/thread-twice").text)
        roles = [m["role"] for m in state["context"]["store"]["messages"]]
        assert roles == ["user", "assistant", "tool", "assistant"]
        assert state["execution_count"] == 1


def test_a_dropped_ag_ui_stream_resumes_with_last_event_id(server):
    """AG-UI events carry ids; a client whose stream dropped mid-run POSTs the same input
    with ``Last-Event-ID`` and gets the rest of the run's AG-UI events, none repeated and
    none lost, while the run went on without it."""
    from ag_ui.core import Event
    from pydantic import TypeAdapter

    adapter: TypeAdapter[Any] = TypeAdapter(Event)
    body = run_input("thread-drop", "run-1", [{"id": "u1", "role": "user", "content": "slow"}])
    seen: list[tuple[str, Any]] = []
    with httpx.Client() as client:
        with client.stream("POST", f"{server.url}/ag-ui", json=body, timeout=60) as reply:
            for event in sse(reply.iter_lines()):
                seen.append((event["id"], adapter.validate_python(event["data"])))
                if len(seen) == 4:
                    break
        rest = agui_lines(client, server.url, body, **{"Last-Event-ID": seen[-1][0]})
        whole = agui_lines(client, server.url, body)
    assert [i for i, _ in seen + rest] == [i for i, _ in whole]
    assert [e.model_dump() for _, e in seen + rest] == [e.model_dump() for _, e in whole]
    assert whole[-1][1].type.value == "RUN_FINISHED"
    kinds = [e.type.value for _, e in whole]
    assert kinds.count("TOOL_CALL_START") == 4  # the run went on while no one listened


def test_an_ag_ui_last_event_id_no_event_has_is_refused(server):
    """A ``Last-Event-ID`` of more digits than any event number (past the 4,300 that
    ``int`` reads) was its bare ``ValueError``: a 500 where the id is bad input."""
    body = run_input("thread-huge-id", "run-1", [{"id": "u1", "role": "user", "content": "hi"}])
    with httpx.Client() as client:
        for header in ("9" * 5_000 + ".0", "1." + "9" * 5_000, "9" * 19 + ".0"):
            refused = client.post(
                f"{server.url}/ag-ui", json=body, headers={"Last-Event-ID": header}, timeout=60
            )
            assert refused.status_code == 422, refused.text
            assert "is no AG-UI event id" in refused.json()["error"]
        assert agui(client, server.url, body)[-1].result == "you said: hi"


def test_session_ids_follow_one_rule_on_every_route(server):
    """An id no request could reach is refused where a session would be made: too long
    for a URL, or holding ``/`` (also an AG-UI ``threadId``); an id that is accepted is
    reachable by GET and DELETE. The ``Bearer`` scheme's name is case-insensitive."""
    with httpx.Client() as client:
        long_id = client.post(f"{server.url}/sessions", json={"session_id": "x" * 70_000})
        assert long_id.status_code == 422 and "longer than" in long_id.json()["error"]
        for thread in ("a/b", "x" * 70_000, ".."):
            body = run_input(thread, "r", [{"id": "u", "role": "user", "content": "hi"}])
            refused = client.post(f"{server.url}/ag-ui", json=body)
            assert refused.status_code == 422 and "threadId" in refused.json()["error"]
        made = agui(
            client,
            server.url,
            run_input("a b%c", "r", [{"id": "u", "role": "user", "content": "hi"}]),
        )
        assert made[-1].result == "you said: hi"
        reached = client.get(f"{server.url}/sessions/a%20b%25c")
        assert reached.status_code == 200, reached.text
        assert client.delete(f"{server.url}/sessions/a%20b%25c").status_code in (200, 204)


def test_the_bearer_scheme_is_case_insensitive(tmp_path):
    """``Authorization: bearer T`` is ``Bearer T`` (RFC 7235); another token is 401."""
    server = Server(tmp_path / "s.sqlite", "--token", "T0k3n").start()
    try:
        with httpx.Client() as client:
            for scheme in ("Bearer", "bearer", "BEARER"):
                ok = client.post(
                    f"{server.url}/sessions", json={}, headers={"Authorization": f"{scheme} T0k3n"}
                )
                assert ok.status_code == 201, (scheme, ok.text)
            wrong = client.post(
                f"{server.url}/sessions", json={}, headers={"Authorization": "bearer other"}
            )
            assert wrong.status_code == 401
    finally:
        server.stop()


def test_the_how_tos_curl_lines_work_against_the_example_they_name(tmp_path):
    """The ``sh`` block of docs/how-to/serve.md that speaks to the support example, run
    line by line with curl against ``agents serve examples.support_agent:loop`` (each
    line must succeed: ``--fail-with-body``), ends with the refund made after the first
    was denied; the events after 7 hold the second approval request."""
    import re
    import shutil

    if shutil.which("curl") is None:
        pytest.skip("curl is not installed here")
    page = (TESTS.parent / "docs" / "how-to" / "serve.md").read_text(encoding="utf-8")
    (block,) = [b for b in re.findall(r"^```sh\n(.*?)^```", page, re.M | re.S) if "ID=$(curl" in b]
    server = Server(tmp_path / "s.sqlite")
    server.target = "examples.support_agent:loop"
    server.path = str(TESTS.parent)
    server.start()
    outputs = []
    try:
        script = block.replace("localhost:8000", f"127.0.0.1:{server.port}")
        script = script.replace("curl ", "curl --fail-with-body --max-time 30 ")
        lines = [line for line in script.splitlines() if line and not line.startswith("#")]
        done = subprocess.run(
            ["bash", "-e", "-c", "\n".join(f"{line}\necho '@@@'" for line in lines)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        outputs = done.stdout.split("@@@\n")
    finally:
        server.stop()
    assert "event: ApprovalRequested" in outputs[1] and '"call_2"' in outputs[1]
    after_seven = outputs[3]
    assert after_seven.startswith("id: 8\n") and '"call_3"' in after_seven
    timeline = json.loads(outputs[-2])
    assert timeline["status"] == "completed"
    assert [row["tools"] for row in timeline["rows"]][-2:] == [["refund"], []]


def test_the_page_is_package_data_served_as_static_files():
    """The chat page's HTML, CSS and JavaScript are files of the package (no Python string
    holds them), served at ``/`` and under ``/static/`` without the token the API needs."""
    from starlette.testclient import TestClient

    import agents
    from agents import AgentLoop, InMemorySessionStore
    from agents.serve.asgi import app
    from agents.testing import ScriptedDriver, reply

    folder = Path(agents.__file__).parent / "serve" / "static"
    assert {path.name for path in folder.iterdir()} >= {"chat.html", "chat.css", "chat.js"}
    assert "<script" not in (folder.parent / "page.py").read_text(encoding="utf-8")
    served = app(
        lambda session: AgentLoop(ScriptedDriver([reply("hi")])),
        store=InMemorySessionStore(),
        token="t0ken",
        page=True,
    )
    with TestClient(served) as client:
        page = client.get("/")
        assert page.status_code == 200 and 'src="/static/chat.js"' in page.text
        for name, kind in (("chat.js", "javascript"), ("chat.css", "css")):
            answer = client.get(f"/static/{name}")
            assert answer.status_code == 200 and kind in answer.headers["content-type"]
            assert answer.content == (folder / name).read_bytes()
        assert client.get("/sessions/x").status_code == 401


@pytest.mark.skipif(
    __import__("helpers").CHROMIUM is None,
    reason="Chromium is not installed here (.ci/run installs Debian's chromium)",
)
def test_the_page_shows_a_tools_image_as_a_thumbnail_and_reasoning_folded(server, tmp_path):
    """In headless Chromium: a tool's screenshot is shown as a thumbnail (fetched from the
    session's images, decoded by the browser), and a reasoning model's thinking sits folded
    above its answer."""
    browser = Browser(f"{server.url}/", tmp_path / "profile")
    try:
        browser.wait_for("document.readyState === 'complete' && !!document.getElementById('send')")
        browser.evaluate(
            "document.getElementById('message').value = 'shot';"
            "document.getElementById('send').requestSubmit(); true"
        )
        size = browser.wait_for(
            "(() => { const i = document.querySelector('img.thumb');"
            " return i && i.complete && i.naturalWidth ?"
            " [i.naturalWidth, i.naturalHeight] : null; })()"
        )
        assert size == [40, 30]
        browser.evaluate(
            "document.getElementById('message').value = 'think';"
            "document.getElementById('send').requestSubmit(); true"
        )
        browser.wait_for("!!document.querySelector('details.reasoning')")
        folded = browser.evaluate(
            "(() => { const d = document.querySelector('details.reasoning');"
            " return [d.open, d.querySelector('pre').textContent]; })()"
        )
        assert folded == [False, "The user wants me to think."]
        browser.wait_for(
            "document.getElementById('log').textContent.includes('I thought about it.')"
        )
    finally:
        browser.close()


def test_a_sessions_images_are_served_by_hash_and_nothing_else(server):
    """GET /sessions/{id}/images/{sha256}: an image the session holds, with nosniff and a
    policy that runs nothing; any other hash is a 404."""
    import hashlib

    from serve_agent import PNG

    with httpx.Client() as client:
        client.post(f"{server.url}/sessions", json={"session_id": "pics"})
        send(client, server.url, "pics", "shot")
        sha = hashlib.sha256(PNG).hexdigest()
        got = client.get(f"{server.url}/sessions/pics/images/{sha}")
        assert got.status_code == 200 and got.content == PNG
        assert got.headers["content-type"] == "image/png"
        assert got.headers["x-content-type-options"] == "nosniff"
        assert got.headers["content-security-policy"] == "default-src 'none'"
        assert client.get(f"{server.url}/sessions/pics/images/{'0' * 64}").status_code == 404
        assert client.get(f"{server.url}/sessions/pics/images/..%2F..").status_code == 404
