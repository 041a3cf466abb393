"""The diversity stage of a build: embed a run's trajectories, remove near-duplicates, score
each one and select a diverse subset, then store embeddings, scores and decisions as Parquet.

Runs after the shards are committed and the catalog refreshed (it reads the run through the
catalog), only when ``diversity.select`` or ``diversity.dedup_threshold`` is set. It is a pure
function of the run's trajectories and the diversity config, so re-running it rewrites the
same files; stored embeddings are reused when the embedder, view and trajectories match.

Decisions, in order:
1. candidates: the run's trajectories (``candidates="passed"``: only those passing every check),
   quality = the verdicts' reward;
2. near-duplicates: on the dedup view (default: hashed n-grams of the ``calls`` view), visiting
   better trajectories first (quality, then blueprint index), a trajectory whose cosine to an
   already kept one is >= the threshold is removed, naming the one it duplicates;
3. selection: the kept trajectories are split into strata (domain, first intent, complexity
   bucket), ``k`` is allocated over strata, and each stratum is filled greedily maximising
   (mean quality x) the order-2 Vendi score of the main embedding view.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from trajforge.schemas.config import DiversityConfig, RunConfig
from trajforge.schemas.ids import content_id
from trajforge.store import connect, refresh_catalog
from trajforge.store.derived import (
    derived_path,
    embeddings_table,
    read_embeddings,
    write_derived,
    write_json_atomic,
)
from trajforge.verifiers.diversity.dedup import nearest_neighbours, remove_near_duplicates
from trajforge.verifiers.diversity.documents import document
from trajforge.verifiers.diversity.embedders import Embedder, make_embedder
from trajforge.verifiers.diversity.select import leave_one_out_vendi2, stratified_select
from trajforge.verifiers.diversity.vendi import ORDERS, vendi_scores

FETCH_ROWS = 4096
RANDOM_DRAWS = 10
Progress = Callable[[str], None]


def complexity_bucket(structure: dict[str, Any]) -> str:
    """low / mid / high from intents, writes, revisions and redirects (1-2 / 3-5 / 6+)."""
    score = sum(int(structure.get(k, 0)) for k in ("n_intents", "write_count", "n_revisions",
                                                    "n_redirects"))
    return "low" if score <= 2 else "mid" if score <= 5 else "high"


@dataclass
class Candidates:
    ids: list[str] = field(default_factory=list)
    blueprint_ids: list[str] = field(default_factory=list)
    domain: list[str] = field(default_factory=list)
    intent: list[str] = field(default_factory=list)
    complexity: list[str] = field(default_factory=list)
    quality: list[float] = field(default_factory=list)
    near_copy: list[bool] = field(default_factory=list)  # blueprint is a paraphrased copy
    docs: dict[str, list[str]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.ids)


def _candidate_sql(run_id: str, passed_only: bool) -> str:
    safe = run_id.replace("'", "''")
    return f"""
        SELECT t.id AS trajectory_id, t.blueprint_id, t.domain, t.messages, t.final_state_diff,
               b.goal, b.structure, b.intents, b.generator, o.reward
        FROM trajectories t
        JOIN blueprints b ON b.id = t.blueprint_id AND b.run_id = t.run_id
        JOIN outcomes o ON o.trajectory_id = t.id AND o.run_id = t.run_id
        WHERE t.run_id = '{safe}' {"AND o.passed" if passed_only else ""}
        QUALIFY row_number() OVER (PARTITION BY t.id ORDER BY b.gen_index) = 1
        ORDER BY b.gen_index, t.id"""


def load_candidates(out: Path, run_id: str, cfg: DiversityConfig, views: AbstractSet[str]) -> Candidates:
    """The run's candidate trajectories and their texts for ``views``, streamed from the catalog."""
    import json

    found = Candidates(docs={v: [] for v in views})
    con = connect(out)
    try:
        reader = con.sql(_candidate_sql(run_id, cfg.candidates == "passed")
                             ).to_arrow_reader(FETCH_ROWS)
        for batch in reader:
            for row in batch.to_pylist():
                found.ids.append(row["trajectory_id"])
                found.blueprint_ids.append(row["blueprint_id"])
                found.domain.append(row["domain"])
                intents = json.loads(row["intents"] or "[]")
                found.intent.append(intents[0]["kind"] if intents else "none")
                found.complexity.append(complexity_bucket(row["structure"] or {}))
                found.quality.append(float(row["reward"]))
                found.near_copy.append(row["generator"] == "paraphrase")
                for v in views:
                    found.docs[v].append(document(row, v))
    finally:
        con.close()
    return found


def embed_cached(out: Path, run_id: str, embedder: Embedder, view: str, ids: list[str],
                 texts: list[str], batch: int = FETCH_ROWS) -> tuple[np.ndarray, bool]:
    """Embeddings of ``texts``; reuses the stored file of (run, embedder, view) when it holds
    every id, else embeds and stores. Returns (matrix, reused)."""
    key = content_id({"embedder": embedder.key, "view": view}, prefix="emb_", length=16)
    path = derived_path(out, "embeddings", run_id, key)
    if path.is_file():
        stored_ids, stored = read_embeddings(path)
        where = {t: i for i, t in enumerate(stored_ids)}
        if all(t in where for t in ids):
            return stored[[where[t] for t in ids]], True
    parts = [embedder.embed(texts[lo:lo + batch]) for lo in range(0, len(texts), batch)]
    X = np.concatenate(parts) if parts else np.zeros((0, 1), dtype=np.float32)
    write_derived(out, "embeddings", run_id, key, embeddings_table(run_id, embedder.key, view, ids, X))
    return X, False


def selection_id(run_id: str, cfg: DiversityConfig) -> str:
    body = cfg.model_dump(mode="json", exclude={"device", "batch_size", "threads"})
    return content_id({"run_id": run_id, "diversity": body}, prefix="sel_", length=16)


def _scores(X: np.ndarray) -> dict[str, float]:
    return {("inf" if math.isinf(q) else f"{q:g}"): v for q, v in vendi_scores(X, ORDERS).items()}


def _random_baseline(X: np.ndarray, pool: np.ndarray, k: int, rng: np.random.Generator
                     ) -> dict[str, dict[str, float]]:
    draws = [_scores(X[rng.choice(pool, size=k, replace=False)]) for _ in range(RANDOM_DRAWS)]
    return {q: {"mean": float(np.mean([d[q] for d in draws])),
                "std": float(np.std([d[q] for d in draws]))} for q in draws[0]}


def _group_scores(X: np.ndarray, labels: list[str], selected: np.ndarray | None
                  ) -> list[dict[str, Any]]:
    rows = []
    lab = np.asarray(labels, dtype=object)
    for value in sorted(set(labels)):
        members = lab == value
        row: dict[str, Any] = {"group": value, "items": int(members.sum()),
                               "vendi": _scores(X[members])}
        if selected is not None:
            chosen = members & selected
            row["selected"] = int(chosen.sum())
            row["vendi_selected"] = _scores(X[chosen]) if chosen.any() else None
        rows.append(row)
    return rows


@dataclass
class DiversityResult:
    selection_id: str
    candidates: int
    duplicates: int
    selected: int
    seconds: float
    summary: dict[str, Any]


def run_diversity(config: RunConfig, run_id: str, progress: Progress | None = None
                  ) -> DiversityResult:
    """Embed, dedup, score and select one run's trajectories; write the three tables and a
    summary JSON, refresh the catalog."""
    began = time.perf_counter()
    cfg = config.diversity
    out = config.store.out
    say = progress or (lambda _msg: None)
    sel_id = selection_id(run_id, cfg)
    views = {cfg.view} | ({cfg.dedup_view} if cfg.dedup_threshold is not None else set())
    say("loading trajectories")
    cand = load_candidates(out, run_id, cfg, views)
    n = len(cand)
    summary: dict[str, Any] = {
        "selection_id": sel_id, "run_id": run_id, "candidates": n,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "config": cfg.model_dump(mode="json"), "orders": [("inf" if math.isinf(q) else f"{q:g}") for q in ORDERS],
    }
    if n == 0:
        summary.update(duplicates=0, selected=0, note="no candidate trajectories")
        write_json_atomic(derived_path(out, "selection", run_id, sel_id).with_suffix(".json"), summary)
        return DiversityResult(sel_id, 0, 0, 0, time.perf_counter() - began, summary)
    quality = np.asarray(cand.quality)
    embedder = make_embedder(cfg.embedder, device=cfg.device, batch_size=cfg.batch_size,
                             threads=cfg.threads)
    say(f"embedding {n} trajectories ({embedder.key}, {cfg.view})")
    X, reused = embed_cached(out, run_id, embedder, cfg.view, cand.ids, cand.docs[cfg.view])
    summary["embedder"] = {"key": embedder.key, "view": cfg.view, "dim": int(X.shape[1]),
                           "reused": reused}

    keep = np.ones(n, dtype=bool)
    dup_of = np.full(n, -1)
    dup_sim = np.full(n, np.nan)
    if cfg.dedup_threshold is not None:
        dedup_embedder = make_embedder(cfg.dedup_embedder, device=cfg.device,
                                       batch_size=cfg.batch_size, threads=cfg.threads)
        say(f"near-duplicates ({dedup_embedder.key}, {cfg.dedup_view}, >= {cfg.dedup_threshold})")
        D, _ = embed_cached(out, run_id, dedup_embedder, cfg.dedup_view, cand.ids,
                            cand.docs[cfg.dedup_view])
        priority = np.lexsort((np.arange(n), -quality))
        dedup = remove_near_duplicates(D, cfg.dedup_threshold, priority=priority)
        keep, dup_of, dup_sim = dedup.keep, dedup.duplicate_of, dedup.similarity
        summary["dedup"] = {"embedder": dedup_embedder.key, "view": cfg.dedup_view,
                            "threshold": cfg.dedup_threshold, "removed": int((~keep).sum()),
                            "kept": int(keep.sum())}
        copies = np.asarray(cand.near_copy)
        if copies.any():
            summary["dedup"]["near_copies"] = {
                "copies": int(copies.sum()), "originals": int((~copies).sum()),
                "copies_removed": float((~keep[copies]).mean()),
                "originals_kept": float(keep[~copies].mean()) if (~copies).any() else None}

    say("nearest neighbours and contributions")
    nn_idx, nn_sim = nearest_neighbours(X) if n > 1 else (np.array([-1]), np.array([np.nan]))
    _, loo = leave_one_out_vendi2(X)

    strata_keys = cfg.stratify_by
    fields = {"domain": cand.domain, "intent": cand.intent, "complexity": cand.complexity}
    strata = ["/".join(fields[k][i] for k in strata_keys) or "all" for i in range(n)]
    selected = np.zeros(n, dtype=bool)
    rank = np.full(n, -1)
    gain = np.full(n, np.nan)
    quota: dict[Any, int] = {}
    kept_idx = np.flatnonzero(keep)
    if cfg.select is not None:
        k = min(cfg.select, len(kept_idx))
        say(f"selecting {k} of {len(kept_idx)}")
        order, g, quota = stratified_select(
            X[kept_idx], k, [strata[i] for i in kept_idx],
            quality=quality[kept_idx] if cfg.quality_weighted else None, how=cfg.allocation,
            method=cfg.method, rng=np.random.default_rng(cfg.seed))
        picked = kept_idx[order]
        selected[picked] = True
        rank[picked] = np.arange(len(picked))
        gain[kept_idx] = g
        summary["selection"] = {"requested": cfg.select, "selected": int(k),
                                "vendi_selected": _scores(X[picked]) if k else None}
        if 0 < k:
            rng = np.random.default_rng(cfg.seed)
            summary["selection"]["random_from_candidates"] = _random_baseline(X, np.arange(n), k, rng)
            summary["selection"]["random_from_kept"] = _random_baseline(X, kept_idx, k, rng)
            if k < n:
                summary["selection"]["quality_selected"] = float(quality[picked].mean())
                summary["selection"]["quality_candidates"] = float(quality.mean())
    summary["vendi_candidates"] = _scores(X)
    summary["vendi_kept"] = _scores(X[keep]) if keep.any() else None
    sel_mask = selected if cfg.select is not None else None
    summary["by_domain"] = _group_scores(X, cand.domain, sel_mask)
    # reported per full stratum whatever the allocation used
    full = [f"{cand.domain[i]}/{cand.intent[i]}/{cand.complexity[i]}" for i in range(n)]
    summary["by_stratum"] = _group_scores(X, full, sel_mask)

    say("writing scores and decisions")
    objective = "mean quality x VS2" if cfg.quality_weighted else "VS2"
    stratum_rank: dict[str, int] = {}
    score_rows, decision_rows = [], []
    for i in np.argsort(np.where(rank >= 0, rank, n + np.arange(n)), kind="stable"):
        i = int(i)
        s = strata[i]
        if not keep[i]:
            decision = "duplicate"
            reason = (f"near-duplicate of {cand.ids[dup_of[i]]} (cosine {dup_sim[i]:.3f} >= "
                      f"{cfg.dedup_threshold} on {cfg.dedup_embedder}/{cfg.dedup_view})")
        elif cfg.select is None:
            decision, reason = "kept", f"no kept trajectory within cosine {cfg.dedup_threshold}"
        elif selected[i]:
            stratum_rank[s] = stratum_rank.get(s, 0) + 1
            decision = "selected"
            reason = (f"greedy pick {stratum_rank[s]} of {quota.get(s, 0)} in stratum {s}: "
                      f"{objective} +{gain[i]:.4g}")
        else:
            decision = "not_selected"
            reason = (f"stratum {s} filled its {quota.get(s, 0)} pick(s); adding it would change "
                      f"{objective} by {gain[i]:+.4g}")
        decision_rows.append({
            "trajectory_id": cand.ids[i], "run_id": run_id, "selection_id": sel_id, "stratum": s,
            "decision": decision, "selected": bool(selected[i]),
            "rank": int(rank[i]) if rank[i] >= 0 else None,
            "duplicate_of": cand.ids[dup_of[i]] if dup_of[i] >= 0 else None, "reason": reason})
        score_rows.append({
            "trajectory_id": cand.ids[i], "blueprint_id": cand.blueprint_ids[i], "run_id": run_id,
            "selection_id": sel_id, "domain": cand.domain[i], "intent": cand.intent[i],
            "complexity": cand.complexity[i], "stratum": s, "quality": float(quality[i]),
            "nn_similarity": None if np.isnan(nn_sim[i]) else float(nn_sim[i]),
            "nn_trajectory_id": cand.ids[nn_idx[i]] if nn_idx[i] >= 0 else None,
            "loo_contribution": float(loo[i]),
            "selection_gain": None if np.isnan(gain[i]) else float(gain[i]),
            "duplicate_similarity": None if np.isnan(dup_sim[i]) else float(dup_sim[i])})
    write_derived(out, "scores", run_id, sel_id, score_rows)
    write_derived(out, "selection", run_id, sel_id, decision_rows)
    summary.update(duplicates=int((~keep).sum()), selected=int(selected.sum()),
                   seconds=round(time.perf_counter() - began, 3))
    write_json_atomic(derived_path(out, "selection", run_id, sel_id).with_suffix(".json"), summary)
    refresh_catalog(out)
    return DiversityResult(sel_id, n, int((~keep).sum()), int(selected.sum()),
                           time.perf_counter() - began, summary)


def run_diversity_stage(config: RunConfig) -> DiversityResult | None:
    """The build's last stage: scoring and selection over the run's committed trajectories,
    when configured (``diversity.select`` or ``diversity.dedup_threshold``)."""
    if not config.diversity.active:
        return None
    return run_diversity(config, config.run_id())
