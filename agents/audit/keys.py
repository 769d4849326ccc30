"""Ed25519 keys for signed audit logs — the only module that imports ``cryptography``
(the ``signing`` extra), and only when a key is used.

A private key signs the hash of every boundary record (a run's start, each step, its end);
the public key verifies. Keys are read from PEM files (PKCS #8 private keys, unencrypted or
with a passphrase given by the caller; SubjectPublicKeyInfo public keys) or given as
``cryptography`` key objects. No key material appears in a repr, an error or a log.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any, Final

from agents.errors import ConfigurationError
from agents.shell.files import read_file

__all__ = [
    "PrivateKey",
    "PublicKey",
    "fingerprint",
    "generate_key_pair",
    "load_private_key",
    "load_public_key",
    "sign",
    "signature_valid",
]

PrivateKey = Any  # an Ed25519PrivateKey (Any: cryptography is optional)
PublicKey = Any  # an Ed25519PublicKey
_DOMAIN: Final = b"agents audit log, record hash: "  # what is signed: never a bare hash
_MISSING: Final = "signed audit logs need the 'cryptography' package: pip install 'agents[signing]'"


def _ed25519() -> Any:
    try:
        from cryptography.hazmat.primitives.asymmetric import ed25519
    except ImportError:
        raise ConfigurationError(_MISSING) from None
    return ed25519


def _serialization() -> Any:
    from cryptography.hazmat.primitives import serialization

    return serialization


def load_private_key(key: object, *, password: bytes | None = None) -> PrivateKey:
    """An Ed25519 private key from a key object, PEM bytes or the path of a PEM file."""
    ed25519 = _ed25519()
    if isinstance(key, ed25519.Ed25519PrivateKey):
        return key
    return _private(_pem(key, "private"), _name(key), password)


def _private(data: bytes, name: str, password: bytes | None = None) -> PrivateKey:
    """The Ed25519 private key in the PEM ``data`` (of the key ``name``, as errors say)."""
    from cryptography.exceptions import UnsupportedAlgorithm

    try:
        loaded = _serialization().load_pem_private_key(data, password=password)
    except UnsupportedAlgorithm:  # a key type cryptography does not know
        loaded = None
    except (ValueError, TypeError) as exc:
        reason = "it needs a password" if "password" in str(exc).lower() else "not a PEM key"
        raise ConfigurationError(f"{name}: cannot read the private key ({reason})") from None
    if not isinstance(loaded, _ed25519().Ed25519PrivateKey):
        raise ConfigurationError(f"{name}: not an Ed25519 private key")
    return loaded


def load_public_key(key: object) -> PublicKey:
    """An Ed25519 public key from a key object, PEM bytes or the path of a PEM file (a
    private key's file gives its public key)."""
    ed25519 = _ed25519()
    if isinstance(key, ed25519.Ed25519PublicKey):
        return key
    if isinstance(key, ed25519.Ed25519PrivateKey):
        return key.public_key()
    data = _pem(key, "public")
    if b"PRIVATE KEY" in data:
        return _private(data, _name(key)).public_key()
    from cryptography.exceptions import UnsupportedAlgorithm

    try:
        loaded = _serialization().load_pem_public_key(data)
    except UnsupportedAlgorithm:  # a key type cryptography does not know
        loaded = None
    except (ValueError, TypeError):
        raise ConfigurationError(
            f"{_name(key)}: cannot read the public key (not a PEM key)"
        ) from None
    if not isinstance(loaded, ed25519.Ed25519PublicKey):
        raise ConfigurationError(f"{_name(key)}: not an Ed25519 public key")
    return loaded


def _pem(key: object, kind: str) -> bytes:
    if isinstance(key, bytes):
        return key
    if isinstance(key, str | os.PathLike):
        try:
            return read_file(key)
        except FileNotFoundError:
            raise ConfigurationError(f"{key}: no such key file") from None
        except OSError as exc:
            raise ConfigurationError(f"{key}: cannot read the key file ({exc.strerror})") from None
    raise ConfigurationError(
        f"a {kind} key is an Ed25519 key object, PEM bytes or a path, not {type(key).__name__}"
    )


def _name(key: object) -> str:
    """How an error names a key: its path, never its bytes."""
    return str(key) if isinstance(key, str | os.PathLike) else "the key given"


def sign(key: PrivateKey, digest: str) -> str:
    """The signature of a record's hash, as hex."""
    return str(key.sign(_DOMAIN + digest.encode()).hex())


def signature_valid(key: PublicKey, digest: str, signature: str) -> bool:
    """Whether ``signature`` (hex) is ``key``'s signature of the hash ``digest``."""
    from cryptography.exceptions import InvalidSignature

    try:
        key.verify(bytes.fromhex(signature), _DOMAIN + digest.encode())
    except (InvalidSignature, ValueError):
        return False
    return True


def fingerprint(key: PublicKey) -> str:
    """A short name for a public key: the first 16 hex digits of the SHA-256 of its raw
    bytes (written in a signed log's start records, so a reader knows which key to ask
    for)."""
    serialization = _serialization()
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def generate_key_pair(private_path: Path, public_path: Path) -> str:
    """Write a new key pair (the private key file readable by its owner only, mode 600;
    existing files are not overwritten); the public key's fingerprint."""
    ed25519 = _ed25519()
    serialization = _serialization()
    for path in (private_path, public_path):
        if path.exists():
            raise ConfigurationError(f"{path}: exists already (not overwritten)")
    key = ed25519.Ed25519PrivateKey.generate()
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    private_path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(private)
    os.chmod(private_path, 0o600)  # whatever the umask
    public_path.write_bytes(public)
    return fingerprint(key.public_key())
