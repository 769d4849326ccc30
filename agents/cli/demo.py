"""``agents demo``: a small travel-budget agent, run offline on a scripted model.

It shows the moving parts in one run: two tools (one called twice in parallel), a hook that
blocks a call, a step limit, usage accounting, and the run written as JSON.
"""

from __future__ import annotations

import os
import sys
import uuid
from typing import Any, TextIO

from agents import (
    AgentLoop,
    AgentState,
    HookContext,
    HookTrigger,
    Usage,
    hook,
    tool,
)
from agents.audit import AuditLog
from agents.cli.common import command_name
from agents.drivers.scripted import ScriptedDriver, call, calls, reply
from agents.errors import AgentError

__all__ = ["build_demo", "command", "run_demo"]

RATES = {"EUR": 1.08, "GBP": 1.27, "USD": 1.0}


@tool
def convert(amount: float, currency: str) -> float:
    """Convert an amount to US dollars.

    Args:
        amount: the amount of money
        currency: its ISO currency code (EUR, GBP or USD)
    """
    return round(amount * RATES[currency], 2)


@tool
def total(amounts: list[float]) -> float:
    """Add amounts together.

    Args:
        amounts: the amounts to add
    """
    return round(sum(amounts), 2)


@hook(HookTrigger.BEFORE_TOOL_USE, name="known_currencies_only")
def known_currencies_only(context: HookContext) -> HookContext:
    """Block conversions from currencies the rate table does not know."""
    call_ = context.tool_call
    if call_ is not None and call_.name == "convert":
        currency = call_.arguments.get("currency")
        if currency not in RATES:
            return context.with_tool_blocked(f"no exchange rate for {currency!r}")
    return context


def _usage(prompt: int, completion: int) -> Usage:
    return Usage(input_tokens=prompt, output_tokens=completion, cost=(prompt + completion) * 1e-6)


def build_demo() -> tuple[AgentLoop, AgentState]:
    """The demo's loop and initial state."""
    script = ScriptedDriver(
        [
            calls(
                call("convert", amount=120, currency="EUR"),
                call("convert", amount=80, currency="GBP"),
                call("convert", amount=5000, currency="JPY"),
                content="Converting the three bookings to dollars.",
                usage=_usage(412, 61),
            ),
            calls(call("total", amounts=[129.6, 101.6]), usage=_usage(548, 24)),
            reply(
                "Your trip costs $231.20 for the hotel and the train. I could not convert "
                "the 5,000 JPY dinner: there is no rate for JPY.",
                usage=_usage(601, 38),
            ),
        ]
    )
    loop = AgentLoop(script, tools=[convert, total], hooks=[known_currencies_only], max_steps=5)
    state = AgentState.initial(
        "You are a travel assistant. Use the tools for every calculation.",
        messages=[
            "My hotel is 120 EUR, the train 80 GBP and a dinner 5000 JPY. What is the total in USD?"
        ],
    )
    return loop, state


def run_demo(out_dir: str, stdout: TextIO, stderr: TextIO, sign: str | None = None) -> int:
    """Run the demo, print its timeline and answer, write its run file (an audit log,
    signed with the private key file ``sign`` if given)."""
    loop, state = build_demo()
    key = None
    if sign is not None:
        from agents.audit.keys import load_private_key

        try:
            key = load_private_key(sign)
        except AgentError as exc:
            stderr.write(f"agents demo: {exc}\n")
            return 2
    # Written under a name of its own, then named by the run's agent id (the log makes the
    # file, with the mode any new file gets under the umask).
    temporary = os.path.join(out_dir, f".agents-demo-{uuid.uuid4().hex}.jsonl")
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as exc:
        stderr.write(f"agents demo: cannot write the run file in {out_dir!r}: {exc}\n")
        return 2
    try:
        with AuditLog.open(temporary, signing_key=key) as log:
            final = loop.with_listeners(log).run(state)
        path = os.path.join(out_dir, f"agents-demo-{final.agent_id}.jsonl")
        os.replace(temporary, path)
    except (OSError, AgentError) as exc:
        if os.path.exists(temporary):
            os.unlink(temporary)
        stderr.write(f"agents demo: cannot write the run file in {out_dir!r}: {exc}\n")
        return 2
    rows = [("step", "type", "tools", "tokens", "duration", "stop")]
    last = final.step_count
    for step_execution in final.step_executions:
        step = step_execution.step
        names = [e.name + (" (blocked)" if e.blocked else "") for e in step.tool_executions]
        rows.append(
            (
                str(step_execution.number),
                step.step_type.value,
                ", ".join(names) or "-",
                str(step.usage.total_tokens),
                f"{step_execution.duration * 1000:.2f} ms",
                final.stop_reason.value
                if step_execution.number == last and final.stop_reason
                else "",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        stdout.write(
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        )
        stdout.write("\n")
    usage = final.usage
    status = final.status.value if final.status else "none"
    stdout.write(f"\nstatus: {status}   tokens: {usage.total_tokens}   cost: ${usage.cost:.6f}\n")
    stdout.write(f"answer: {final.final_response}\n")
    stdout.write(f"run written to {path}" + (", signed" if sign else "") + "\n")
    agents = command_name()
    check = f"{agents} verify {path}" + (f" --key {_public_key_file(sign)}" if sign else "")
    stdout.write(
        f"next: {agents} inspect {path}\n"
        f"      {check}\n"
        f"      {agents} replay {path} --verify\n"
        f"      {agents} report {path} -o report.html\n"
    )
    return 0


def _public_key_file(private: str) -> str:
    """The public key ``agents keygen`` wrote beside ``private`` (PREFIX.pem ->
    PREFIX.pub.pem), or a placeholder."""
    public = private.removesuffix(".pem") + ".pub.pem"
    return public if private.endswith(".pem") and os.path.isfile(public) else "PUBLIC.pem"


def command(args: Any, out: TextIO) -> int:
    """``agents demo [--out DIR] [--sign PRIVATE.pem]``."""
    return run_demo(out_dir=args.out, stdout=out, stderr=sys.stderr, sign=args.sign)
