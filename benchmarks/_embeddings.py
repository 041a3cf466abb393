"""Synthetic sentence-embedding-like data for the diversity benchmarks.

Real sentence embeddings are anisotropic (a decaying spectrum: a few directions carry most of
the variance) and clustered (topics of very unequal size). ``synthetic_embeddings`` mimics both:
cluster centres and within-cluster offsets are Gaussian with per-dimension scales ``i^-0.7``,
cluster sizes are Zipf-distributed, and rows are unit-normalised (cosine geometry).
``isotropic`` draws plain N(0, I) rows: the worst case for lazy greedy selection, because every
candidate then looks alike.

``minilm_dialogues`` gives real sentence embeddings of generated dialogues (a scripted build,
the packaged MiniLM model) and ``tiled`` grows them to any n, so a benchmark can check its
result on data with the geometry of the real thing (``describe`` compares the two).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np


def synthetic_embeddings(n: int, d: int = 384, *, clusters: int = 2000, spread: float = 0.6,
                         seed: int = 0, dtype: type = np.float32) -> np.ndarray:
    rng = np.random.default_rng(seed)
    scale = (np.arange(1, d + 1) ** -0.7).astype(np.float64)
    centres = rng.normal(size=(clusters, d)) * scale
    weights = 1.0 / np.arange(1, clusters + 1) ** 1.1
    labels = rng.choice(clusters, size=n, p=weights / weights.sum())
    X = np.empty((n, d), dtype=dtype)
    for lo in range(0, n, 65_536):
        hi = min(n, lo + 65_536)
        block = centres[labels[lo:hi]] + spread * rng.normal(size=(hi - lo, d)) * scale
        X[lo:hi] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return X


def isotropic(n: int, d: int = 384, *, seed: int = 0, dtype: type = np.float32) -> np.ndarray:
    X = np.random.default_rng(seed).normal(size=(n, d)).astype(dtype)
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def minilm_dialogues(blueprints: int = 600, view: str = "user", cache: Path | None = None
                     ) -> np.ndarray:
    """Real sentence embeddings: the packaged all-MiniLM-L6-v2 on the ``view`` texts of the
    trajectories of a scripted build of ``blueprints`` tasks (about 1,100 texts at 600), the
    texts and model the diversity stage uses. Cached as ``.npy`` (default in the temp folder),
    since embedding takes a minute or two on two cores."""
    folder = cache or Path(tempfile.gettempdir()) / "trajforge-bench"
    path = folder / f"minilm-{view}-{blueprints}.npy"
    if path.is_file():
        return np.load(path)
    os.environ["HF_HUB_OFFLINE"] = "1"
    from trajforge.config import load_config
    from trajforge.curation import load_candidates
    from trajforge.store.builds import run_build
    from trajforge.verifiers.diversity.embedders import make_embedder

    with tempfile.TemporaryDirectory(prefix="bench-dialogues-") as out:
        cfg = load_config(None, {"store.out": out, "generation.n_blueprints": blueprints,
                                 "diversity.candidates": "all"})
        run_build(cfg)
        texts = load_candidates(Path(out), cfg.run_id(), cfg.diversity, {view}).docs[view]
    X = make_embedder("minilm", device="cpu").embed(texts)
    folder.mkdir(parents=True, exist_ok=True)
    np.save(path, X)
    return X


def tiled(base: np.ndarray, n: int, *, mix: float = 0.3, seed: int = 0,
          dtype: type = np.float32) -> np.ndarray:
    """``n`` rows grown from real embeddings: row i is ``b_j + mix * (b_u - b_v)`` for random
    rows j, u, v of ``base``, unit-normalised. The perturbation is a difference of two real
    embeddings, so it lies in the data's own (anisotropic) subspace rather than adding isotropic
    noise; each base row becomes a family of about n / len(base) near-variants."""
    rng = np.random.default_rng(seed)
    base = np.asarray(base, dtype=np.float64)
    X = np.empty((n, base.shape[1]), dtype=dtype)
    for lo in range(0, n, 65_536):
        hi = min(n, lo + 65_536)
        j, u, v = (rng.integers(0, len(base), size=hi - lo) for _ in range(3))
        block = base[j] + mix * (base[u] - base[v])
        X[lo:hi] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return X


def describe(X: np.ndarray, sample: int = 2000, seed: int = 0) -> dict[str, float]:
    """Geometry in a few numbers: mean and 95th percentile pairwise cosine and median
    nearest-neighbour cosine (on a sample), and the covariance spectrum's effective dimension
    (order-1 and order-2 Vendi score of all rows)."""
    rng = np.random.default_rng(seed)
    S = X[rng.choice(len(X), min(sample, len(X)), replace=False)].astype(np.float64)
    G = S @ S.T
    upper = G[np.triu_indices(len(S), 1)]
    np.fill_diagonal(G, -np.inf)
    C = X.T.astype(np.float64) @ X / len(X)
    w = np.clip(np.linalg.eigvalsh(C), 0, None)
    w /= w.sum()
    nz = w[w > 0]
    return {"mean_cosine": float(upper.mean()), "p95_cosine": float(np.percentile(upper, 95)),
            "median_nn_cosine_in_sample": float(np.median(G.max(axis=1))),
            "vendi1": float(np.exp(-(nz * np.log(nz)).sum())), "vendi2": float(1 / (w ** 2).sum())}
