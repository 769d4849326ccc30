"""Equal states encode alike (docs/design/determinism.md): over genuine runs, the states a run
passes through and the ones the library derives from them — the codec, every session store
(memory, SQLite, PostgreSQL blocking and async), ``AuditLog.read``, ``at_step``, ``fork`` —
any two that are ``==`` have the same ``to_json()``, and what should be equal is."""

from __future__ import annotations

import tempfile
import uuid
from pathlib import Path

import pytest
from conftest import POSTGRES_DSN, _postgres_admin
from helpers import BlockingAsyncStore, assert_equal_states_encode_alike
from hypothesis import given
from hypothesis import strategies as st
from runs import perform, scenarios

from agents import (
    AgentState,
    AuditLog,
    InMemorySessionStore,
    PostgresSessionStore,
    SQLiteSessionStore,
)
from agents.testing import SequentialIds, TickingClock


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    """One store of each kind for the whole module (sessions get fresh ids)."""
    admin = _postgres_admin()
    schema = f"agents_test_{uuid.uuid4().hex[:12]}"
    admin.execute(f"CREATE SCHEMA {schema}")
    separator = "&" if "?" in POSTGRES_DSN else "?"
    dsn = f"{POSTGRES_DSN}{separator}options=-csearch_path%3D{schema}"
    options = {"clock": TickingClock(), "ids": SequentialIds()}
    opened = {
        "memory": InMemorySessionStore(**options),
        "sqlite": SQLiteSessionStore(tmp_path_factory.mktemp("canonical") / "s.db", **options),
        "postgres": PostgresSessionStore(dsn, **options),
        "postgres-async": BlockingAsyncStore(dsn, **options),
    }
    yield opened
    for name in ("sqlite", "postgres", "postgres-async"):
        opened[name].close()
    admin.execute(f"DROP SCHEMA {schema} CASCADE")
    admin.close()


def _stored(store, state: AgentState) -> AgentState:
    session = store.create(state)
    return store.load(session.session_id).state


def _rewound(state: AgentState) -> list[AgentState]:
    if state.execution is None:
        return []
    found = []
    for k in range(state.step_count + 1):
        found += [state.at_step(k), state.fork(k)]
    return found


@given(scenarios, st.data())
def test_equal_states_encode_alike_however_they_were_made(stores, scenario, data):
    """Runs, the codec, every store, the audit log, at_step and fork."""
    with tempfile.TemporaryDirectory() as directory:
        done = perform(scenario, Path(directory) / "run.jsonl")
        read = AuditLog.read(done.log)
    assert read == done.final
    states = [done.final, read, *done.after_steps]
    chosen = data.draw(st.sampled_from(states), label="state through the stores")
    reloaded = AgentState.from_json(chosen.to_json())
    assert reloaded == chosen
    derived = [chosen, reloaded]
    rewound = _rewound(chosen)
    for name, store in stores.items():
        stored = _stored(store, chosen)
        assert stored == chosen, name
        assert _rewound(stored) == rewound, name  # equal states rewind alike
        derived.append(stored)
    derived += rewound + _rewound(derived[-1]) + _rewound(reloaded)
    assert_equal_states_encode_alike(states + derived)
