"""Synthetic sentence-embedding-like data for the diversity benchmarks.

Real sentence embeddings are anisotropic (a decaying spectrum: a few directions carry most of
the variance) and clustered (topics of very unequal size). ``synthetic_embeddings`` mimics both:
cluster centres and within-cluster offsets are Gaussian with per-dimension scales ``i^-0.7``,
cluster sizes are Zipf-distributed, and rows are unit-normalised (cosine geometry).
``isotropic`` draws plain N(0, I) rows: the worst case for lazy greedy selection, because every
candidate then looks alike.
"""

from __future__ import annotations

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
