"""The guard in front of ``agents serve`` and ``agents mcp-serve --transport http``: the
allowed hosts (no DNS rebinding), the same-origin rule and the bearer token, each refusal
one line of JSON (plain ASGI: no web framework here)."""

from __future__ import annotations

import hmac
import ipaddress
from typing import Any, Final

from agents.records.json_text import dumps

__all__ = ["LOOPBACK_HOSTS", "Guard", "is_loopback"]


LOOPBACK_HOSTS: Final = frozenset({"127.0.0.1", "localhost", "[::1]"})
"""The names a server on a loopback address answers to (``Host``, any port)."""


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address to bind) is this machine only."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _host_name(host: str) -> str:
    """The host a ``Host`` header names, without its port."""
    if host.startswith("["):  # an IPv6 address: [::1]:8000
        end = host.find("]")
        return host[: end + 1] if end >= 0 else host
    return host.split(":", 1)[0]


def _is_page(path: str) -> bool:
    """Whether ``path`` is the chat page's or one of its files (served without a token)."""
    return path == "/" or path.startswith("/static/")


class Guard:
    """The allowed hosts, the same-origin rule and the bearer token on every request (the
    token: but the page's), and one-line JSON errors."""

    def __init__(
        self, inner: Any, token: str | None, hosts: frozenset[str] | None, same_origin: bool
    ) -> None:
        self.inner = inner
        self.token = token
        self.hosts = hosts
        self.same_origin = same_origin

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        refused = self._refusal(scope) if scope["type"] == "http" else None
        if refused is not None:
            status, reason = refused
            body = dumps({"error": " ".join(reason.split())}).encode()
            head = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
            await send({"type": "http.response.start", "status": status, "headers": head})
            await send({"type": "http.response.body", "body": body})
            return
        await self.inner(scope, receive, send)

    def _refusal(self, scope: Any) -> tuple[int, str] | None:
        """The status and reason a request is refused with, or ``None``."""
        headers = dict(scope.get("headers") or [])
        host = headers.get(b"host", b"").decode("latin-1").strip().lower()
        if self.hosts is not None and _host_name(host) not in self.hosts:
            allowed = ", ".join(sorted(self.hosts))
            return 403, f"this server answers to {allowed} only, not to {_host_name(host)!r}"
        origin = headers.get(b"origin")
        if self.same_origin and origin is not None:
            seen = origin.decode("latin-1").strip().lower()
            if seen.partition("://")[2] != host:  # a page of another host or port
                return 403, f"a page of another origin ({seen!r}) may not call this server"
        if self.token is not None and not _is_page(scope["path"]):
            # the scheme's name is case-insensitive (RFC 7235): "bearer T" is "Bearer T"
            scheme, _, given = headers.get(b"authorization", b"").partition(b" ")
            good = hmac.compare_digest(given.strip(), self.token.encode())
            if scheme.lower() != b"bearer" or not good:
                return 401, "a bearer token is required"
        return None
