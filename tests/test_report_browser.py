"""The HTML report in a real browser: headless Chromium renders every step, shows the error
step, logs no console errors, and a screenshot is written."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import CHROMIUM, add, chromium, explode, initial, make_loop

from agents import AuditLog
from agents.cli.report import render_report
from agents.testing import call, calls, reply

pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Chromium is not installed here (.ci/run installs Debian's chromium)",
)


@pytest.fixture
def report(tmp_path: Path) -> Path:
    log = tmp_path / "run.jsonl"
    with AuditLog.open(log) as audit:
        make_loop(
            calls(call("add", a=1, b=2), call("explode", reason="tool broke")),
            call("add", a=3, b=4),
            reply("finished"),
            tools=[add, explode],
            listeners=[audit],
        ).run(initial())
    page = tmp_path / "report.html"
    page.write_text(render_report(AuditLog.read(log), str(log)), encoding="utf-8")
    return page


def test_every_step_renders_and_the_error_step_shows(report, tmp_path):
    """The DOM Chromium builds has every step, the error step marked, and no console error."""
    result = chromium(tmp_path, "--dump-dom", report.as_uri())
    assert result.returncode == 0, result.stderr[-2000:]
    dom = result.stdout
    for number in (1, 2, 3):
        assert f'id="step-{number}"' in dom
    assert dom.count('data-step-type="error"') == 1
    assert 'class="step error-step"' in dom
    assert "RuntimeError: tool broke" in dom
    assert 'id="status" class="ok">completed<' in dom
    console = [line for line in result.stderr.splitlines() if "CONSOLE" in line]
    assert console == []


def test_a_screenshot_is_written(report, tmp_path):
    """A screenshot of the report lands in the test's temporary directory."""
    shot = tmp_path / "report.png"
    result = chromium(tmp_path, f"--screenshot={shot}", "--window-size=1200,1800", report.as_uri())
    assert result.returncode == 0, result.stderr[-2000:]
    assert shot.exists() and shot.stat().st_size > 10_000
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_top_says_what_went_wrong_and_the_chart_is_labelled(report, tmp_path):
    """The page opens with a notice of the failed call (linked to its step); the chart
    names its axes and its steps; no "model None" when the model is unknown."""
    dom = chromium(tmp_path, "--dump-dom", report.as_uri()).stdout
    assert 'id="failed-calls"' in dom and '<a href="#step-1">step 1</a>' in dom
    assert dom.index('id="failed-calls"') < dom.index('id="timeline"')
    assert "tokens (bars)" in dom and "duration in ms (line)" in dom and ">step</text>" in dom
    assert all('class="tick"' in dom and f">{n}</text>" in dom for n in (1, 2, 3))
    assert "None" not in dom


def test_an_incomplete_run_is_shown_as_incomplete(tmp_path):
    """A crashed run's log renders as incomplete, not in a completed run's colours."""
    log = tmp_path / "run.jsonl"
    with AuditLog.open(log) as audit:
        make_loop(
            calls(call("add", a=1, b=2)), reply("finished"), tools=[add], listeners=[audit]
        ).run(initial())
    lines = log.read_text(encoding="utf-8").splitlines(keepends=True)
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(lines[:-2]), encoding="utf-8")  # start and step 1
    page = tmp_path / "cut.html"
    page.write_text(render_report(AuditLog.read(cut), str(cut)), encoding="utf-8")
    dom = chromium(tmp_path, "--dump-dom", page.as_uri()).stdout
    assert 'id="incomplete"' in dom and "incomplete" in dom
    assert 'id="status" class="warn">in_progress<' in dom
    assert 'class="ok">in_progress' not in dom


def test_a_tools_image_is_a_thumbnail_and_reasoning_is_folded(tmp_path):
    """A run whose tool returns a screenshot and whose model reasons before answering: the
    report embeds the image (decoded by the browser at its size), folds the reasoning, and
    names a document by its type instead of showing it."""
    from helpers import Browser
    from serve_agent import PNG

    from agents import DocumentPart, InferenceResponse, ReasoningPart, ToolCall
    from agents.testing import FunctionDriver

    def screenshot() -> bytes:
        """A screenshot."""
        return PNG

    def model(request):
        if len(request.messages) < 3:
            return InferenceResponse(tool_calls=[ToolCall(id="s", name="screenshot", arguments={})])
        return InferenceResponse(
            content=[
                ReasoningPart("The screen is red."),
                "It is red.",
                DocumentPart.from_bytes(b"%PDF-1.4 notes", "application/pdf"),
            ]
        )

    log = tmp_path / "run.jsonl"
    with AuditLog.open(log) as audit:
        make_loop(tools=[screenshot], listeners=[audit]).with_options(
            driver=FunctionDriver(model)
        ).run(initial())
    page = tmp_path / "report.html"
    page.write_text(render_report(AuditLog.read(log), str(log)), encoding="utf-8")
    browser = Browser(page.as_uri(), tmp_path / "profile")
    try:
        size = browser.wait_for(
            "(() => { const i = document.querySelector('img.thumb');"
            " return i && i.complete && i.naturalWidth ? [i.naturalWidth, i.naturalHeight] : null;"
            " })()"
        )
        assert size == [40, 30]
        folded = browser.evaluate(
            "(() => { const d = document.querySelector('details.reasoning');"
            " return [d.open, d.querySelector('pre').textContent]; })()"
        )
        assert folded == [False, "The screen is red."]
        named = browser.evaluate("document.querySelector('p.media').textContent")
        assert named.startswith("application/pdf, 14 bytes, sha256:")
    finally:
        browser.close()
