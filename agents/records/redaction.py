"""Secrets: which keys hold them, and keeping their values out of text and data.

docs/design/events.md: in every plain map, values under secret keys (``api_key``, ``authorization``,
``password``, ``token``, names ending in ``_api_key``, ``_secret``, …; case-insensitive,
``-`` read as ``_``) are written as ``"[redacted]"``. Beyond the maps the codec writes,
secrets reach text in other ways — a provider echoing a key in an error, a header value, a
database DSN, a key the environment provides — so this module also collects secret values
and scrubs them from any text: reprs, error messages and log lines.
"""

from __future__ import annotations

import enum
import functools
import operator
import re
import string
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from pyrsistent import PMap, PVector

from agents.errors import InvalidType
from agents.records.frozen import EMPTY_MAP, map_items

__all__ = [
    "REDACTED",
    "dsn_secrets",
    "environment_secrets",
    "holds_secret_key",
    "is_secret_key",
    "odd_float",
    "redact",
    "redacted",
    "redacted_dsn",
    "scrub",
    "secret_values",
    "shown_url",
    "without_addresses",
]

REDACTED: Final = "[redacted]"

_SECRET_KEYS: Final = frozenset(
    {
        "api_key",
        "apikey",
        "x_api_key",
        "authorization",
        "proxy_authorization",
        "password",
        "secret",
        "client_secret",
        "token",
        "cookie",
        "credentials",
        "private_key",
        "secret_key",
        "signing_key",
        "encryption_key",
        # litellm's names for a provider's credentials the suffixes below miss: Bedrock's
        # (the key's id too: half a credential, of no use to a record), OCI's private key
        "aws_access_key_id",
        "aws_secret_access_key",
        "oci_key",
    }
)
_SECRET_SUFFIXES: Final = (
    "_api_key",
    "_secret",
    "_secret_key",
    "_password",
    "_token",  # api_token, auth_token, github_token, aws_session_token… but not these:
    "_credentials",
    "_private_key",
)
# Names ending in "_token" that hold no credential: a tokenizer's special tokens (a model's
# settings), pagination and progress cursors, a latency; and prices (_NOT_SECRET_SUFFIXES).
_NOT_SECRET: Final = frozenset(
    {
        "eos_token",
        "bos_token",
        "pad_token",
        "unk_token",
        "sep_token",
        "cls_token",
        "mask_token",
        "stop_token",
        "add_bos_token",
        "add_eos_token",
        "page_token",
        "next_page_token",
        "next_token",
        "previous_token",
        "pagination_token",
        "continuation_token",
        "progress_token",
        "cancel_token",
        "cancellation_token",
        "time_to_first_token",
    }
)
_NOT_SECRET_SUFFIXES: Final = ("_per_token",)  # a price: litellm's input_cost_per_token
# Environment variables holding credentials are named more loosely (OPENAI_API_KEY,
# HF_TOKEN, AWS_SECRET_ACCESS_KEY, PGPASSWORD).
_ENV_SUFFIXES: Final = ("_key", "_token", "_secret", "_password", "_pass")
_ENV_NAMES: Final = frozenset({"pgpassword"})
_MIN_SECRET: Final = 6  # shorter values would scrub ordinary words; such keys are no keys
# Key-shaped words, whatever their source (provider keys echoed in error messages):
# ``sk-…``, ``pk-…``, ``rk-…``, and ``key-…`` holding a digit (Mailgun's keys; without a
# digit it is prose: "a key-value store", "the api-key-rotation policy"); Google's API
# keys (``AIza`` and 35 more), AWS access key ids (``AKIA``/``ASIA`` and 16 capitals or
# digits), Groq's ``gsk_…``, Hugging Face's ``hf_…``, xAI's ``xai-…``, GitHub's
# ``ghp_…`` (``gho_``, ``ghu_``, ``ghs_``, ``ghr_``, ``github_pat_``) and Slack's ``xoxb-…``.
_KEY_PATTERN: Final = re.compile(
    r"\b(?:(?:sk|pk|rk)-[A-Za-z0-9_\-]{6,}|key-(?=[A-Za-z_\-]*\d)[A-Za-z0-9_\-]{6,}"
    r"|AIza[A-Za-z0-9_\-]{35}|A[KS]IA[A-Z0-9]{16}|gsk_[A-Za-z0-9]{20,}|hf_[A-Za-z0-9]{30,}"
    r"|xai-[A-Za-z0-9]{20,}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}"
    r"|xox[abposr]-[A-Za-z0-9\-]{10,})"
)
# A value under a secret name in text: ``password=…`` (a configuration line, a DSN, a URL's
# query — where Google's APIs take ``key=``), ``"api_key": "…"`` (a request echoed as JSON
# or as a Python dict). Found by the name's last word (the name is then read back to its
# start and asked of ``is_secret_key``), in the text lowered letter for letter.
_PAIR_WORD: Final = re.compile(
    r"(?:api[_\-]?key|authorization|password|secret|token|cookie|key|signature|credential|sig)"
    r"([\"']?)(\s*[=:]\s*)"
)
# What a signed URL's query holds that lets its holder fetch it (S3, Google Cloud Storage,
# CloudFront, Azure's SAS): secrets in a URL's query only (elsewhere, a "signature" is
# as likely an e-mail's).
_SIGNED_URL_NAMES: Final = frozenset(
    {
        "key",
        "x_amz_signature",
        "x_amz_credential",
        "x_goog_signature",
        "x_goog_credential",
        "signature",
        "sig",
    }
)
_PAIR_VALUES: Final = {
    "": re.compile(r"[^\s&;,\"'<>]+"),
    '"': re.compile(r'"(?:[^"\\]|\\.)*"'),
    "'": re.compile(r"'(?:[^'\\]|\\.)*'"),
}
_NAME_CHARS: Final = frozenset(string.ascii_letters + string.digits + "_-")
_LOWER: Final = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
# "Bearer <token>" and "Basic <credentials>" wherever they appear.
_SCHEME_PATTERN: Final = re.compile(r"\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=\-]{6,}")
_HEADER_WORDS: Final = frozenset({"authorization", "cookie"})  # headers of one word
_SCHEME_WORD: Final = re.compile(r"(?:Bearer|Basic|Token|Digest)\s+", re.IGNORECASE)


@functools.lru_cache(maxsize=4096)  # the same few keys are asked about in every record
def is_secret_key(key: str) -> bool:
    """Whether values under ``key`` are secrets (case-insensitive, ``-`` read as ``_``)."""
    normal = key.lower().replace("-", "_")
    if normal in _SECRET_KEYS:
        return True
    return (
        normal.endswith(_SECRET_SUFFIXES)
        and normal not in _NOT_SECRET
        and not normal.endswith(_NOT_SECRET_SUFFIXES)
    )


def odd_float(value: float) -> bool:
    """Whether orjson may write ``value`` otherwise than ``json.dumps`` does (below 1e-4,
    Python writes ``1e-05``, orjson ``1e-5``) or it is not finite (an error either way)."""
    return not (value == 0.0 or 1e-4 <= abs(value) < 1e16)


def redact(value: Any, note: Any = None) -> Any:
    """``value`` (a map's, or within one) as plain JSON data, with secrets in every map
    replaced by ``"[redacted]"``, and a URL's secrets in any text (its password, a key in
    its query).

    ``note`` (the codec's ``Encoding``), when given, has ``odd`` set when a float is met
    that orjson would write otherwise than ``json`` does."""
    kind = type(value)
    if isinstance(value, str):
        return _without_url_secrets(value)
    if kind is int or kind is bool or value is None:
        return value
    if kind is _PMAP_TYPE:
        return _redacted_map(map_items(value), note)
    if isinstance(value, int | bool):
        return value
    if isinstance(value, float):
        if note is not None and odd_float(value):
            note.odd = True
        return value
    if isinstance(value, Mapping | PMap):
        if not value:  # most maps are empty; iterating even an empty PMap is not free
            return {}
        return _redacted_map(map_items(value), note)
    if isinstance(value, Sequence | PVector):
        return [redact(item, note) for item in value]
    if isinstance(value, enum.Enum):
        return value.value
    raise InvalidType(f"{type(value).__name__} is not JSON")


_PMAP_TYPE: Final = type(EMPTY_MAP)


def _redacted_map(items: list[tuple[Any, Any]], note: Any) -> dict[str, Any]:
    """A map's ``items`` (pairs, in any order; the list is sorted here) by their keys as
    text, secrets redacted (ties, as ``1`` and ``"1"``, keep their order: the later one
    wins). A loop, the values JSON writes as they are kept without a call: a tool call's
    arguments are redacted at every step, and keys that are all texts (as they are there)
    are sorted with the pairs themselves, without a call per key."""
    for key, _ in items:
        if key.__class__ is not str:
            items = sorted(((str(key), value) for key, value in items), key=_first)
            break
    else:
        items.sort()  # (distinct texts: the values are never compared)
    out: dict[str, Any] = {}
    for name, value in items:
        if is_secret_key(name):
            out[name] = REDACTED
        else:
            out[name] = value if value.__class__ in _AS_IS else redact(value, note)
    return out


_first: Final = operator.itemgetter(0)

_AS_IS: Final = frozenset({int, bool, type(None)})


def redacted(value: Any) -> Any:
    """Any value with secrets under secret keys replaced, at any depth, and a URL's
    secrets in any text (``api_base: http://user:secret@host``, ``?key=…``); others kept as
    they are (for reprs, descriptions and the files written from them)."""
    if isinstance(value, Mapping | PMap):
        return {
            key: REDACTED if isinstance(key, str) and is_secret_key(key) else redacted(item)
            for key, item in value.items()
        }
    if isinstance(value, list | tuple | PVector):
        return [redacted(item) for item in value]
    if type(value) is str:
        return _without_url_secrets(value)
    return value


def holds_secret_key(value: Any) -> bool:
    """Whether a map in ``value``, at any depth, has a secret key, or a text in it a URL's
    secret (what ``redacted`` would change)."""
    if isinstance(value, Mapping | PMap):
        return any(
            (isinstance(key, str) and is_secret_key(key)) or holds_secret_key(item)
            for key, item in value.items()
        )
    if isinstance(value, list | tuple | PVector):
        return any(holds_secret_key(item) for item in value)
    return type(value) is str and _without_url_secrets(value) != value


def secret_values(value: Any) -> tuple[str, ...]:
    """Every string held under a secret key in ``value``, at any depth (a header's
    ``Authorization: Bearer K`` gives both ``Bearer K`` and ``K``)."""
    found: list[str] = []

    def walk(item: Any, secret: bool) -> None:
        if isinstance(item, Mapping | PMap):
            for key, inner in item.items():
                walk(inner, secret or (isinstance(key, str) and is_secret_key(key)))
        elif isinstance(item, list | tuple | PVector):
            for inner in item:
                walk(inner, secret)
        elif secret and isinstance(item, str) and len(item) >= _MIN_SECRET:
            found.append(item)
            scheme, _, token = item.partition(" ")
            if token and scheme.lower() in ("bearer", "basic", "token"):
                found.append(token.strip())

    walk(value, False)
    return tuple(found)


def environment_secrets(environ: Mapping[str, str]) -> tuple[str, ...]:
    """The values of environment variables (``os.environ``, passed by the edge that reads
    it) named like credentials (``OPENAI_API_KEY``, ``HF_TOKEN``, ``PGPASSWORD``…):
    libraries read them by themselves, so they can reach error texts without the
    application ever passing them."""
    found = []
    for name, value in environ.items():
        normal = name.lower()
        if len(value) >= _MIN_SECRET and (
            is_secret_key(normal) or normal.endswith(_ENV_SUFFIXES) or normal in _ENV_NAMES
        ):
            found.append(value)
    return tuple(found)


_ADDRESS: Final = re.compile(r" at 0x[0-9a-fA-F]+(?=>)")


def without_addresses(text: str) -> str:
    """``text`` without the memory addresses default ``repr``s show (``<Foo object at
    0x7f…>`` → ``<Foo object>``): an error's text is recorded the same in every run."""
    return _ADDRESS.sub("", text) if " at 0x" in text else text


def scrub(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with each of ``secrets`` (longest first), key-shaped words, ``Bearer``/
    ``Basic`` credentials and the values of secret names (``password=…``, ``"api_key":
    "…"``) replaced by ``"[redacted]"``."""
    for secret in sorted(set(secrets), key=len, reverse=True):
        if secret:
            text = text.replace(secret, REDACTED)
    text = _SCHEME_PATTERN.sub(lambda m: f"{m.group(1)} {REDACTED}", text)
    if "=" in text or ":" in text:
        text = _without_secret_pairs(text)
    text = _without_url_password(text)  # a URL's user information: scheme://user:password@
    return _KEY_PATTERN.sub(REDACTED, text)


def _without_secret_pairs(text: str) -> str:
    """``text`` with the value of each ``name=value`` and ``"name": "value"`` redacted
    whose name is a secret key's (or, in a URL's query, ``key`` or a signed URL's
    signature or credential)."""
    pieces: list[str] = []
    done = 0
    for match in _PAIR_WORD.finditer(text.translate(_LOWER)):  # the same length
        quote, colon = match.group(1), ":" in match.group(2)
        start = match.start()
        while start > 0 and text[start - 1] in _NAME_CHARS:
            start -= 1
        name = text[start : match.start(1)]
        before = text[start - 1 : start]
        if quote:  # "name": "value", as JSON or a Python dict writes it
            secret = before == quote and colon and is_secret_key(name)
        elif colon:  # a header's "Name: value" (a single word is prose: "password: short")
            secret = is_secret_key(name) and (
                "-" in name or "_" in name or name.lower() in _HEADER_WORDS
            )
        else:  # name=value
            secret = is_secret_key(name) or (
                before in ("?", "&") and name.lower().replace("-", "_") in _SIGNED_URL_NAMES
            )
        at = match.end()
        if colon and not quote:  # "Authorization: Bearer …": the credential after its scheme
            scheme = _SCHEME_WORD.match(text, at)
            at = scheme.end() if scheme is not None else at
        opening = text[at : at + 1]
        opening = opening if opening in ('"', "'") else ""
        if not secret or at < done or (quote and not opening):
            continue
        value = _PAIR_VALUES[opening].match(text, at)
        if value is None or value.group()[len(opening) :].startswith(REDACTED):
            continue
        pieces.append(text[done:at])
        pieces.append(f"{opening}{REDACTED}{opening}")
        done = value.end()
    if not pieces:
        return text
    pieces.append(text[done:])
    return "".join(pieces)


# A password in a database DSN: in a URL's user information, or as a key=value pair (the
# libpq form, or a URL's query), quoted or not.
_DSN_USERINFO: Final = re.compile(r"(://[^/:@\s]*:)([^@\s]*)(@)")


def _without_url_password(text: str) -> str:
    """``text`` with the password of each URL's user information (``://user:secret@``)
    redacted (two substring tests for a text that holds no URL with user information)."""
    if "://" not in text or "@" not in text:
        return text
    return _DSN_USERINFO.sub(lambda m: f"{m.group(1)}{REDACTED}{m.group(3)}", text)


def _without_url_secrets(text: str) -> str:
    """``text`` with a URL's secrets redacted: its user information's password, and in
    its query the values of secret names and of ``key`` and a signed URL's signature or
    credential (``?alt=sse&key=[redacted]``). One substring test for a text that holds
    no URL."""
    if "://" not in text:
        return text
    text = _without_url_password(text)
    return _without_secret_pairs(text) if "?" in text and "=" in text else text


_DSN_PAIR: Final = re.compile(
    r"((?:^|[\s?&])(?:password|sslpassword)\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&]*)", re.IGNORECASE
)


def dsn_secrets(dsn: str) -> tuple[str, ...]:
    """The passwords a DSN holds, as written and as a server or driver may quote them."""
    from urllib.parse import unquote

    found = [match.group(2) for match in _DSN_USERINFO.finditer(dsn)]
    for match in _DSN_PAIR.finditer(dsn):
        value = match.group(2)
        found.append(value)
        if value.startswith("'") and value.endswith("'") and len(value) >= 2:
            found.append(value[1:-1].replace("\\'", "'").replace("\\\\", "\\"))
    found.extend([unquote(value) for value in found])
    return tuple(value for value in dict.fromkeys(found) if value)


def shown_url(url: str) -> str:
    """``url`` as errors, reprs and output show it: without its query (which may hold a
    key) and with its user information's password redacted."""
    return redacted_dsn(url.split("?", 1)[0])


def redacted_dsn(dsn: str) -> str:
    """``dsn`` with its passwords replaced by ``"[redacted]"`` (URL or key=value form)."""
    text = _without_url_password(dsn)
    return _DSN_PAIR.sub(lambda m: f"{m.group(1)}{REDACTED}", text)
