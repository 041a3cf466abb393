"""Publishing without a network, two ways: the Hub client's calls intercepted at the ``HfApi``
method level (create_repo, create_branch, list_repo_files, create_commit) with the real
``CommitOperationAdd`` objects read back; and the real client over HTTP against a loopback Hub
(``loopback_hub.py``). Either way, what is uploaded equals the ``--dry-run`` folder byte for
byte, and no token or local path reaches a file or the output. The card of the default build is
rendered to HTML."""

from __future__ import annotations

import json

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from trajforge.cli import app
from trajforge.errors import StoreError
from trajforge.store.publish import check_no_leaks, folder_files, upload_plan

hub = pytest.importorskip("huggingface_hub")
FAKE_TOKEN = "hf_FakeTokenForTestsOnly0123456789abcdef"
REPO = "acme/retail-trajectories"
runner = CliRunner()


@dataclass
class FakeHub:
    """Records what trajforge asks of the Hub; ``remote`` is the repo's file list before."""

    remote: list[str] = field(default_factory=list)
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    commits: list[dict[str, Any]] = field(default_factory=list)

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        hub_self = self

        def create_repo(api, repo_id, **kw):
            hub_self.calls.append(("create_repo", {"repo_id": repo_id, **kw}))
            return f"https://huggingface.co/datasets/{repo_id}"

        def create_branch(api, repo_id, **kw):
            hub_self.calls.append(("create_branch", {"repo_id": repo_id, **kw}))

        def list_repo_files(api, repo_id, **kw):
            hub_self.calls.append(("list_repo_files", {"repo_id": repo_id, **kw}))
            return list(hub_self.remote)

        def create_commit(api, repo_id, operations, **kw):
            adds, deletes = {}, []
            for op in operations:
                if isinstance(op, hub.CommitOperationAdd):
                    with op.as_file() as f:
                        adds[op.path_in_repo] = f.read()
                else:
                    deletes.append(op.path_in_repo)
            hub_self.calls.append(("create_commit", {"repo_id": repo_id, **kw}))
            hub_self.commits.append({"adds": adds, "deletes": deletes, **kw})
            n = len(hub_self.commits)
            return hub.CommitInfo(commit_url=f"https://huggingface.co/datasets/{repo_id}/commit/{n:040x}",
                                  commit_message=kw.get("commit_message", ""), commit_description="",
                                  oid=f"{n:040x}")

        for name, fn in {"create_repo": create_repo, "create_branch": create_branch,
                         "list_repo_files": list_repo_files, "create_commit": create_commit}.items():
            monkeypatch.setattr(hub.HfApi, name, fn)

    def uploaded(self) -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        for commit in self.commits:
            out.update(commit["adds"])
        return out


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_TOKEN", FAKE_TOKEN)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    # huggingface_hub read the variable at import: set its constant too, so that any request
    # the interception missed fails instead of leaving the machine
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)


def _invoke(*args: str):
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result


def _grep_tree(folder: Path, needles: list[str]) -> list[str]:
    hits = []
    for path in folder.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            hits += [f"{path.name}: {n[:12]}..." for n in needles if n.encode() in data]
    return hits


@pytest.mark.slow
def test_upload_equals_the_dry_run_folder(default_build: Path, tmp_path: Path, env, monkeypatch) -> None:
    dry, staged = tmp_path / "dry", tmp_path / "staged"
    fake = FakeHub(remote=["README.md", ".gitattributes", "sft/train-00007-of-00009.parquet"])
    fake.install(monkeypatch)
    dry_run = _invoke("publish", "--repo-id", REPO, "--out", str(default_build), "--to", str(dry), "--dry-run")
    assert "nothing uploaded" in " ".join(dry_run.output.split()) and not fake.calls
    real = _invoke("publish", "--repo-id", REPO, "--out", str(default_build), "--to", str(staged),
                   "--private", "--revision", "v1")

    expected = {p: (dry / p).read_bytes() for p in folder_files(dry)}
    assert fake.uploaded() == expected  # byte for byte, every file, nothing more
    assert {p: (staged / p).read_bytes() for p in folder_files(staged)} == expected

    assert fake.calls[0] == ("create_repo", {"repo_id": REPO, "repo_type": "dataset", "private": True,
                                             "exist_ok": True})
    assert fake.calls[1][0] == "create_branch" and fake.calls[1][1]["branch"] == "v1"
    # one commit per shard group (export format), the card last
    groups = [sorted({p.split("/")[0] if "/" in p else p for p in c["adds"]}) for c in fake.commits]
    assert groups == [["sft"], ["preferences"], ["sharegpt"], ["openai"], ["rl_tasks"],
                      ["README.md", "plots", "trajforge_export.json"]]
    assert all(c["revision"] == "v1" and c["repo_type"] == "dataset" for c in fake.commits)
    assert fake.commits[0]["deletes"] == ["sft/train-00007-of-00009.parquet"]  # stale shard removed
    assert all(not c["deletes"] for c in fake.commits[1:])
    # the token is never handed around by trajforge (huggingface_hub finds it itself) ...
    assert all("token" not in kw for _, kw in fake.calls)
    # ... and appears nowhere: not in files, not in the output
    assert FAKE_TOKEN not in dry_run.output + real.output
    assert _grep_tree(dry, [FAKE_TOKEN]) == []
    assert not any(FAKE_TOKEN.encode() in data for data in fake.uploaded().values())


def test_no_local_path_in_any_published_file(default_build: Path, tmp_path: Path, env) -> None:
    folder = tmp_path / "dry"
    _invoke("publish", "--repo-id", REPO, "--out", str(default_build), "--to", str(folder), "--dry-run")
    needles = [str(default_build.resolve()), str(tmp_path.resolve()), str(Path.home()), "/tmp/", FAKE_TOKEN]
    assert _grep_tree(folder, needles) == []


def test_leak_check_refuses_and_names_only_the_file(tmp_path: Path) -> None:
    (tmp_path / "trajforge_export.json").write_text("{}")
    (tmp_path / "README.md").write_text(f"built in {Path.home()}/secret-place with {FAKE_TOKEN}")
    with pytest.raises(StoreError, match=r"^README\.md: holds a local path or a token") as caught:
        check_no_leaks(tmp_path, [str(Path.home()), FAKE_TOKEN])
    assert FAKE_TOKEN not in str(caught.value) and str(Path.home()) not in str(caught.value)


def test_upload_plan_chunks_big_groups(tmp_path: Path) -> None:
    for i in range(120):
        (tmp_path / "sft").mkdir(exist_ok=True)
        (tmp_path / "sft" / f"train-{i:05d}-of-00120.parquet").write_bytes(b"x")
    (tmp_path / "README.md").write_text("card")
    plan = upload_plan(tmp_path)
    assert [len(g.paths) for g in plan] == [50, 50, 20, 1]
    assert plan[-1].paths == ("README.md",)


def test_bad_repo_id_and_missing_catalog_exit_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["publish", "--repo-id", "no-slash", "--out", str(tmp_path), "--dry-run"])
    assert result.exit_code == 2 and "--repo-id" in result.output
    result = runner.invoke(app, ["export", "--out", str(tmp_path / "nothing"), "--to", str(tmp_path / "x")])
    assert result.exit_code == 2 and "no catalog" in result.output
    assert not (tmp_path / "x").exists()


def test_export_refuses_a_folder_it_did_not_make(default_build: Path, tmp_path: Path) -> None:
    keep = tmp_path / "mine" / "notes.txt"
    keep.parent.mkdir()
    keep.write_text("precious")
    result = runner.invoke(app, ["export", "--out", str(default_build), "--to", str(keep.parent)])
    assert result.exit_code == 2 and "not empty" in result.output
    assert keep.read_text() == "precious"


def test_card_of_the_default_build_renders_plots_and_yield(default_build, default_export) -> None:
    from trajforge.store import query

    markdown = pytest.importorskip("markdown")
    folder, summary = default_export
    text = (folder / "README.md").read_text()
    front, body = re.match(r"^---\n(.*?)\n---\n(.*)$", text, re.S).groups()
    meta = yaml.safe_load(front)
    assert meta["license"] == "apache-2.0" and meta["task_categories"] == ["text-generation"]
    assert meta["size_categories"] == ["n<1K"] and "retail" in meta["tags"]
    assert [c["config_name"] for c in meta["configs"]] == ["sft", "preferences", "sharegpt", "openai", "rl_tasks"]
    for config in meta["configs"]:
        for entry in config["data_files"]:
            assert list(folder.glob(entry["path"])), entry

    html = markdown.markdown(body, extensions=["tables", "fenced_code"])
    images = re.findall(r'<img alt="([^"]+)" src="([^"]+)"', html)
    assert {alt for alt, _ in images} == {"Turn counts", "Tool usage", "Structural complexity"}
    for _, src in images:
        assert (folder / src).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rows = dict(re.findall(r"<tr>\s*<td>([^<]+)</td>\s*<td>([^<]+)</td>", html))
    assert rows["blueprints generated"] == "300" and rows["blueprints valid (ground truth executed)"] == "300"
    episodes = query(default_build, "SELECT count(*) FROM trajectories")[1][0][0]
    passed = query(default_build, "SELECT count(*) FROM outcomes WHERE passed")[1][0][0]
    assert rows["episodes simulated"] == str(episodes) and episodes >= 550
    assert rows["episodes passing every check"] == str(passed) == str(sum(summary.rows["sft"].values()))
    for check, rate in query(default_build, 'SELECT "check", avg(passed::INT) FROM verdicts GROUP BY 1')[1]:
        assert f"<td><code>{check}</code></td>\n<td>{rate:.1%}</td>" in html
    assert "No Vendi score was computed" in html
    assert "cost per accepted trajectory $0.000000" in html


def test_the_card_configs_load_with_datasets(default_export) -> None:
    datasets = pytest.importorskip("datasets")
    folder, summary = default_export
    from trajforge.store.features import EXPORT_FORMATS, features

    for fmt in EXPORT_FORMATS:
        ds = datasets.load_dataset(str(folder), fmt)  # the card's YAML configs pick the files
        assert all(ds[s].features == features(fmt) for s in ds)
        assert {s: ds[s].num_rows for s in ds} == summary.rows[fmt]


def test_selection_and_vendi_from_later_stages_reach_exports_and_card(default_build: Path, tmp_path: Path) -> None:
    """The diversity stage (hashed embedder, select k): the sft export keeps only the selected
    trajectories, and the card reports the selected count and the Vendi score per domain."""
    import shutil

    from trajforge.config import load_config
    from trajforge.curation import run_diversity
    from trajforge.store import query
    from trajforge.store.card import write_card
    from trajforge.store.export_writer import write_export

    out = tmp_path / "build"
    shutil.copytree(default_build, out)
    run_id = query(out, "SELECT run_id FROM runs")[1][0][0]
    info = json.loads(next((out / "runs").glob("*/run.json")).read_text())
    config = load_config(None, {"store.out": str(out)}).model_validate({**json.loads(info["config"]), "store": {"out": str(out)},
                                    "diversity": {"select": 40, "embedder": "hashed"}})
    assert config.run_id() == run_id
    run_diversity(config, run_id)
    keep = {r[0] for r in query(out, "SELECT trajectory_id FROM selection WHERE selected")[1]}
    assert len(keep) == 40
    folder = tmp_path / "export"
    summary = write_export(out, folder, ["sft"])
    write_card(out, folder, summary, repo_id=REPO)
    assert summary.selection and sum(summary.rows["sft"].values()) == len(keep)
    card = (folder / "README.md").read_text()
    assert f"| selected (diversity) | {len(keep)} |" in card
    assert "| retail | " in card and "Vendi" in card


def test_a_build_without_failures_exports_no_preferences(tmp_path: Path) -> None:
    """Oracle-only runs have no failing trajectory: the preferences config is left out of the
    folder and the card, and everything else still exports."""
    from trajforge.config import load_config
    from trajforge.store.builds import run_build

    out = tmp_path / "build"
    run_build(load_config(None, {"store.out": str(out), "generation.n_blueprints": 12,
                                 "simulation.agents": ["oracle"]}))
    folder = tmp_path / "export"
    result = runner.invoke(app, ["export", "--out", str(out), "--to", str(folder), "--splits", "0.5,0.25,0.25"])
    assert result.exit_code == 0, result.output
    assert not (folder / "preferences").exists()
    meta = yaml.safe_load((folder / "README.md").read_text().split("---\n")[1])
    assert [c["config_name"] for c in meta["configs"]] == ["sft", "sharegpt", "openai", "rl_tasks"]
    bad = runner.invoke(app, ["export", "--out", str(out), "--to", str(folder), "--run", "run_nope"])
    assert bad.exit_code == 2 and "run_nope" in bad.output
    assert (folder / "README.md").exists()  # the earlier export is intact


@pytest.mark.slow
def test_publish_through_the_real_client_to_a_loopback_hub(default_build: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole publish path over HTTP, huggingface_hub included, against a loopback Hub: the
    repo's files afterwards equal the --dry-run folder byte for byte; the token travels only in
    the Authorization header."""
    from huggingface_hub import constants

    from .loopback_hub import LoopbackHub

    monkeypatch.setenv("HF_TOKEN", FAKE_TOKEN)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "AGENT_HARNESSES_PATH", str(tmp_path / "agent_harnesses.json"))
    dry = tmp_path / "dry"
    dry_run = _invoke("publish", "--repo-id", REPO, "--out", str(default_build), "--to", str(dry), "--dry-run")
    with LoopbackHub() as server:
        monkeypatch.setattr(constants, "ENDPOINT", server.url)
        first = _invoke("publish", "--repo-id", REPO, "--out", str(default_build), "--to", str(tmp_path / "a"))
        # a second publish to an existing repo and a new branch: exist_ok, branch created once
        second = _invoke("publish", "--repo-id", REPO, "--out", str(default_build), "--to", str(tmp_path / "b"),
                         "--revision", "v1", "--private")
    state = server.state
    expected = {p: (dry / p).read_bytes() for p in folder_files(dry)}
    for branch in ("main", "v1"):
        tree = dict(state.files[f"{REPO}@{branch}"])
        assert tree.pop(".gitattributes")
        assert tree == expected, branch
    assert state.repos[REPO]["type"] == "dataset"
    assert [c["revision"] for c in state.commits] == ["main"] * 6 + ["v1"] * 6
    # every Hub call carries the token; only huggingface_hub's own anonymous agent-registry
    # lookup goes without (it sends no credentials by design)
    assert state.auth - {""} == {f"Bearer {FAKE_TOKEN}"}
    assert [r for r in state.requests if "no auth" in r and "/api/agent-harnesses" not in r] == []
    assert "POST /api/repos/create" in state.requests and f"POST /api/datasets/{REPO}/branch/v1" in state.requests
    for output in (dry_run.output, first.output, second.output):
        assert FAKE_TOKEN not in output
    assert _grep_tree(tmp_path, [FAKE_TOKEN]) == []
