"""The page ``agents serve`` shows at ``/``: a chat with one session — the answer streamed as
it comes, tool calls waiting for approval with Approve and Deny buttons, tool calls' questions
for a human with a small form (a field per property of the question's schema), the step
timeline — using only the HTTP API, with no build step and no external URL.

Its HTML, CSS and JavaScript are package data, in ``agents/serve/static/``: the HTML is
served at ``/``, the rest under ``/static/``."""

from __future__ import annotations

from importlib.resources import files
from typing import Final

__all__ = ["STATIC", "page_html"]

STATIC: Final = ("agents.serve", "static")
"""The package and folder of the page's files (as Starlette's ``StaticFiles`` takes them)."""


def page_html() -> str:
    """The chat page's HTML."""
    return (files(STATIC[0]) / STATIC[1] / "chat.html").read_text(encoding="utf-8")
