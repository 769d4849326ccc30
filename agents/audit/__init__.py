"""The audit log: a tamper-evident, optionally signed JSONL record of runs
(docs/design/auditing.md).

``AuditLog.open(path)`` is a (critical) listener. It writes a record when a run starts, one
per completed step and one when the run ends, each with ``seq``, ``prev_hash`` and
``hash`` — the SHA-256 of the record without its ``hash``, as canonical JSON (sorted keys,
no spaces, UTF-8) — so an edited byte, an inserted, deleted or reordered line, or a
cut-off file is detected by ``verify``; with a signing key, those records are also signed
(Ed25519), which proves who wrote them. ``read`` rebuilds a run's states exactly.

The parts: ``chain`` (lines, hashes, verification), ``keys`` (Ed25519 keys, the only user
of ``cryptography``), ``records`` (what the records hold), ``durability`` (group commit),
``reading`` (states rebuilt), ``log`` (the ``AuditLog`` listener).
"""

from agents.audit.chain import FORMAT, GENESIS, Checked, canonical
from agents.audit.log import AuditLog

__all__ = ["FORMAT", "GENESIS", "AuditLog", "Checked", "canonical"]
