"""The viewer in a real headless Chromium (Debian's package, driven by Playwright; no browser is
downloaded): ``trajforge view`` runs as its own process on a free loopback port.

Screenshots of each step go to benchmarks/results/browser/ for a reader. Without
/usr/bin/chromium the module is skipped, except under CI=true, where it fails.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.viewer.conftest import ATTRIBUTE, IMAGE, SCRIPT, Injected

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SHOTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "browser"

def _missing(what: str) -> None:
    """Under CI a missing browser stack fails the run; elsewhere it skips, saying what to install."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{what} is missing", pytrace=False)
    pytest.skip(f"{what} is missing", allow_module_level=True)


if not CHROMIUM.is_file():
    _missing(f"{CHROMIUM} (install Debian's chromium: apt-get install chromium)")
try:
    import playwright.sync_api as playwright
except ImportError:
    _missing("the playwright package (pip install -e '.[test]')")

Data = tuple[Path, Injected]


@pytest.fixture(scope="module")
def viewer_process(viewer_dataset: Data) -> Iterator[subprocess.Popen[str]]:
    """``trajforge view --port 0`` in its own process (it starts while Chromium does)."""
    out, _ = viewer_dataset
    proc = subprocess.Popen([sys.executable, "-m", "trajforge.cli", "view", "--out", str(out), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


DIALOGS: list[str] = []  # every dialog a page opened (none may)


@pytest.fixture(scope="module")
def browser(viewer_process: subprocess.Popen[str]) -> Iterator[Any]:
    with playwright.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def server(viewer_process: subprocess.Popen[str], browser: Any) -> str:
    """The viewer's URL, from the line it prints once it listens."""
    assert viewer_process.stdout is not None
    line = viewer_process.stdout.readline()
    found = re.search(r"serving (http://127\.0\.0\.1:\d+/)", line)
    assert found, f"no URL in {line!r} (exit {viewer_process.poll()})"
    return found.group(1)


@pytest.fixture(scope="module")
def page(browser: Any, server: str) -> Iterator[Any]:
    SHOTS.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    tab = context.new_page()
    tab.on("dialog", lambda d: (DIALOGS.append(d.message), d.dismiss()))
    yield tab
    context.close()


def _shot(page: Any, name: str) -> None:
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=False)


def test_overview_filter_transcript_tool_call_and_twin(page: Any, server: str, viewer_dataset: Data) -> None:
    from trajforge.store import query

    out, _ = viewer_dataset
    page.goto(server)
    total = query(out, "SELECT count(DISTINCT id) FROM trajectories")[1][0][0]
    assert page.get_by_test_id("total-trajectories").inner_text() == str(total)
    for plot in ("yield", "checks", "faults", "turns", "tool_calls", "complexity"):
        img = page.get_by_test_id(f"plot-{plot}").locator("img")
        assert img.evaluate("i => i.complete && i.naturalWidth > 0"), plot
    _shot(page, "1-overview")

    # filter to a failing check through the form
    # (a failing check of a faulty episode whose blueprint has a passing one; the injected copy
    # has a blueprint of its own, so no twin)
    check, faulty_id = query(out, """SELECT v."check", t.id FROM verdicts v JOIN trajectories t ON t.id = v.trajectory_id
                                     WHERE NOT v.passed AND t.fault_kind IS NOT NULL AND t.blueprint_id IN
                                       (SELECT u.blueprint_id FROM verdicts w JOIN trajectories u ON u.id = w.trajectory_id
                                        GROUP BY u.id, u.blueprint_id HAVING bool_and(w.passed))
                                     ORDER BY 1, 2 LIMIT 1""")[1][0]
    page.get_by_test_id("nav-trajectories").click()
    options = page.get_by_test_id("filter-check").locator("option").evaluate_all("os => os.map(o => o.value)")
    assert check in options
    page.get_by_test_id("filter-check").select_option(check)
    page.get_by_test_id("filter-outcome").select_option("failed")
    page.get_by_test_id("apply").click()
    page.wait_for_url(re.compile(r"check="))
    rows = page.get_by_test_id("trajectory-row")
    literal = "'" + check.replace("'", "''") + "'"
    expected = query(out, f'SELECT count(DISTINCT trajectory_id) FROM verdicts WHERE "check" = {literal} '
                          "AND NOT passed")[1][0][0]
    assert rows.count() == min(expected, 50) > 0
    assert page.get_by_test_id("result-count").locator("b").inner_text() == str(expected)
    for text in rows.locator("td:nth-child(10)").all_inner_texts():
        assert check in text.split(", ")
    _shot(page, "2-filtered-by-check")

    # open a faulty one of them (it has a passing twin)
    faulty = page.locator(f'[data-testid="trajectory-row"][data-id="{faulty_id}"]')
    assert "scripted:faulty" in faulty.inner_text()
    faulty.locator("a").first.click()
    page.wait_for_url(re.compile(r"/t/"))
    assert page.locator(f'[data-testid="verdict"][data-check="{check}"]').get_attribute("data-passed") == "false"
    flagged = page.locator(".msg.flagged, details.call.flagged")
    assert flagged.count() >= 1 or check in ("final_state", "outputs", "termination", "turn_limit")
    _shot(page, "3-transcript")

    # expand a tool call: its arguments and result show
    call = page.get_by_test_id("tool-call").first
    assert call.get_attribute("open") is None and not call.get_by_test_id("tool-result").is_visible()
    call.locator("summary").click()
    assert call.get_attribute("open") is not None
    assert call.get_by_test_id("tool-result").is_visible() and call.get_by_test_id("tool-arguments").is_visible()
    call.scroll_into_view_if_needed()
    _shot(page, "4-tool-call-expanded")

    # its passing twin, side by side from the first divergent message
    page.get_by_test_id("twin-link").click()
    page.wait_for_url(re.compile(r"/compare/"))
    at = int(re.search(r"message #(\d+)", page.get_by_test_id("divergence").inner_text()).group(1))
    left, right = page.get_by_test_id("left"), page.get_by_test_id("right")
    assert "failed" in left.locator("h2").inner_text() and "passed" in right.locator("h2").inner_text()
    for side in (left, right):
        indices = [int(i) for i in side.get_by_test_id("message").evaluate_all("ms => ms.map(m => m.dataset.index)")]
        assert indices and min(indices) >= at - 1  # a bubble holding a call whose result is the first difference
    _shot(page, "5-twin-side-by-side")

    # evaluations: pass@1 and pass^k per policy, as a table and a plot
    page.get_by_test_id("nav-runs").click()
    table = page.get_by_test_id("evaluations-table")
    assert table.locator("tr").count() == 3  # header, oracle, unknown-tool agent
    assert "scripted:oracle" in table.inner_text() and "100.0%" in table.inner_text()
    assert page.get_by_test_id("plot-evaluations").locator("img").evaluate("i => i.complete && i.naturalWidth > 0")
    _shot(page, "8-runs-and-evaluations")
    assert DIALOGS == []


def test_markup_in_messages_is_inert(page: Any, server: str, viewer_dataset: Data) -> None:
    _, injected = viewer_dataset
    page.goto(server + "trajectories?q=" + "alert(1)")
    rows = page.get_by_test_id("trajectory-row")
    assert rows.count() == 1 and rows.first.get_attribute("data-id") == injected.trajectory_id
    rows.first.locator("a").first.click()
    page.wait_for_url(re.compile(r"/t/"))
    texts = page.get_by_test_id("message-text").all_inner_texts()
    assert injected.user_text in texts  # shown as the text it is
    for call in page.get_by_test_id("tool-call").all():
        call.locator("summary").click()
    results = page.get_by_test_id("tool-result").all_inner_texts()
    assert any(SCRIPT in r and IMAGE in r for r in results)
    # nothing the data holds became an element or an attribute
    assert page.locator("script").count() == 0
    assert page.locator("img[src='x']").count() == 0
    assert page.locator("[onmouseover], [onfocus], [onerror], [autofocus]").count() == 0
    page.get_by_test_id("message-text").filter(has_text="my name is").hover()
    _shot(page, "6-markup-inert")
    page.locator("a", has_text=injected.blueprint_id).first.click()
    assert page.get_by_test_id("goal").inner_text() == injected.goal
    assert ATTRIBUTE in injected.goal and page.locator("[onmouseover], [onfocus]").count() == 0
    _shot(page, "7-blueprint")
    assert DIALOGS == []


def test_only_reads_and_forbids_scripts(server: str) -> None:
    import urllib.error
    import urllib.request

    with urllib.request.urlopen(server) as response:
        csp = response.headers["Content-Security-Policy"]
    assert "default-src 'none'" in csp and "script-src" not in csp  # no script source is allowed
    for method in ("POST", "PUT", "DELETE"):
        request = urllib.request.Request(server + "trajectories", data=b"x", method=method)
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request)
        assert refused.value.code == 405
    with pytest.raises(urllib.error.HTTPError) as missing:
        urllib.request.urlopen(server + "t/tr_does_not_exist")
    assert missing.value.code == 404
