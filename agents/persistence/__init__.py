"""Sessions: stored conversations and the runtime that keeps them across crashes
(docs/design/sessions.md)."""

from agents.persistence.memory import InMemorySessionStore
from agents.persistence.postgres import AsyncPostgresSessionStore, PostgresSessionStore
from agents.persistence.runtime import SessionRuntime
from agents.persistence.session import Session, SessionStore
from agents.persistence.sqlite import SQLiteSessionStore

__all__ = [
    "AsyncPostgresSessionStore",
    "InMemorySessionStore",
    "PostgresSessionStore",
    "SQLiteSessionStore",
    "Session",
    "SessionRuntime",
    "SessionStore",
]
