"""The audit log's chain: how a record becomes a line, and how lines are checked.

A line is the record as canonical JSON (sorted keys, no spaces, UTF-8) with ``hash`` — the
SHA-256 of the record without it — placed last, and in a signed log ``sig`` after it: an
Ed25519 signature of the hash. Each record holds ``seq`` and the ``prev_hash`` of the line
before it, so an edited byte, an inserted, deleted or reordered line, or a cut-off file
breaks the chain; the signature proves the key holder wrote it (without the key, a forger
can recompute every hash, not sign them). Format 1 records (the first release) have no
``format`` key and no signature; both formats verify alike.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable
from typing import Any, Final, NamedTuple, TypeGuard

from agents.audit.keys import PublicKey, signature_valid
from agents.errors import AuditLogTampered, StateDecodeError
from agents.records.json_text import canonical_object, loads, sorted_json, time_text, utf8_safe
from agents.shell.files import UnreadableFile, read_file

__all__ = [
    "BOUNDARIES",
    "FORMAT",
    "GENESIS",
    "RECORD_START",
    "ZIP",
    "Checked",
    "canonical",
    "is_record",
    "line_of",
    "parse_line",
    "read_bytes",
    "verify_log",
]

GENESIS: Final = "0" * 64
"""The ``prev_hash`` of a log's first line: 64 zeros."""
FORMAT: Final = 3
"""The audit log format this version writes (it reads formats 1 and 2 too)."""
# The records a signed log signs: a run's start, every step, its end (event records, when
# asked for, are covered by the next signature through the chain).
BOUNDARIES: Final = frozenset({"start", "step", "end"})
HASH_KEY: Final = b',"hash":"'
SIG_KEY: Final = b'","sig":"'
# The end of a line as the log writes it (canonical JSON sorts the keys; the hash comes
# last, then the signature if any).
_TAIL: Final = re.compile(
    rb',"prev_hash":"([0-9a-f]{64})","record":"(\w+)","seq":(\d+),"step":(?:null|\d+),'
    rb'"type":"\w+","hash":"([0-9a-f]{64})"(?:,"sig":"([0-9a-f]{128})")?\}$'
)
# Every record the log writes begins so (canonical JSON: "agent_id" is the first key).
RECORD_START: Final = b'{"agent_id":'
ZIP: Final = b"PK\x03\x04"  # how a zip starts (a bundle: ``audit.bundle``)
_KEYS: Final = frozenset(
    {"seq", "record", "type", "agent_id", "execution_id", "step", "payload", "prev_hash", "hash"}
)


class Checked(NamedTuple):
    """What ``verify_log`` checked: the records, the signed records the key vouches for
    (with a key; checking the last signature vouches for every one before it),
    the records that carry one, the first record's hash (the log's id, for anchors), the
    last one's (the head a writer continues from) and the records an anchor vouched for (0
    without one)."""

    records: int
    verified: int
    signed: int
    log_id: str | None
    head: str
    anchored: int = 0
    blobs: int = 0  # the blobs the records refer to, each present and whole


def canonical(record: dict[str, Any], *, exotic: bool = True) -> bytes:
    """Canonical JSON of a record: sorted keys, no spaces, UTF-8 (a lone surrogate as its
    escape, ``utf8_safe``). Unless the record is ``exotic`` — may hold a float that orjson
    writes otherwise than ``json`` (``redaction.odd_float``) — orjson writes it, 10x faster
    and byte for byte the same (what it refuses, ``json`` writes)."""
    if not exotic:
        written = sorted_json(record)
        if written is not None:
            return written
    text = json.dumps(
        record, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=time_text
    )
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return utf8_safe(text).encode("utf-8")


def line_of(body: bytes, digest: str, sig: str | None) -> bytes:
    """The line of a record whose canonical JSON is ``body`` (hash and signature last, so
    that verifying needs no re-serialisation: the bytes before the hash, closed with "}",
    are exactly the record it covers)."""
    tail = digest.encode() + (b'"}\n' if sig is None else SIG_KEY + sig.encode() + b'"}\n')
    return body[:-1] + HASH_KEY + tail


def _is_canonical(body: bytes) -> bool:
    """Whether ``body``, the bytes a line's hash covers, is the canonical JSON of the
    record it parses to (no key twice, none out of order, no spaces), and holds neither
    ``hash`` nor ``sig``."""
    entry = canonical_object(body, canonical)
    return entry is not None and "hash" not in entry and "sig" not in entry


def _line_digest(raw: bytes) -> str | None:
    """The hash of the record on a line as written (``None`` if the line is not laid out
    as the log writes it: any such change is a modification)."""
    cut = raw.rfind(HASH_KEY)
    if cut < 0 or not raw.endswith(b'"}'):
        return None
    return hashlib.sha256(raw[:cut] + b"}").hexdigest()


def _check_line(raw: bytes, number: int, previous: str, path: Any) -> tuple[str, str, str | None]:
    """Check line ``number`` against the hash before it: its own hash, record kind and
    signature, or ``AuditLogTampered`` saying what is wrong with it."""
    fast = _TAIL.search(raw, max(0, len(raw) - 540))
    if fast is not None:  # the layout the log writes: check the hash before parsing
        prev_hash, record, seq, digest, sig = fast.groups()
        body = raw[: fast.start(4) - len(HASH_KEY)] + b"}"
        if (
            int(seq) == number
            and prev_hash.decode() == previous
            and hashlib.sha256(body).hexdigest() == digest.decode()
            and _is_canonical(body)
        ):
            return digest.decode(), record.decode(), sig.decode() if sig else None
    entry = parse_line(raw, path, number)  # something is wrong: say precisely what
    if entry.get("seq") != number:
        raise AuditLogTampered(
            f"{path}: line {number} has seq {entry.get('seq')!r}, expected {number} "
            "(a line was inserted, deleted or moved)",
            line=number,
        )
    if entry.get("prev_hash") != previous:
        raise AuditLogTampered(
            f"{path}: line {number} does not follow line {number - 1} "
            "(the chain of hashes is broken)",
            line=number,
        )
    digest = _line_digest(raw)
    if entry.get("hash") != digest or digest is None:
        raise AuditLogTampered(
            f"{path}: line {number} was modified (its hash does not match)", line=number
        )
    sig = entry.pop("sig", None)
    del entry["hash"]
    if not isinstance(sig, str | None) or raw + b"\n" != line_of(canonical(entry), digest, sig):
        # The hash covers the bytes before it; anything else on the line (a key added
        # after the hash, a duplicated or reordered key, spaces) would be read as part of
        # the record without being covered: JSON's last key wins.
        raise AuditLogTampered(
            f"{path}: line {number} was modified (it is not the record as the log writes "
            "it: a key added, duplicated or moved)",
            line=number,
        )
    return digest, str(entry.get("record")), sig


def _check_signatures(signed: list[tuple[int, str, str]], key: PublicKey, path: Any) -> int:
    """How many of the ``signed`` lines (number, hash, signature) ``key`` vouches for: all
    when the last one's signature is good, since its hash covers every line before it
    through the chain (one Ed25519 check, not one per line). Otherwise the first bad
    signature is found by bisection (an edit breaks every later signature) and
    ``AuditLogTampered`` names the first line no good signature covers."""
    if not signed:
        return 0

    def good(index: int) -> bool:
        _, digest, signature = signed[index]
        return signature_valid(key, digest, signature)

    if good(len(signed) - 1):
        return len(signed)
    low, high = 0, len(signed) - 1  # signed[high] is bad
    while low < high:
        middle = (low + high) // 2
        if good(middle):
            low = middle + 1
        else:
            high = middle
    number = signed[low][0]
    since = signed[low - 1][0] + 1 if low else 1
    where = "" if since == number else f"lines {since}-{number}: "
    raise AuditLogTampered(
        f"{path}: {where}line {number} is not signed by this key (rewritten since the "
        "last good signature, or another key's log)",
        line=since,
    )


def verify_log(
    path: str | os.PathLike[str],
    *,
    complete: bool,
    public_key: PublicKey | None,
    progress: Callable[[int, int], None] | None,
    anchor: Any = None,
    data: bytes | None = None,
) -> Checked:
    """Check every line, the chain and (with ``public_key``) the signatures. See
    ``AuditLog.verify``. ``data``: the log's bytes, when the caller has read them."""
    if data is None:
        data = read_bytes(path)
    lines = data.split(b"\n")
    torn = lines.pop()  # what follows the last newline: b"" unless a write was cut
    previous, last_record = GENESIS, None
    total = len(lines)
    log_id: str | None = None
    hashes: list[str] | None = [] if anchor is not None else None  # each line's, for it
    signed: list[tuple[int, str, str]] = []
    for number, raw in enumerate(lines, start=1):
        if progress is not None and number % 20_000 == 0:
            progress(number, total)
        previous, last_record, sig = _check_line(raw, number, previous, path)
        if log_id is None:
            log_id = previous
        if hashes is not None:
            hashes.append(previous)
        if sig is not None:
            signed.append((number, previous, sig))
        elif public_key is not None and last_record in BOUNDARIES:
            since = signed[-1][0] + 1 if signed else 1
            raise AuditLogTampered(
                f"{path}: line {number} is not signed (a {last_record} record of a signed "
                "log always is: it was rewritten without the key)",
                line=since,
            )
    verified = _check_signatures(signed, public_key, path) if public_key is not None else 0
    if torn:
        # Only now that every line before it verified can the last one be a torn write,
        # and only if it begins as every record the log writes begins.
        number = len(lines) + 1
        if not RECORD_START.startswith(torn[: len(RECORD_START)]):
            _check_line(torn, number, previous, path)
        raise AuditLogTampered(
            f"{path}: torn last line {number} (a write cut short, as by a crash); "
            f"the {len(lines)} lines before it are intact",
            line=number,
        )
    if not lines and complete:
        raise AuditLogTampered(f"{path}: empty file (no audit records)", line=1)
    if complete and last_record != "end":
        raise AuditLogTampered(
            f"{path}: incomplete: the log has {len(lines)} records and no terminal record "
            "(the run did not finish, or the end of the file was cut off)",
            line=len(lines) + 1,
        )
    anchored = _check_anchor(anchor, log_id, hashes, path) if hashes is not None else 0
    return Checked(len(lines), verified, len(signed), log_id, previous, anchored)


def _check_anchor(anchor: Any, log_id: str | None, hashes: list[str], path: Any) -> int:
    """The records ``anchor`` (a store keeping anchors) vouches for; ``AuditLogTampered``
    if the log is shorter than its anchor, or differs from it, or has none there."""
    kept = anchor.audit_anchor(log_id) if log_id is not None else None
    if kept is None:
        raise AuditLogTampered(
            f"{path}: the store has no anchor for this log (another log, or its first line "
            "was replaced)",
            line=1,
        )
    records, head = kept
    if len(hashes) < records:
        raise AuditLogTampered(
            f"{path}: truncated: its anchor says {records} records, the log has "
            f"{len(hashes)} (records were cut off its end)",
            line=len(hashes) + 1,
        )
    if hashes[records - 1] != head:
        raise AuditLogTampered(
            f"{path}: line {records} is not the record its anchor names (the log was rewritten)",
            line=records,
        )
    return int(records)


def parse_line(raw: bytes, path: Any, number: int) -> dict[str, Any]:
    """Line ``number`` as a record, or ``AuditLogTampered`` if it is none."""
    try:  # UTF-8 only (json alone would take UTF-16 and UTF-32 too); NaN is no JSON
        entry = loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, StateDecodeError):
        raise AuditLogTampered(f"{path}: line {number} is not a JSON record", line=number) from None
    if not is_record(entry):
        raise AuditLogTampered(
            f"{path}: line {number} is not an audit record (missing fields)", line=number
        )
    return entry


def is_record(entry: Any) -> TypeGuard[dict[str, Any]]:
    """Whether a line's JSON has the fields of an audit record (not yet that they hold
    what they should)."""
    return type(entry) is dict and entry.keys() >= _KEYS


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """The file's bytes, or a ``StateDecodeError`` saying why there are none (or that they
    are a zip's, a bundle's perhaps: no log, and no tampered one)."""
    try:
        data = read_file(path)
    except IsADirectoryError:
        raise StateDecodeError(f"{path}: is a directory, not an audit log", "$") from None
    except UnreadableFile as exc:
        raise StateDecodeError(f"{path}: {exc.strerror}", "$") from None
    if data.startswith(ZIP):
        raise StateDecodeError(
            f"{path}: a zip, not an audit log (a bundle of one is read by the agents "
            "commands and by agents.runfiles.load_record)",
            "$",
        )
    return data
