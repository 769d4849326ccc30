"""``agents report``: one self-contained HTML page auditing a run (no external URLs)."""

from __future__ import annotations

import base64
import contextlib
import html
import json
import re
from collections.abc import Sequence
from typing import Any, Final

from agents.cli.labels import call_labels, waiting_for
from agents.errors import ContentError
from agents.records.blobs import SHOWN_IMAGES
from agents.records.content import ImagePart, ReasoningPart, TextPart
from agents.records.execution import ExecutionStatus
from agents.records.frozen import deep_thaw
from agents.records.redaction import scrub
from agents.records.state import AgentState
from agents.records.step import StepType

__all__ = ["THUMBNAIL_BYTES", "render_report"]

_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 70rem;
       color: #1d232a; padding: 0 1rem; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.1rem; margin-top: 2rem; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .3rem .6rem; border-bottom: 1px solid #dde2e7; }
th { background: #f3f5f7; }
.error { color: #a4161a; } .ok { color: #2b6a30; } .blocked, .warn { color: #8a5a00; }
.notice { border-left: 4px solid #8a5a00; background: #fff8e6; padding: .4rem .8rem; }
.notice.error { border-color: #a4161a; background: #fdecec; }
details.step { border: 1px solid #dde2e7; border-radius: 6px; margin: .6rem 0;
               padding: .4rem .8rem; }
details.step.error-step { border-color: #a4161a; }
pre { background: #f6f8fa; padding: .5rem; overflow-x: auto; white-space: pre-wrap; }
.summary span { display: inline-block; margin-right: 1.5rem; }
svg text { font-size: 10px; fill: #444; }
img.thumb { max-width: 12rem; max-height: 12rem; border: 1px solid #dde2e7; display: block; }
details.reasoning { color: #555; } .media { color: #555; font-style: italic; }
"""


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _json(value: Any) -> str:
    return _e(
        json.dumps(deep_thaw(value), indent=2, sort_keys=True, ensure_ascii=False, default=str)
    )


def _chart(state: AgentState) -> str:
    """Tokens (bars, left axis) and duration (line, right axis) per step, as inline SVG."""
    rows = state.timeline()
    if not rows:
        return "<p>No steps.</p>"
    width, height, pad = 680, 190, 44
    plot = height - 2 * pad
    step_width = (width - 2 * pad) / len(rows)
    most_tokens = max(r.input_tokens + r.output_tokens for r in rows) or 1
    longest = max(r.duration for r in rows) or 1.0
    bars, points, labels = [], [], []
    every = max(1, len(rows) // 20)  # at most about twenty step numbers under the axis
    for index, row in enumerate(rows):
        tokens = row.input_tokens + row.output_tokens
        bar = plot * tokens / most_tokens
        x = pad + index * step_width
        bars.append(
            f'<rect class="tokens" x="{x + 2:.1f}" y="{height - pad - bar:.1f}" '
            f'width="{max(step_width - 4, 1):.1f}" height="{bar:.1f}" fill="#7aa6d8">'
            f"<title>step {row.step}: {tokens} tokens, {row.duration * 1000:.2f} ms</title>"
            "</rect>"
        )
        y = height - pad - plot * row.duration / longest
        points.append(f"{x + step_width / 2:.1f},{y:.1f}")
        if index % every == 0 or index == len(rows) - 1:
            labels.append(
                f'<text class="tick" x="{x + step_width / 2:.1f}" y="{height - pad + 14}" '
                f'text-anchor="middle">{row.step}</text>'
            )
    line = f'<polyline fill="none" stroke="#d8572a" stroke-width="2" points="{" ".join(points)}"/>'
    axes = (
        f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{height - pad}" stroke="#888"/>'
        f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" '
        'stroke="#888"/>'
        f'<line x1="{width - pad}" y1="{pad}" x2="{width - pad}" y2="{height - pad}" '
        'stroke="#888"/>'
        f'<text class="axis" x="{pad - 4}" y="{pad}" text-anchor="end">{most_tokens}</text>'
        f'<text class="axis" x="{pad - 4}" y="{height - pad}" text-anchor="end">0</text>'
        f'<text class="axis" x="{width - pad + 4}" y="{pad}">{longest * 1000:.1f}</text>'
        f'<text class="axis" x="{width - pad + 4}" y="{height - pad}">0</text>'
        f'<text class="axis-title" x="{pad}" y="{pad - 10}">tokens (bars)</text>'
        f'<text class="axis-title" x="{width - pad}" y="{pad - 10}" text-anchor="end">'
        "duration in ms (line)</text>"
        f'<text class="axis-title" x="{width / 2:.1f}" y="{height - 6}" text-anchor="middle">'
        "step</text>"
    )
    return (
        f'<svg id="chart" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        'role="img" aria-label="tokens and duration per step">'
        f"{axes}{''.join(bars)}{line}{''.join(labels)}</svg>"
    )


def _notices(state: AgentState) -> str:
    """What a reader must see first: a run that did not finish, and calls that were
    blocked or failed (with links to their steps)."""
    notices = []
    status = state.status
    if status is ExecutionStatus.IN_PROGRESS or status is ExecutionStatus.PENDING:
        notices.append(
            '<p class="notice" id="incomplete">This run is <b>incomplete</b>: its record ends '
            f"after step {state.step_count}, before the run finished (a crash, or a run still "
            "going). What follows is the run as far as it was recorded.</p>"
        )
    elif status is ExecutionStatus.SUSPENDED:
        waiting = "; ".join(_e(line) for line in waiting_for(state))
        notices.append(
            f'<p class="notice" id="suspended">This run is <b>suspended</b>, waiting for '
            f"{waiting or 'nothing'}.</p>"
        )
    for label, css in (("blocked", "notice"), ("failed", "notice error")):
        steps: dict[int, None] = {}
        names: set[str] = set()
        count = 0
        for step_execution in state.step_executions:
            for execution in step_execution.step.tool_executions:
                if execution.blocked if label == "blocked" else execution.failed:
                    steps[step_execution.number] = None
                    names.add(execution.name)
                    count += 1
        if not count:
            continue
        links = ", ".join(f'<a href="#step-{n}">step {n}</a>' for n in steps)
        named = ", ".join(f"<code>{_e(name)}</code>" for name in sorted(names))
        notices.append(
            f'<p class="{css}" id="{label}-calls">{count} tool call{"s" if count > 1 else ""} '
            f"{label}: {named} (in {links}).</p>"
        )
    return "".join(notices)


def _message(message: Any) -> str:
    calls = "".join(
        f"<li>call <code>{_e(c.name)}</code> ({_e(c.id)}): <pre>{_json(c.arguments)}</pre></li>"
        for c in message.tool_calls
    )
    extra = f" &rarr; {_e(message.tool_call_id)}" if message.tool_call_id else ""
    return (
        f"<li><b>{_e(message.role.value)}</b>{extra}: {''.join(map(_part, message.parts))}"
        f"{'<ul>' + calls + '</ul>' if calls else ''}</li>"
    )


THUMBNAIL_BYTES: Final = 2_000_000
"""The largest image the page embeds as a thumbnail (a larger one is named, not shown)."""


def _part(part: Any) -> str:
    """A part as the page shows it: text as it is, reasoning folded, an image (PNG, JPEG,
    GIF or WebP whose bytes are at hand) as a thumbnail embedded in the page, any other
    media by its type, size and hash."""
    if isinstance(part, TextPart):
        return f"<pre>{_e(part.text)}</pre>"
    if isinstance(part, ReasoningPart):
        said = "(withheld by the provider)" if part.redacted and not part.text else part.text
        folded = f"<summary>reasoning</summary><pre>{_e(said)}</pre>"
        return f'<details class="reasoning">{folded}</details>'
    blob = part.blob
    if blob is None:
        url = scrub(part.url)  # a signed URL's signature and credential redacted
        return f'<p class="media">{_e(part.media_type)} at <code>{_e(url)}</code></p>'
    named = f"{blob.media_type}, {blob.size:,} bytes, sha256:{blob.sha256[:12]}"
    shown = isinstance(part, ImagePart) and blob.media_type in SHOWN_IMAGES
    if shown and blob.size <= THUMBNAIL_BYTES:
        with contextlib.suppress(ContentError):  # bytes not at hand: named only
            data = base64.b64encode(blob.data()).decode("ascii")
            source = f"data:{blob.media_type};base64,{data}"
            return f'<img class="thumb" src="{source}" alt="{_e(named)}" title="{_e(named)}">'
    return f'<p class="media">{_e(named)}</p>'


def _child(execution: Any, prefix: str) -> str:
    """A sub-agent's run, nested under the tool call that ran it."""
    child = execution.child
    status = child.status.value if child.status else "not run"
    usage = child.usage
    steps = "".join(
        _step(child, index, f"{prefix}{execution.id}-", "substep")
        for index in range(child.step_count)
    )
    return f"""
<details class="subagent" data-agent-id="{_e(child.agent_id)}">
<summary>Sub-agent <code>{_e(execution.name)}</code> &middot; agent
 <code>{_e(child.agent_id)}</code> &middot; {_e(status)} &middot; {child.step_count} steps
 &middot; {usage.total_tokens} tokens &middot; ${usage.cost:.6f}</summary>
<p>Final response:</p><pre>{_e(child.final_response or "")}</pre>{steps}
</details>"""


def _compaction(compaction: Any) -> str:
    """What context compaction did before the step's request."""
    parts = []
    if compaction.moved:
        parts.append(f"<p>{compaction.moved} messages moved to the buffer.</p>")
    if compaction.summarizing:
        usage = compaction.usage
        outcome = (
            f'<p class="error">the summary failed: {_e(compaction.error.describe())}</p>'
            if compaction.error is not None
            else f"<p>Summary ({usage.input_tokens} in / {usage.output_tokens} out tokens, "
            f"${usage.cost:.6f}):</p><pre>{_e(compaction.response.text)}</pre>"
        )
        summarized = "".join(_message(m) for m in compaction.summarized)
        parts.append(
            f"<p>{len(compaction.summarized)} buffered messages summarised:</p>"
            f"<details><summary>summarised messages</summary><ol>{summarized}</ol></details>"
            f"{outcome}"
        )
    return f'<div class="compaction"><h3>Context compaction</h3>{"".join(parts)}</div>'


def _step(state: AgentState, index: int, prefix: str = "", css_class: str = "step") -> str:
    step_execution = state.step_executions[index]
    step = step_execution.step
    kind = step.step_type
    css = f"{css_class} error-step" if kind is StepType.ERROR else css_class
    executions = []
    children = []
    for execution in step.tool_executions:
        if execution.child is not None:
            children.append(_child(execution, prefix))
        if execution.blocked:
            reason = execution.error.message if execution.error else ""
            outcome = f'<span class="blocked">blocked: {_e(reason)}</span>'
        elif execution.error is not None:
            outcome = f'<span class="error">{_e(execution.error.describe())}</span>'
        elif execution.stop_signal is not None:
            outcome = f"stopped: {_e(execution.stop_signal.message)}"
        elif not isinstance(execution.content, str):  # its images, audio, documents
            outcome = f'<span class="ok">ok</span> {"".join(map(_part, execution.content))}'
        else:
            outcome = f'<span class="ok">ok</span> <pre>{_json(execution.value)}</pre>'
        executions.append(
            f"<tr><td><code>{_e(execution.name)}</code></td>"
            f"<td><pre>{_json(execution.arguments)}</pre></td><td>{outcome}</td>"
            f"<td>{execution.duration * 1000:.2f} ms</td></tr>"
        )
    errors = "".join(f'<li class="error">{_e(error.describe())}</li>' for error in step.errors)
    response = step.response
    answer = (
        '<p class="error">no answer: the model call failed</p>'
        if response is None
        else f"<p>finish reason <code>{_e(response.finish_reason)}</code>"
        f"{f', model <code>{_e(response.model)}</code>' if response.model else ''}</p>"
        f"{''.join(map(_part, response.parts))}"
    )
    usage = step.usage
    inputs = "".join(_message(m) for m in step.input_messages)
    return f"""
<details class="{css}" id="{prefix}step-{step_execution.number}" data-step-type="{kind.value}">
<summary>Step {step_execution.number} &middot; {_e(kind.value)} &middot;
 {usage.input_tokens} in / {usage.output_tokens} out tokens &middot; ${usage.cost:.6f}
 &middot; {step_execution.duration * 1000:.2f} ms</summary>
{_compaction(step.compaction) if step.compaction is not None else ""}
<h3>Input messages</h3><ol>{inputs}</ol>
<h3>Model answer</h3>{answer}
<h3>Tool calls</h3>
<table><tr><th>tool</th><th>arguments</th><th>result</th><th>duration</th></tr>
{"".join(executions) or '<tr><td colspan="4">none</td></tr>'}</table>
{f"<h3>Sub-agents</h3>{''.join(children)}" if children else ""}
{f"<h3>Errors</h3><ul>{errors}</ul>" if errors else ""}
</details>"""


def render_report(state: AgentState | Sequence[AgentState], source: str) -> str:
    """The audit page of a run (read from ``source``), or of each run of a log holding
    several: an overview of them first, then each run as one run's page has it (its
    element ids prefixed ``run-N-``)."""
    states = [state] if isinstance(state, AgentState) else list(state)
    if len(states) == 1:
        only = states[0]
        title = f"Run {_e(only.agent_id)}"
        body = _run(only)
    else:
        title = f"{len(states)} runs"
        overview = "".join(
            f'<tr><td><a href="#run-{number}">run {number}</a></td>'
            f"<td><code>{_e(run.agent_id)}</code></td>"
            f"<td><code>{_e(run.execution.execution_id if run.execution else None)}</code></td>"
            f"<td>{_e(run.status.value if run.status else 'not run')}</td>"
            f"<td>{run.step_count}</td><td>{_e(_short(run.final_response or ''))}</td></tr>"
            for number, run in enumerate(states, start=1)
        )
        sections = "".join(
            f'<section id="run-{number}"><h2>Run {number} of {len(states)}</h2>'
            f"{_prefixed(_run(run), f'run-{number}-')}</section>"
            for number, run in enumerate(states, start=1)
        )
        body = (
            f'<p id="runs">{len(states)} runs in this log.</p>'
            '<table id="overview"><tr><th>run</th><th>agent</th><th>execution</th>'
            f"<th>status</th><th>steps</th><th>final response</th></tr>{overview}</table>"
            f"{sections}"
        )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} &mdash; agents audit report</title>
<style>{_STYLE}</style></head>
<body>
<h1>Agent run report</h1>
<p>Source: <code>{_e(source)}</code></p>
{body}
</body></html>
"""


def _short(text: str, most: int = 80) -> str:
    line = " ".join(text.split())
    return line if len(line) <= most else line[: most - 1] + "…"


_IDS: Final = re.compile(r'(\bid="|href="#)')


def _prefixed(section: str, prefix: str) -> str:
    """``section`` with each element id (and each link to one) prefixed: one page holds
    several runs. Text in it is escaped, so ``id="`` appears only where it was written."""
    return _IDS.sub(lambda match: match.group(1) + prefix, section)


def _run(state: AgentState) -> str:
    """One run's part of the page: summary, notices, answer, timeline, chart and steps."""
    execution = state.execution
    status = state.status.value if state.status else "not run"
    signal = state.stop_signal
    usage = state.usage
    rows = "".join(
        f"<tr><td>{r.step}</td><td>{_e(r.step_type.value)}</td>"
        f"<td>{_e(', '.join(call_labels(step_execution)))}</td>"
        f"<td>{r.input_tokens}</td><td>{r.output_tokens}</td><td>{r.cost:.6f}</td>"
        f"<td>{r.duration * 1000:.2f} ms</td>"
        f"<td>{_e(r.stop_reason.value) if r.stop_reason else ''}</td></tr>"
        for r, step_execution in zip(state.timeline(), state.step_executions, strict=True)
    )
    error = execution.error if execution is not None else None
    css = {ExecutionStatus.COMPLETED: "ok", ExecutionStatus.FAILED: "error"}.get(
        state.status or ExecutionStatus.PENDING, "warn"
    )
    steps = "".join(_step(state, index) for index in range(state.step_count))
    no_steps = "" if rows else '<tr><td colspan="8">no steps</td></tr>'
    return f"""<div class="summary" id="summary">
<span>agent <code>{_e(state.agent_id)}</code></span>
<span>execution <code>{_e(execution.execution_id if execution else None)}</code></span>
<span>status <b id="status" class="{css}">{_e(status)}</b></span>
<span>stop reason <b id="stop-reason">{_e(signal.reason.value if signal else "")}</b>
 {_e(signal.message if signal else "")}</span>
<span>steps {state.step_count}</span>
<span>tokens {usage.total_tokens}</span><span>cost ${usage.cost:.6f}</span>
<span>duration {(state.execution_duration or 0) * 1000:.2f} ms</span>
</div>
{_notices(state)}
{f'<p class="error" id="error">Error: {_e(error.describe())}</p>' if error else ""}
<h2>Final response</h2><pre id="final-response">{_e(state.final_response or "")}</pre>
<h2>Timeline</h2>
<table id="timeline"><tr><th>step</th><th>type</th><th>tools</th><th>input tokens</th>
<th>output tokens</th><th>cost</th><th>duration</th><th>stop reason</th></tr>
{rows}{no_steps}</table>
<h2>Tokens and duration per step</h2>{_chart(state)}
<h2>Steps</h2>{steps}
"""
