"""The ``agents`` command line (also ``python -m agents``)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agents",
        description="Run and inspect agents built on the agents step engine.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = commands.add_parser(
        "demo",
        help="run a small example agent offline and print its timeline",
        description="Run a small example agent offline (scripted model, two tools, one hook, "
        "a step limit), print its timeline and final answer, and write the run's JSON.",
    )
    demo.add_argument(
        "--out",
        metavar="DIR",
        default=".",
        help="directory for the run file (default: the current directory)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 1 verification failed, 2 bad input)."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "demo":
        from agents.cli.demo import run_demo

        return run_demo(out_dir=args.out, stdout=sys.stdout, stderr=sys.stderr)
    parser.print_help(sys.stderr)
    return 2
