"""Questions a tool call asks a human while it runs, and their answers: an MCP server's
elicitation, or a tool's ``ToolContext.ask``. A call that asks suspends the run
(docs/design/sessions.md); the call is made again, from its start, once every question is
answered."""

from __future__ import annotations

from typing import Any, Final

import attrs
from pyrsistent.typing import PMap

from agents.records.frozen import EMPTY_MAP, deep_freeze
from agents.records.record import Record
from agents.records.redaction import redacted

__all__ = ["INPUT_ACTIONS", "InputAnswer", "InputRequest"]


@attrs.frozen(kw_only=True)
class InputRequest(Record):
    """A tool call's question for a human, asked while the call ran (an MCP server's
    elicitation, a tool's ``ToolContext.ask``): ``message`` to show, ``schema`` the JSON
    schema of the answer's content (an object; empty: no content asked), ``source`` who
    asks (the MCP server, or the tool), ``url`` a page to visit instead (MCP's URL mode:
    the answer says only whether the human went)."""

    call_id: str
    message: str
    schema: PMap[str, Any] = attrs.field(default=EMPTY_MAP, converter=deep_freeze)
    source: str = ""
    url: str = ""  # a page to visit instead of answering here (MCP's URL mode): accept or not


INPUT_ACTIONS: Final = frozenset({"accept", "decline", "cancel"})
"""What a human may do with a question (MCP's elicitation actions): answer it
(``accept``, with the content), refuse to (``decline``), or dismiss it (``cancel``)."""


@attrs.frozen(kw_only=True, repr=False)
class InputAnswer(Record):
    """A human's answer to an ``InputRequest`` (kept with the question, for the audit).
    Values under secret keys (``password``, ``token``…) are redacted in its repr and, as
    in every map, when it is written: ask for credentials with a URL question instead."""

    request: InputRequest
    action: str
    content: PMap[str, Any] | None = attrs.field(default=None, converter=deep_freeze)

    @property
    def call_id(self) -> str:
        """The id of the tool call that asked."""
        return self.request.call_id

    def __repr__(self) -> str:  # a human may answer with a password: never shown
        content = None if self.content is None else redacted(self.content)
        return f"InputAnswer(request={self.request!r}, action={self.action!r}, content={content!r})"

    @property
    def accepted(self) -> bool:
        """Whether the human answered (rather than declined or dismissed the question)."""
        return self.action == "accept"
