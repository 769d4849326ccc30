"""What a regression test found (``agents.testing.regress``): each run's first change, a
short diff of it, and the report as text, JSON and a self-contained HTML page."""

from __future__ import annotations

import html
import json
from collections import Counter
from typing import Any, Final

import attrs

from agents.records.codec import to_dict
from agents.records.step import StepExecution
from agents.replaying import strip_volatile
from agents.testing.changes import Change

__all__ = ["RegressionReport", "RunOutcome", "step_json"]

_SHOWN: Final = 20  # steps of each side kept from the first change on, for the HTML page


def step_json(step_execution: StepExecution) -> Any:
    """A step as the report shows it: its JSON without ids and times."""
    return strip_volatile(to_dict(step_execution))


@attrs.frozen(kw_only=True)
class RunOutcome:
    """One recorded run through the new agent: ``same`` when ``change`` is ``None``;
    otherwise both histories from the change's step on (a few steps), and whether the new
    run went on past the change (``continued``, with ``continue_with``)."""

    source: str
    change: Change | None
    recorded_steps: tuple[Any, ...] = ()
    new_steps: tuple[Any, ...] = ()
    continued: bool = False

    @property
    def same(self) -> bool:
        """Whether the new agent told the recorded story."""
        return self.change is None

    def to_dict(self) -> dict[str, Any]:
        """The outcome as JSON data."""
        found: dict[str, Any] = {"source": self.source, "same": self.same}
        if self.change is not None:
            found["change"] = self.change.to_dict()
            found["continued"] = self.continued
        return found


@attrs.frozen
class RegressionReport:
    """Every run's outcome, in the order the runs were read."""

    runs: tuple[RunOutcome, ...]

    @property
    def changed(self) -> tuple[RunOutcome, ...]:
        """The runs that went differently."""
        return tuple(run for run in self.runs if not run.same)

    @property
    def ok(self) -> bool:
        """Whether every run went as recorded."""
        return not self.changed

    def by_kind(self) -> dict[tuple[str, int], int]:
        """How many runs changed, by kind of change and step."""
        counted = Counter(
            (run.change.kind, run.change.step) for run in self.runs if run.change is not None
        )
        return dict(sorted(counted.items()))

    def summary(self) -> str:
        """The report as text: the counts, the changes grouped by kind and step, and each
        changed run's first difference with its diff."""
        changed = self.changed
        lines = [
            f"{len(self.runs)} runs: {len(self.runs) - len(changed)} same, {len(changed)} changed"
        ]
        if changed:
            lines += ["", "changed  kind           step"]
            for (kind, step), count in self.by_kind().items():
                lines.append(f"{count:>7}  {kind:<14} {step}")
        for run in changed:
            assert run.change is not None
            lines += ["", f"{run.source}: {run.change.describe()}"]
            lines += [f"    {line}" for line in run.change.diff().splitlines()]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON data."""
        return {
            "runs": len(self.runs),
            "same": len(self.runs) - len(self.changed),
            "changed": len(self.changed),
            "by_kind": [
                {"kind": kind, "step": step, "runs": count}
                for (kind, step), count in self.by_kind().items()
            ],
            "outcomes": [run.to_dict() for run in self.runs],
        }

    def to_json(self) -> str:
        """``to_dict`` as JSON text."""
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False, default=str)

    def to_html(self) -> str:
        """A self-contained page (no external URLs): the counts, then each changed run
        with the recorded and the new history side by side from its first change on."""
        return render_html(self)


_STYLE: Final = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 90rem;
       color: #1d232a; padding: 0 1rem; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.1rem; margin-top: 2rem; }
table { border-collapse: collapse; } th, td { text-align: left; padding: .3rem .6rem;
border-bottom: 1px solid #dde2e7; } th { background: #f3f5f7; }
.same { color: #2b6a30; } .changed { color: #a4161a; }
.sides { display: grid; grid-template-columns: 1fr 1fr; gap: 1rem; }
pre { background: #f6f8fa; padding: .5rem; overflow-x: auto; white-space: pre-wrap;
      font-size: 12px; }
pre.diff .del { color: #a4161a; } pre.diff .add { color: #2b6a30; }
"""


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _diff_html(diff: str) -> str:
    lines = []
    for line in diff.splitlines():
        css = "del" if line.startswith("-") else "add" if line.startswith("+") else ""
        lines.append(f'<span class="{css}">{_e(line)}</span>' if css else _e(line))
    return '<pre class="diff">' + "\n".join(lines) + "</pre>"


def _text(value: Any) -> str:
    return (
        value
        if isinstance(value, str)
        else json.dumps(value, indent=2, sort_keys=True, default=str)
    )


def _side(title: str, steps: tuple[Any, ...], first: int) -> str:
    shown = steps[:_SHOWN]
    blocks = [f"<h3>{_e(title)}</h3>"]
    if not shown:
        blocks.append("<p>(no step here)</p>")
    for offset, step in enumerate(shown):
        blocks.append(f"<h4>step {first + offset}</h4><pre>{_e(_text(step))}</pre>")
    if len(steps) > _SHOWN:
        blocks.append(f"<p>… {len(steps) - _SHOWN} more steps</p>")
    return "<div>" + "".join(blocks) + "</div>"


def render_html(report: RegressionReport) -> str:
    """``RegressionReport.to_html``."""
    changed = report.changed
    rows = "".join(
        f"<tr><td>{_e(kind)}</td><td>{step}</td><td>{count}</td></tr>"
        for (kind, step), count in report.by_kind().items()
    )
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        "<title>agents regress</title>",
        f"<style>{_STYLE}</style></head><body>",
        "<h1>What changed</h1>",
        f"<p id='counts'>{len(report.runs)} runs: <span class='same'>"
        f"{len(report.runs) - len(changed)} same</span>, <span class='changed'>"
        f"{len(changed)} changed</span></p>",
    ]
    if rows:
        parts.append(f"<table><tr><th>kind</th><th>step</th><th>runs</th></tr>{rows}</table>")
    for run in changed:
        change = run.change
        assert change is not None
        parts += [
            f"<section class='run'><h2>{_e(run.source)}</h2>",
            f"<p class='change'>{_e(change.describe())}</p>",
            _diff_html(change.diff()),
            "<div class='sides'>",
            _side("recorded", run.recorded_steps, change.step),
            _side(
                "new" + (" (continued live)" if run.continued else ""), run.new_steps, change.step
            ),
            "</div></section>",
        ]
    parts.append("</body></html>")
    return "\n".join(parts)
