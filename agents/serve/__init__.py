"""``agents serve``: sessions over HTTP (the ``serve`` extra: Starlette and uvicorn).

``app(runtime_or_loop_factory, *, store, token)`` is the ASGI application: sessions,
messages answered with Server-Sent Events from the session's persisted event log (resumed
with ``Last-Event-ID``, on any process sharing the store), approvals, steering and
follow-ups. See docs/how-to/serve.md.
"""

from typing import TYPE_CHECKING, Any

from agents.errors import require_extra

if TYPE_CHECKING:  # loaded on first use (below); named here for type checkers and the docs
    from agents.serve.asgi import app

require_extra("serve", "agents.serve", "starlette", "uvicorn", "ag_ui", "pydantic")

__all__ = ["app"]


def __getattr__(name: str) -> Any:
    if name == "app":
        from agents.serve.asgi import app

        return app
    raise AttributeError(f"module 'agents.serve' has no attribute {name!r}")
