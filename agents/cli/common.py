"""What the ``agents`` commands share: exit codes, atomic output, progress, loading."""

from __future__ import annotations

import importlib
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final, TextIO

from agents.errors import ResourceError

__all__ = [
    "BAD_INPUT",
    "DIFFERENT",
    "OK",
    "Terminal",
    "command_name",
    "counted",
    "is_bundle",
    "load_attribute",
    "one_line",
    "progress",
    "refuse_overwriting",
    "visible",
    "write_atomically",
]

OK, DIFFERENT, BAD_INPUT = 0, 1, 2

_CONTROLS: Final = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def visible(text: str) -> str:
    """``text`` with its control characters but tab and newline shown as escapes
    (``\\x1b``): what a model, a tool or a forged file wrote cannot move a terminal's
    cursor, clear its screen, set its title or write its clipboard."""
    return _CONTROLS.sub(lambda found: f"\\x{ord(found.group()):02x}", text)


class Terminal:
    """A terminal to write text to, ``visible``; everything else is the stream's own.
    Output to a pipe or a file is written as it is (as ``ls`` does), so that data a
    command prints (JSON, CSV) reaches a program unchanged."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        return self._stream.write(visible(text))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def one_line(text: str, secrets: Sequence[str]) -> str:
    """``text`` as a command says it: scrubbed (``redaction.scrub``, with ``secrets``), its
    lines and runs of spaces made one line (a command prints no traceback)."""
    from agents.records.redaction import scrub

    return visible(" ".join(scrub(text, secrets).split()))


def said(error: BaseException | str) -> str:
    """An error's text (or ``error`` itself) as a command says it: in one line, scrubbed
    of credentials (``password=…``, a URL's password, a key, the environment's secrets: a
    path, a user's module or a library's error may name one)."""
    from agents.records.redaction import environment_secrets

    return one_line(str(error), environment_secrets(os.environ))


def is_bundle(path: str) -> bool:
    """Whether ``path`` is a regular file starting as a zip does (a bundle, whatever its
    name; a command says what any other file is)."""
    from agents.audit.chain import ZIP

    try:
        if not os.path.isfile(path):
            return False
        with open(path, "rb") as file:
            return file.read(len(ZIP)) == ZIP
    except OSError:
        return False


def counted(number: int, noun: str) -> str:
    """``"1 blob"``, ``"2 blobs"``: a count as a sentence says it."""
    return f"{number:,} {noun}" if number == 1 else f"{number:,} {noun}s"


def write_atomically(path: str, text: str) -> None:
    """Write ``text`` to ``path`` only once all of it is ready (no partial output file:
    ``files.replacing``), with the mode any new file gets under the umask (a lone surrogate
    as its escape, as the command line prints it). A failure names ``path``."""
    from agents.shell.files import replacing

    data = text.encode("utf-8", "backslashreplace")
    try:
        with replacing(Path(path), fsync=False) as file:
            file.write(data)
    except OSError as exc:
        raise ResourceError(f"cannot write {path}: {exc.strerror or exc}") from None


def refuse_overwriting(output: str, inputs: list[str], suffixes: tuple[str, ...]) -> None:
    """A ``ConfigurationError`` when writing ``output`` would replace what the command reads:
    one of the ``inputs`` files, or a file with one of ``suffixes`` inside an input folder
    (``agents report run.jsonl -o run.jsonl`` replaced the audit log with its report)."""
    from agents.errors import ConfigurationError

    target = os.path.realpath(output)
    for given in inputs:
        source = os.path.realpath(given)
        if os.path.isdir(source):
            inside = os.path.commonpath([source, target]) == source
            if inside and target.lower().endswith(suffixes) and os.path.exists(target):
                raise ConfigurationError(f"{output} is a recording in {given}: write elsewhere")
        elif target == source:
            raise ConfigurationError(f"{output} is the file being read: write elsewhere")


def progress(label: str) -> Callable[[int, int], None] | None:
    """A progress line on stderr when it is a terminal (never in pipes, files or CI logs)."""
    if not sys.stderr.isatty():
        return None

    def show(done: int, total: int) -> None:
        end = "\n" if done >= total else ""
        sys.stderr.write(f"\r{label} {done:,}/{total:,} records ({done * 100 // total}%){end}")
        sys.stderr.flush()

    return show


def load_attribute(spec: str) -> Any:
    """The object named by ``MODULE:ATTR`` (modules found from the current directory too);
    anything going wrong while importing is a ``ConfigurationError`` saying what."""
    from agents.errors import ConfigurationError

    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise ConfigurationError(f"expected MODULE:ATTR, got {spec!r}")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        return getattr(importlib.import_module(module_name), attribute)
    except Exception as exc:  # the user's module may fail in any way while importing
        raise ConfigurationError(f"cannot load {spec}: {type(exc).__name__}: {exc}") from None


def command_name() -> str:
    """How to call this command again as it was called (``.venv/bin/agents``, or
    ``python -m agents`` through this interpreter): bare ``agents`` works only in an
    activated virtual environment."""
    invoked = sys.argv[0] if sys.argv else ""
    if not invoked or invoked.endswith("__main__.py") or not os.path.exists(invoked):
        return f"{_shortest(sys.executable)} -m agents"
    return _shortest(invoked)


def _shortest(path: str) -> str:
    """``path`` relative to the current directory when it lies below it, else absolute."""
    absolute = os.path.abspath(path)
    relative = os.path.relpath(absolute)
    return relative if not relative.startswith("..") else absolute
