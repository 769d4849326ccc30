"""``agents serve``: an agent's sessions over HTTP (the ``serve`` extra)."""

from __future__ import annotations

import argparse
import os
import re
from typing import Any, Final, TextIO

from agents.cli.common import OK, load_attribute

__all__ = ["serve", "store_of"]

TOKEN_VARIABLE = "AGENTS_SERVE_TOKEN"


# libpq's "key=value ..." connection string, which would otherwise name a SQLite file (one
# whose name holds the password).
_CONNINFO: Final = re.compile(r"\s*[A-Za-z_]+\s*=")
_SCHEME: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://")  # a URL, not a file's path


def serve(args: argparse.Namespace, out: TextIO) -> int:
    """``agents serve MODULE:ATTR|FILE [--database URL_OR_PATH] [--host] [--port]
    [--token T]``: until stopped."""
    from agents.errors import ConfigurationError

    try:
        from agents.serve.asgi import LOOPBACK_HOSTS, app, is_loopback, run_server
    except ImportError:
        raise ConfigurationError(
            "serve needs Starlette and uvicorn: pip install 'agents[serve]'"
        ) from None
    factory = loop_factory(args.target, args.registry)
    store = store_of(args.database)
    token = args.token or os.environ.get(TOKEN_VARIABLE) or None
    hosts = LOOPBACK_HOSTS if is_loopback(args.host) else None  # no DNS rebinding
    served = app(
        factory, store=store, token=token, page=True, allowed_hosts=hosts, same_origin=True
    )

    def listening(address: str) -> None:  # once the port is had (the one chosen, for 0)
        out.write(f"serving {args.target} on {address}/\n")
        out.flush()

    run_server(served, args.host, args.port, listening=listening)
    return OK


def loop_factory(target: str, registry: str | None) -> Any:
    """``(session) -> AgentLoop`` for the agent ``target`` names: a definition file, or
    ``MODULE:ATTR`` holding an ``AgentLoop``, or a function making one (or a ``(loop,
    state)`` pair) — called for each run, so that each has an agent of its own."""
    from agents.definitions import SUFFIXES, AgentDefinition
    from agents.errors import ConfigurationError
    from agents.shell.loop import AgentLoop

    if os.path.splitext(target)[1].lower() in SUFFIXES:
        definition = AgentDefinition.load(target)
        tools = load_attribute(registry) if registry else None
        definition.build(tools)  # its problems now, not at the first message
        return lambda session: definition.build(tools)[0]
    found = load_attribute(target)
    if isinstance(found, AgentLoop):
        return lambda session: found

    def make(session: Any) -> AgentLoop:
        made = found()
        loop = made[0] if isinstance(made, tuple) and made else made
        if not isinstance(loop, AgentLoop):
            raise ConfigurationError(f"{target}() did not make an AgentLoop")
        return loop

    if not callable(found):
        raise ConfigurationError(f"{target} is not an AgentLoop (or a function making one)")
    return make


def store_of(database: str | None) -> Any:
    """A session store: PostgreSQL for a ``postgresql://`` URL or libpq's ``key=value``
    connection string (``host=... dbname=...``), else a SQLite file (by default
    ``agents-sessions.sqlite`` here), named by its path or by a ``sqlite:///path`` URL as
    DBOS takes (``sqlite:////abs/path`` for an absolute one). A URL of another scheme
    (``mysql://``) is a ``ConfigurationError``, not the name of a new SQLite file."""
    from agents.errors import ConfigurationError
    from agents.records.redaction import shown_url

    if database and (
        database.startswith(("postgresql://", "postgres://")) or _CONNINFO.match(database)
    ):
        from agents.persistence.postgres import PostgresSessionStore

        return PostgresSessionStore(database)
    from agents.persistence.sqlite import SQLiteSessionStore

    if database and database.startswith("sqlite:///"):
        database = database.removeprefix("sqlite:///")
    elif database and _SCHEME.match(database):
        raise ConfigurationError(
            f"--database {shown_url(database)}: a SQLite file (a path, or sqlite:///path), "
            "a postgresql:// URL or a libpq connection string, not this kind of URL"
        )
    return SQLiteSessionStore(database or "agents-sessions.sqlite")
