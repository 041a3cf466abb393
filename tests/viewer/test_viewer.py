"""The viewer's queries, pages and static site against a real built dataset (no browser)."""

from __future__ import annotations

import re
import shutil
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from typer.testing import CliRunner

from tests.viewer.conftest import ATTRIBUTE, SCRIPT, SELECT, Injected, inject
from trajforge.cli import app
from trajforge.store import query
from trajforge.viewer import queries
from trajforge.viewer.filters import Filters
from trajforge.viewer.render import ServerLinks
from trajforge.viewer.site import MARKER, write_site
from trajforge.viewer.snapshot import Dataset, Snapshot
from trajforge.viewer.transcript import first_divergence
from trajforge.viewer.views import Viewer

Data = tuple[Path, Injected]


@pytest.fixture(scope="module")
def snap(viewer_dataset: Data) -> Snapshot:
    return Snapshot(viewer_dataset[0])


def test_index_agrees_with_the_catalog(viewer_dataset: Data, snap: Snapshot) -> None:
    out, _ = viewer_dataset
    (total, passed), = query(out, "SELECT count(DISTINCT id), count(DISTINCT id) FILTER (WHERE passed) "
                                  "FROM trajectories t JOIN outcomes o ON o.trajectory_id = t.id")[1]
    o = queries.overview(snap)
    assert (o.trajectories, o.passed) == (total, passed)
    assert 0 < passed < total  # the faulty agent fails, the oracle passes
    failed_by_check = dict(query(out, 'SELECT "check", count(*) FILTER (WHERE NOT passed) FROM verdicts GROUP BY 1')[1])
    assert {c["check"]: c["failed"] for c in o.checks} == failed_by_check
    assert sum(f["episodes"] for f in o.faults) == query(
        out, "SELECT count(*) FROM trajectories WHERE fault_kind IS NOT NULL")[1][0][0]
    assert sum(n for _, n in o.turns) == total and sum(n for _, n in o.tool_calls) == total
    assert {c["bucket"] for c in o.complexity} <= {"low", "mid", "high"}


def test_filter_to_a_failing_check(viewer_dataset: Data, snap: Snapshot) -> None:
    out, _ = viewer_dataset
    check, failed = query(out, 'SELECT "check", count(DISTINCT trajectory_id) FROM verdicts WHERE NOT passed '
                               "GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 1")[1][0]
    page = queries.list_page(snap, Filters(check=check))
    assert page.total == failed and page.rows
    assert all(check in r["failed_checks"] and r["passed"] is False for r in page.rows)
    both = queries.list_page(snap, Filters(check=check, outcome="passed"))
    assert both.total == 0


def test_pages_cover_the_list_once(snap: Snapshot) -> None:
    total = queries.list_page(snap, Filters()).total
    seen: list[str] = []
    page_size = 7
    pages = -(-total // page_size)
    for number in range(1, pages + 1):
        seen += [r["id"] for r in queries.list_page(snap, Filters(page=number), page_size=page_size).rows]
    assert len(seen) == len(set(seen)) == total
    beyond = queries.list_page(snap, Filters(page=pages + 5), page_size=page_size)
    assert beyond.filters.page == pages  # a page past the end shows the last one


def test_search_is_over_messages_and_case_insensitive(viewer_dataset: Data, snap: Snapshot) -> None:
    _, injected = viewer_dataset
    for q in ("alert(1)", "ALERT(1)", "onerror=alert(4)"):
        assert [r["id"] for r in queries.list_page(snap, Filters(q=q)).rows] == [injected.trajectory_id]
    assert queries.list_page(snap, Filters(q="no message says this 0xdeadbeef")).total == 0
    # combined with another filter, and stable when paged again
    assert queries.list_page(snap, Filters(q="alert(1)", outcome="passed")).total in (0, 1)


def test_twin_and_first_divergence(snap: Snapshot) -> None:
    (tid,), = snap.rows("SELECT id FROM viewer_index WHERE fault_kind IS NOT NULL AND NOT passed "
                        "AND run_id <> 'viewer_injection' ORDER BY ord LIMIT 1")
    c = queries.compare_page(snap, tid)
    assert c is not None
    assert c.right.row["passed"] and c.right.row["blueprint_id"] == c.left.row["blueprint_id"]
    assert "oracle" in c.right.row["agent"]
    at = c.diverges_at
    left, right = c.left.messages, c.right.messages
    assert [m["content"] for m in left[:at]] == [m["content"] for m in right[:at]]
    assert at == min(len(left), len(right)) or (left[at]["content"], left[at]["tool_calls"]) != \
        (right[at]["content"], right[at]["tool_calls"])
    assert all(v.index >= at or any((x.result_index or -1) >= at for x in v.calls) for v in c.left_views)
    assert first_divergence(left, left) == len(left)


def test_evidence_lands_on_the_message_it_names(snap: Snapshot) -> None:
    rows = snap.rows("""SELECT trajectory_id, "check", evidence FROM verdicts
                        WHERE NOT passed AND evidence LIKE '%"message": %' LIMIT 5""")
    assert rows
    for tid, check, _ in rows:
        page = queries.trajectory_page(snap, tid)
        assert page is not None
        verdict = next(v for v in page.verdicts if v.check == check)
        assert verdict.messages
        flagged = {v.index for v in page.views if any(f.check == check for f in v.flags)} | {
            c.result_index for v in page.views for c in v.calls if any(f.check == check for f in c.flags)}
        assert set(verdict.messages) <= flagged


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.refs: list[str] = []
        self.tags: list[str] = []
        self.handlers: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for name, value in attrs:
            if name.startswith("on"):
                self.handlers.append(f"{tag} {name}")
            if name in ("href", "src") and value and not value.startswith(("data:", "#")):
                self.refs.append(value)


def test_markup_in_the_data_is_text(viewer_dataset: Data, snap: Snapshot) -> None:
    _, injected = viewer_dataset
    viewer = Viewer(viewer_dataset[0])
    for html in (viewer.trajectory(ServerLinks(), injected.trajectory_id),
                 viewer.blueprint(ServerLinks(), injected.blueprint_id),
                 viewer.trajectories(ServerLinks(), Filters(q=SCRIPT))):
        assert html is not None
        parser = _Links()
        parser.feed(html)
        assert "script" not in parser.tags and parser.handlers == []
        assert "<script>alert" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    page = viewer.trajectory(ServerLinks(), injected.trajectory_id) or ""
    assert "onmouseover=&#34;alert(2)&#34;" in page and "&lt;img src=x onerror=alert(4)&gt;" in page
    # the planted instructions are flagged above the transcript, as text
    assert 'data-testid="flag"' in page and "&lt;b onclick=alert(5)&gt;everything&lt;/b&gt;" in page


def test_static_site_is_self_contained(viewer_dataset: Data, tmp_path: Path) -> None:
    out, injected = viewer_dataset
    root = tmp_path / "site"
    root.mkdir()
    (root / MARKER).write_text("an earlier report\n")
    (root / "stale.html").write_text("from the earlier report")
    summary = write_site(out, root)
    assert not (root / "stale.html").exists()  # an earlier report is replaced whole
    files = sorted(root.rglob("*.html"))
    assert len(files) == summary.pages and summary.trajectories == summary.of_total
    assert (root / "t" / f"{injected.trajectory_id}.html").is_file()
    for path in files:
        parser = _Links()
        parser.feed(path.read_text())
        assert "script" not in parser.tags and parser.handlers == [], path
        for ref in parser.refs:
            parts = urlsplit(ref)
            assert not parts.scheme and not parts.netloc, f"{path}: {ref} leaves the site"
            assert (path.parent / unquote(parts.path)).resolve().is_file(), f"{path}: {ref} is missing"
    assert re.search(r"href=\"list/check-[^\"]+-1\.html\"", (root / "index.html").read_text())
    # a folder holding anything else is refused, and left as it was
    other = tmp_path / "mine"
    other.mkdir()
    (other / "notes.txt").write_text("keep me")
    result = CliRunner().invoke(app, ["report", "--out", str(out), "--to", str(other)])
    assert result.exit_code == 2 and "not a trajforge report" in result.output
    assert sorted(p.name for p in other.iterdir()) == ["notes.txt"]


def test_a_new_catalog_is_picked_up(viewer_dataset: Data, tmp_path: Path) -> None:
    """A build that ends while the viewer runs replaces the catalog; the next page shows it."""
    from trajforge.store import refresh_catalog

    out = tmp_path / "copy"
    shutil.copytree(viewer_dataset[0], out, ignore=shutil.ignore_patterns("*viewer_injection*"))
    refresh_catalog(out)
    dataset = Dataset(out)
    with dataset.lease() as before:
        assert before.rows("SELECT count(*) FROM viewer_index WHERE run_id = 'viewer_injection'")[0][0] == 0
    injected = inject(out)
    with dataset.lease() as after:
        assert after is not before
        assert after.rows("SELECT count(*) FROM viewer_index WHERE id = ?", [injected.trajectory_id])[0][0] == 1
    dataset.close()


def test_diversity_selection_and_vendi_per_stratum(snap: Snapshot) -> None:
    o = queries.overview(snap)
    [vendi] = o.vendi
    assert vendi["rows"] and all(r["vendi"] is not None and r["vendi"] >= 1.0 for r in vendi["rows"])
    assert {r["group"].rsplit("/", 1)[-1] for r in vendi["rows"]} <= {"low", "mid", "high"}
    (passed,), = snap.rows("SELECT count(*) FROM viewer_index WHERE passed AND run_id <> 'viewer_injection'")
    assert sum(r["items"] for r in vendi["rows"]) == passed  # the candidates: every passing episode
    assert sum(r["selected"] for r in vendi["rows"]) == SELECT
    assert ("selected for diversity", SELECT) in o.yields
    selected = queries.list_page(snap, Filters(decision="selected"))
    assert selected.total == SELECT and all(r["decision"] == "selected" for r in selected.rows)
    assert "selected" in queries.filter_options(snap)["decision"]


def test_evaluations_show_pass_at_1_and_pass_hat_k(viewer_dataset: Data, snap: Snapshot) -> None:
    out, _ = viewer_dataset
    page = queries.runs_page(snap)
    by_policy = {e["policy"]: e for e in page.evaluations}
    assert set(by_policy) == {"scripted:oracle", "scripted:unknown_tool"}
    oracle, broken = by_policy["scripted:oracle"], by_policy["scripted:unknown_tool"]
    assert (oracle["blueprints"], oracle["episodes"], oracle["trials"]) == (3, 6, 2)
    assert oracle["pass_at_1"] == oracle["pass_hat"][2] == 1.0
    assert broken["pass_at_1"] == 0.0 and dict(broken["failures"])["tool_schema"] == 6
    html = Viewer(out).runs(ServerLinks(), snap)
    assert 'data-testid="plot-evaluations"' in html and "100.0%" in html and "0.0%" in html


def test_cli_errors_are_one_line(tmp_path: Path) -> None:
    for args in (["view", "--out", str(tmp_path), "--port", "0"], ["report", "--out", str(tmp_path)]):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2
        assert result.output.strip().count("\n") == 0 and "no catalog" in result.output


def test_script_and_attribute_strings_are_what_was_stored(viewer_dataset: Data, snap: Snapshot) -> None:
    _, injected = viewer_dataset
    page = queries.trajectory_page(snap, injected.trajectory_id)
    assert page is not None
    assert any(v.content == injected.user_text for v in page.views)
    assert SCRIPT in injected.goal and ATTRIBUTE in injected.user_text


def test_loop_iterations_are_plotted(tmp_path: Path) -> None:
    """A loop's iteration rows (the loop tests' simulated loop: real pool and resynthesis, random
    rewards for the policy) on the runs page, as a table and a plot."""
    from tests.loop.test_records import _simulate
    from trajforge.environments.retail import RetailDomain
    from trajforge.generators import generate_blueprints
    from trajforge.schemas import TaskBlueprint
    from trajforge.schemas.config import GenerationConfig
    from trajforge.store import refresh_catalog

    domain = RetailDomain(300, 0)
    seeds = [b for b in generate_blueprints(domain, GenerationConfig(), "run_loop_seeds", 0, 6)
             if isinstance(b, TaskBlueprint)]
    records = _simulate(tmp_path, domain, seeds, 2)
    refresh_catalog(tmp_path)
    viewer = Viewer(tmp_path)
    with viewer.dataset.lease() as s:
        page = queries.runs_page(s)
        html = viewer.runs(ServerLinks(), s)
    [(run_id, rows)] = page.loops.items()
    assert [r["iteration"] for r in rows] == [r.iteration for r in records]
    assert [r["boundary_count"] for r in rows] == [r.boundary_count for r in records]
    assert html.count('data-testid="loop"') == 1 and f'alt="loop {run_id}"' in html


def test_a_damaged_shard_stops_it_unless_allowed(viewer_dataset: Data, tmp_path: Path) -> None:
    out = tmp_path / "copy"
    shutil.copytree(viewer_dataset[0], out)
    damaged = sorted((out / "verdicts").glob("run=*/*.parquet"))[0]
    damaged.write_bytes(damaged.read_bytes()[:-20] + b"not the bytes written")
    for args in (["view", "--out", str(out), "--port", "0"], ["report", "--out", str(out)]):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2 and "damaged" in result.output and "--allow-damaged" in result.output
    assert not (out / "report").exists()
    result = CliRunner().invoke(app, ["report", "--out", str(out), "--limit", "2", "--allow-damaged"])
    assert result.exit_code == 0, result.output
    assert "warning:" in result.output and (out / "report" / "index.html").is_file()
