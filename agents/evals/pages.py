"""An evaluation as one self-contained HTML page (docs/how-to/evals.md): a table of the cases
with their pass rates and intervals, the difference against a baseline when there is one,
and a link to each trial's run report (written beside the page from the recorded runs).
(The reports and comparisons it draws are taken as they come: their modules call it.)"""

from __future__ import annotations

import html
import os
from pathlib import Path
from typing import Any, Final

from agents.records.arguments import path as checked_path
from agents.shell.files import replacing

__all__ = ["render", "render_comparison", "write_html"]

_STYLE: Final = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 72rem;
       color: #1d232a; padding: 0 1rem; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .3rem .6rem; border-bottom: 1px solid #dde2e7; }
th { background: #f3f5f7; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.worse { color: #a4161a; font-weight: bold; } .better { color: #2b6a30; font-weight: bold; }
.bar { display: inline-block; height: .6rem; background: #8fb3d9; vertical-align: middle; }
a.trial { margin-right: .3rem; } a.trial.failed { color: #a4161a; }
"""


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def render(report: Any, comparison: Any = None, runs: str = "") -> str:
    """The page of ``report`` (and of its ``comparison`` with a baseline); ``runs``: the
    folder, relative to the page, holding each trial's run report (``<case>-<trial>.html``),
    or none."""
    against = {case.name: case for case in comparison.cases} if comparison else {}
    rows = []
    for index, case in enumerate(report.cases):
        low, high = case.interval
        versus = against.get(case.name)
        diff = (
            f'<td class="num">{versus.difference:+.2f}</td>'
            f'<td class="num">{versus.p_value:.3f}</td>'
            f'<td class="{versus.verdict.replace(" ", "-")}">{_e(versus.verdict)}</td>'
            if versus is not None
            else '<td colspan="3"></td>'
            if comparison
            else ""
        )
        links = "".join(
            f'<a class="trial{"" if trial.passed else " failed"}" '
            f'href="{_e(runs)}/{index}-{trial.number}.html">{trial.number}</a>'
            for trial in case.trials
            if trial.ran and runs
        )
        rows.append(
            f'<tr id="case-{index}"><td>{_e(case.name)}</td>'
            f'<td class="num">{case.passes}/{case.run}</td>'
            f'<td class="num">{case.pass_rate:.2f}</td>'
            f'<td class="num">{low:.2f} &ndash; {high:.2f}</td>'
            f'<td><span class="bar" style="width:{100 * case.pass_rate:.0f}px"></span></td>'
            f"{diff}<td>{links}</td></tr>"
        )
    low, high = report.interval
    head = (
        "<tr><th>case</th><th>passed</th><th>rate</th><th>95 % interval</th><th></th>"
        + ("<th>difference</th><th>p</th><th>verdict</th>" if comparison else "")
        + "<th>trials</th></tr>"
    )
    css = comparison.verdict.replace(" ", "-") if comparison else ""
    verdict = (
        f'<p id="verdict">Against the baseline: <span class="{css}">'
        f"{_e(comparison.verdict)}</span> (difference {comparison.difference:+.3f}, "
        f"McNemar p = {comparison.p_value:.4f}, alpha {comparison.alpha})</p>"
        if comparison
        else ""
    )
    not_run = (
        f'<p id="not-run">{len(report.not_run)} trials did not run: the budget was spent.</p>'
        if report.not_run
        else ""
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_e(report.dataset)} &mdash; agents evaluation</title>
<style>{_STYLE}</style></head>
<body>
<h1>Evaluation of {_e(report.dataset)}</h1>
<p id="overall">{report.passes} of {report.run} trials passed ({report.pass_rate:.2f}; 95 %
interval {low:.2f} &ndash; {high:.2f}), scored by {_e(", ".join(report.scorers))}.</p>
{verdict}{not_run}
<table id="cases">{head}{"".join(rows)}</table>
</body></html>
"""


def write_html(
    report: Any,
    path: str | os.PathLike[str],
    comparison: Any = None,
    out: str | os.PathLike[str] | None = None,
) -> None:
    """Write ``report``'s page to ``path``; with ``out`` (the evaluation's folder), each
    recorded trial's run report too, in ``<page>.runs/``, linked from the table."""
    from agents.audit import AuditLog
    from agents.cli.report import render_report

    page = Path(checked_path(path, "write_html: path"))
    runs = ""
    if out is not None:
        checked_path(out, "write_html: out")
        folder = page.with_name(page.name + ".runs")
        folder.mkdir(parents=True, exist_ok=True)
        for log in sorted(Path(out, "runs").glob("*.jsonl")):
            if log.name.endswith(".calls.jsonl"):  # the recording of its model calls
                continue
            text = render_report(AuditLog.read(log), str(log))
            (folder / f"{log.stem}.html").write_text(text, encoding="utf-8")
        runs = folder.name
    written = render(report, comparison, runs).encode("utf-8")
    with replacing(page, fsync=False) as file:  # the page whole, or not at all
        file.write(written)


def render_comparison(comparison: Any) -> str:
    """The page of a comparison alone: each case's pairs, difference, p-values, interval
    of the score difference and verdict, under the overall verdict."""
    rows = "".join(
        f'<tr id="case-{index}"><td>{_e(case.name)}</td><td class="num">{case.pairs}</td>'
        f'<td class="num">{case.difference:+.2f}</td><td class="num">{case.p_value:.4f}</td>'
        f'<td class="num">{case.adjusted:.4f}</td>'
        f'<td class="num">{case.interval[0]:+.2f} &ndash; {case.interval[1]:+.2f}</td>'
        f'<td class="{case.verdict.replace(" ", "-")}">{_e(case.verdict)}</td></tr>'
        for index, case in enumerate(comparison.cases)
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>Comparison &mdash; agents evaluation</title><style>{_STYLE}</style></head>
<body>
<h1>Candidate against baseline</h1>
<p id="verdict"><span class="{comparison.verdict.replace(" ", "-")}">{_e(comparison.verdict)}</span>
over {comparison.pairs} paired trials: difference {comparison.difference:+.3f}, McNemar
p = {comparison.p_value:.4f} at alpha {comparison.alpha} (cases: Holm-corrected).</p>
<table id="cases"><tr><th>case</th><th>pairs</th><th>difference</th><th>p</th>
<th>Holm p</th><th>score difference (95 %)</th><th>verdict</th></tr>{rows}</table>
</body></html>
"""
