"""The two kinds of MCP server a loop takes as tools: ``MCPServerStdio``, a process spoken
to over its stdin and stdout, and ``MCPServerHTTP``, a server at a URL over streamable HTTP
— how each is started and connected; what they share (the session, the catalogue, the
calls) is ``agents.mcp.client.MCPServer``."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from typing import Any, Final

from agents.errors import InvalidType
from agents.mcp import sdk
from agents.mcp.client import START_TIMEOUT, MCPServer
from agents.mcp.connection import Connection
from agents.records.arguments import listed
from agents.records.arguments import path as checked_path
from agents.records.arguments import text as checked_text
from agents.records.redaction import REDACTED, is_secret_key, scrub, shown_url

__all__ = ["MCPServerHTTP", "MCPServerStdio"]


# Starts a server so that it is killed when the thread that started it ends, even by a
# kill -9 of this process (Linux's PR_SET_PDEATHSIG), then becomes the server (exec).
# A command it cannot run is one line on stderr (no traceback) and exit 127, as in a shell.
_LAUNCHER: Final = """
import ctypes, os, signal, sys
ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
if os.getppid() == 1:  # the parent died before prctl took effect
    sys.exit(1)
try:
    os.execvp(sys.argv[1], sys.argv[1:])
except OSError as exc:
    sys.stderr.write(f"cannot run {sys.argv[1]!r}: {exc.strerror}\\n")
    sys.exit(127)
"""


def _unrunnable(command: str, env: Mapping[str, str] | None, cwd: Any) -> str | None:
    """Why ``command`` cannot be run as a server's program (the OS error, as ``execvp``
    would meet it: no such file, not executable), or ``None`` when it can."""
    if os.sep in command or (os.altsep and os.altsep in command):
        path = os.path.join(os.fspath(cwd), command) if cwd is not None else command
        if not os.path.exists(path):
            return f"cannot run {command!r}: No such file or directory"
        if os.path.isdir(path):
            return f"cannot run {command!r}: Is a directory"
        if not os.access(path, os.X_OK):
            return f"cannot run {command!r}: Permission denied"
        return None
    search = (env or {}).get("PATH", os.environ.get("PATH", os.defpath))
    if shutil.which(command, path=search) is None:
        return f"cannot run {command!r}: No such file or directory (not found on PATH)"
    return None


class MCPServerStdio(MCPServer):
    """An MCP server started as a process (``command`` with ``args``) and spoken to over
    its stdin and stdout. ``env`` adds to the few variables a server inherits (``PATH``,
    ``HOME``…); ``prefix`` names its tools ``prefix_name``; ``timeout`` is each call's
    deadline in seconds (``None``: none), ``tool_timeouts`` one per tool (by the server's
    names); ``requires_approval``: every tool's calls wait for approval (``True``), or
    those of the tools named (a list: the server's names, or with the prefix);
    ``sampling``: the server's sampling requests are answered by the run's model
    (``agents.mcp.sampling``), or refused (``False``);
    ``elicitation``: the server's questions for a human suspend the run until answered
    (``agents.mcp.calls``), or the client says it cannot take them (``False``);
    ``start_timeout``: seconds to start the server and list its tools (a start given up
    stops the process), 30 by default."""

    restarts = True

    def __init__(
        self,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        prefix: str | None = None,
        timeout: float | None = 60.0,
        tool_timeouts: Mapping[str, float] | None = None,
        requires_approval: bool | Sequence[str] = False,
        sampling: bool = True,
        elicitation: bool = True,
        start_timeout: float = START_TIMEOUT,
    ) -> None:
        super().__init__(
            prefix=prefix,
            timeout=timeout,
            tool_timeouts=tool_timeouts or {},
            requires_approval=requires_approval,
            sampling=sampling,
            elicitation=elicitation,
            start_timeout=start_timeout,
        )
        self.command = checked_text(command, "MCPServerStdio: command")
        self.args = _texts(args, "MCPServerStdio: args")
        self.env = _text_map(env, "MCPServerStdio: env") or None
        self.cwd = None if cwd is None else checked_path(cwd, "MCPServerStdio: cwd")

    @property
    def label(self) -> str:
        return os.path.basename(self.command)

    def _start_problem(self) -> str | None:
        return _unrunnable(self.command, self.env, self.cwd)

    def _client(self, connection: Connection) -> Any:
        command, args = self.command, self.args
        if sys.platform.startswith("linux"):  # the server dies with this process, however
            command, args = sys.executable, ("-c", _LAUNCHER, command, *args)
        sample = connection.sample if self.sampling else None
        elicit = connection.elicit if self.elicitation else None
        return sdk.stdio_client(
            command,
            args,
            self.env,
            self.cwd,
            None,
            connection.notice_change,
            connection.notice_fault,
            sample,
            elicit,
            connection.notice_exit,
        )

    def __repr__(self) -> str:  # never the environment: it may hold credentials
        return f"MCPServerStdio({self.command!r}, {_shown_args(self.args)!r})"


def _shown_args(args: Sequence[str]) -> list[str]:
    """A server's arguments as its repr shows them: a value after a flag naming a secret
    (``--token T``) redacted, and what ``scrub`` finds in each (``--api-key=K``, a
    database URL's password): servers often take their credentials so."""
    texts = [str(arg) for arg in args]  # (a path, say, as the process is given it)
    shown = []
    for index, text in enumerate(texts):
        flag = texts[index - 1] if index else ""
        after_secret = flag.startswith("-") and is_secret_key(flag.lstrip("-"))
        shown.append(REDACTED if after_secret else scrub(text))
    return shown


class MCPServerHTTP(MCPServer):
    """An MCP server at ``url`` over streamable HTTP; ``headers`` go with every request
    (credentials: never shown in reprs or errors). A session the server lost (it
    restarted, or the session expired) is opened again once and the call resent. The
    other options are ``MCPServerStdio``'s."""

    reconnects = True
    transport = "http"

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        prefix: str | None = None,
        timeout: float | None = 60.0,
        tool_timeouts: Mapping[str, float] | None = None,
        requires_approval: bool | Sequence[str] = False,
        sampling: bool = True,
        elicitation: bool = True,
        start_timeout: float = START_TIMEOUT,
    ) -> None:
        super().__init__(
            prefix=prefix,
            timeout=timeout,
            tool_timeouts=tool_timeouts or {},
            requires_approval=requires_approval,
            sampling=sampling,
            elicitation=elicitation,
            start_timeout=start_timeout,
        )
        if not isinstance(url, str) or not url.lower().startswith(("http://", "https://")):
            shown = shown_url(url) if isinstance(url, str) else type(url).__name__
            raise InvalidType(f"MCPServerHTTP: url is an http:// or https:// URL, not {shown!r}")
        self.url = url
        self._headers = _text_map(headers, "MCPServerHTTP: headers")

    @property
    def label(self) -> str:
        return shown_url(self.url)  # no query, no password

    def _client(self, connection: Connection) -> Any:
        return sdk.http_client(
            self.url,
            self._headers,
            None,
            connection.notice_change,
            connection.notice_fault,
            connection.notice_session,
            connection.sample if self.sampling else None,
            connection.elicit if self.elicitation else None,
            connection.notice_refusal,
        )

    def __repr__(self) -> str:
        return f"MCPServerHTTP({self.label!r})"


def _texts(value: Any, what: str) -> tuple[Any, ...]:
    """A command's arguments: texts and paths, in a list (a lone text is none: its letters
    would be the arguments)."""
    found = listed(value, what)
    wrong = next((item for item in found if not isinstance(item, str | os.PathLike)), None)
    if wrong is not None:
        raise InvalidType(f"{what} is a list of texts, not holding {type(wrong).__name__}")
    return found


def _text_map(value: Any, what: str) -> dict[str, str]:
    """A map of texts to texts (an environment, headers), or ``{}`` for ``None``; what
    is wrong is named by type only: the values may be credentials."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidType(f"{what} is a map of texts, not {type(value).__name__}")
    for key, item in value.items():
        if not isinstance(key, str) or not isinstance(item, str):
            raise InvalidType(
                f"{what} is a map of texts, not holding {type(key).__name__}: {type(item).__name__}"
            )
    return dict(value)
