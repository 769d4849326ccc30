"""``agents keygen``: a key pair for signed audit logs."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

from agents.cli.common import BAD_INPUT, OK, said

__all__ = ["keygen"]


def keygen(args: argparse.Namespace, out: TextIO) -> int:
    """``agents keygen [--out PREFIX]``: write PREFIX.pem (the private key, mode 600) and
    PREFIX.pub.pem (the public key, for ``agents verify --key``)."""
    from agents.audit.keys import generate_key_pair
    from agents.errors import ConfigurationError

    private, public = Path(f"{args.out}.pem"), Path(f"{args.out}.pub.pem")
    try:
        fingerprint = generate_key_pair(private, public)
    except ConfigurationError as exc:
        sys.stderr.write(f"agents keygen: {said(exc)}\n")
        return BAD_INPUT
    except OSError as exc:
        sys.stderr.write(f"agents keygen: cannot write {private}: {exc.strerror}\n")
        return BAD_INPUT
    out.write(
        f"private key: {private} (keep it secret: sign with it, AuditLog.open(path, "
        f"signing_key=...) or agents demo --sign {private})\n"
        f"public key:  {public} (verify with it: agents verify FILE --key {public})\n"
        f"fingerprint: {fingerprint}\n"
    )
    return OK
