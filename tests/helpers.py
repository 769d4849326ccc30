"""Helpers for the tests: deterministic loops, tools, and a recorder of phases."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from agents import (
    AgentLoop,
    AgentState,
    AsyncPostgresSessionStore,
    HookContext,
    HookTrigger,
    InferenceRequest,
    ToolCall,
    hook,
    tool,
)
from agents.testing import ScriptedDriver, ScriptStep, SequentialIds, TickingClock


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: the first number
        b: the second number
    """
    return a + b


@tool
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@tool
def explode(reason: str = "boom") -> str:
    """Always raise."""
    raise RuntimeError(reason)


TIMELINE_HEADER = [
    "step",
    "type",
    "tools",
    "input_tokens",
    "output_tokens",
    "cost",
    "duration",
    "stop_reason",
]
"""The columns ``agents inspect`` prints, as a test expects them."""


def make_loop(*script: ScriptStep, tools: Any = (add,), **options: Any) -> AgentLoop:
    """A loop over a scripted model with a ticking clock and sequential ids."""
    options.setdefault("clock", TickingClock())
    options.setdefault("ids", SequentialIds())
    return AgentLoop(ScriptedDriver(script), tools=tools, **options)


def ended_in_threads(target: Callable[[int], Any], count: int, seconds: float) -> bool:
    """Run ``target(i)`` for ``i`` in ``range(count)``, each in a daemon thread; whether all
    of them ended within ``seconds`` (a deadlock fails the test instead of hanging it)."""
    threads = [threading.Thread(target=target, args=(i,), daemon=True) for i in range(count)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + seconds
    for thread in threads:
        thread.join(timeout=max(0.0, deadline - time.monotonic()))
    return not any(thread.is_alive() for thread in threads)


def initial(text: str = "hello", system: str = "You are a test agent.") -> AgentState:
    """A fresh state with one user message."""
    return AgentState.initial(system, messages=[text])


class PhaseRecorder:
    """Hooks on every trigger and interceptors on both effects, writing one shared log."""

    def __init__(self, on: Callable[[HookContext], HookContext | None] | None = None) -> None:
        self.log: list[str] = []
        self._on = on

        @hook(list(HookTrigger), priority=-100, name="recorder")
        def record(context: HookContext) -> HookContext:
            label = context.trigger.name
            if context.tool_call is not None:
                label += f"({context.tool_call.name})"
            self.log.append(label)
            if self._on is not None:
                changed = self._on(context)
                if changed is not None:
                    return changed
            return context

        self.hook = record

    def intercept_inference(self, request: InferenceRequest, call_next: Any) -> Any:
        self.log.append("infer")
        return call_next(request)

    def intercept_tool(self, call: ToolCall, call_next: Any) -> Any:
        self.log.append(f"tool({call.name})")
        return call_next(call)


def python(
    *args: str, cwd: Path, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``python ARGS`` in a child process (this interpreter), its output captured."""
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        env=None if env is None else dict(env),
        capture_output=True,
        text=True,
        timeout=120,
    )


def agents_cli(
    *args: str, cwd: Path, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m agents ARGS`` in a child process."""
    return python("-m", "agents", *args, cwd=cwd, env=env)


CHROMIUM = next(
    (p for p in (shutil.which("chromium"), shutil.which("chromium-browser")) if p), None
)
"""Debian's Chromium (``.ci/run`` installs it when missing), or ``None``."""

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--enable-logging=stderr",
    "--v=0",
]


def chromium(tmp_path: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    """Headless Chromium with a fresh profile under ``tmp_path``."""
    profile = tmp_path / "profile"
    profile.mkdir(exist_ok=True)
    assert CHROMIUM is not None
    return subprocess.run(
        [CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *arguments],
        capture_output=True,
        text=True,
        timeout=120,
    )


def rendered_dom(page: Path, tmp_path: Path) -> str:
    """The DOM of ``page`` as Chromium renders it; the page as written where Chromium is
    missing (CI installs it, so the real check runs there)."""
    if CHROMIUM is None:
        return page.read_text(encoding="utf-8")
    shown = chromium(tmp_path, "--dump-dom", page.as_uri())
    assert shown.returncode == 0, shown.stderr[-2000:]
    return shown.stdout


class BlockingAsyncStore:
    """Drives a real ``AsyncPostgresSessionStore`` from blocking code, on an event loop in a
    thread of its own, so the whole contract suite runs against the async store too."""

    def __init__(self, dsn, **options):
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._store = self._call(AsyncPostgresSessionStore.open(dsn, **options))

    def _call(self, coroutine):
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout=60)

    def __getattr__(self, name):
        method = getattr(self._store, name)
        return lambda *args, **kwargs: self._call(method(*args, **kwargs))

    def close(self):
        self._call(self._store.close())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()


def assert_equal_states_encode_alike(states: list[AgentState]) -> None:
    """Any two of ``states`` that are ``==`` have the same ``to_json()``
    (docs/design/determinism.md)."""
    encoded = [state.to_json() for state in states]
    for i, first in enumerate(states):
        for j in range(i + 1, len(states)):
            if encoded[i] != encoded[j] and first == states[j]:
                raise AssertionError(
                    f"states {i} and {j} are equal but encode differently:\n"
                    f"{encoded[i][:2000]}\n{encoded[j][:2000]}"
                )


def json_places(data: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The path of every value inside plain JSON data, the top one (``()``) first."""
    found = [at]
    if isinstance(data, dict):
        for key, item in data.items():
            found += json_places(item, (*at, key))
    elif isinstance(data, list):
        for index, item in enumerate(data):
            found += json_places(item, (*at, index))
    return found


def put_at(data: Any, path: Any, value: Any) -> None:
    """Set the value at ``path`` inside plain JSON data (``KeyError`` as the value: remove
    it); a path the data does not have raises ``KeyError``, ``IndexError`` or ``TypeError``."""
    owner = data
    for part in path[:-1]:
        owner = owner[part]
    if value is KeyError:
        del owner[path[-1]]
    else:
        owner[path[-1]] = value


class Browser:
    """Headless Chromium driven over the DevTools protocol (its own websocket)."""

    def __init__(self, url: str, profile: Path) -> None:
        assert CHROMIUM is not None
        self.process = subprocess.Popen(
            [
                CHROMIUM,
                *CHROMIUM_FLAGS,
                f"--user-data-dir={profile}",
                "--remote-debugging-port=0",
                "--window-size=1000,900",
                url,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.process.stderr is not None
        for line in self.process.stderr:
            if "DevTools listening on" in line:
                port = int(line.split("127.0.0.1:")[1].split("/")[0])
                break
        else:
            raise AssertionError("Chromium did not start its DevTools server")
        deadline = time.monotonic() + 20
        target = None
        import httpx  # (the dev extra's; only this helper needs it)

        while target is None and time.monotonic() < deadline:
            pages = httpx.get(f"http://127.0.0.1:{port}/json").json()
            target = next((p for p in pages if p.get("type") == "page"), None)
            time.sleep(0.1)
        assert target is not None
        from websockets.sync.client import connect

        self._stack = contextlib.ExitStack()
        self.socket = self._stack.enter_context(
            connect(target["webSocketDebuggerUrl"], max_size=None)
        )
        self.sent = 0

    def call(self, method: str, **params: Any) -> Any:
        self.sent += 1
        self.socket.send(json.dumps({"id": self.sent, "method": method, "params": params}))
        while True:
            answer = json.loads(self.socket.recv(timeout=30))
            if answer.get("id") == self.sent:
                assert "error" not in answer, answer
                return answer.get("result")

    def evaluate(self, expression: str) -> Any:
        result = self.call(
            "Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True
        )
        return result["result"].get("value")

    def wait_for(self, expression: str, seconds: float = 30) -> Any:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.1)
        raise AssertionError(f"never true: {expression}")

    def close(self) -> None:
        self._stack.close()
        self.process.terminate()
        self.process.wait(10)
        if self.process.stderr is not None:
            self.process.stderr.close()
