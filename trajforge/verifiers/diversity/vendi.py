"""The Vendi score (Friedman & Dieng, 2023): the exponential of the order-q Rényi entropy of the
eigenvalues of a similarity kernel normalised by the number of items (or by item weights).

Two forms with the same non-zero spectrum:

- the **kernel** form: eigenvalues of ``K/n`` with ``K = X Xᵀ`` (n x n), for small n or a
  kernel that has no explicit feature map;
- the **dual** (covariance) form: eigenvalues of ``Xᵀ diag(p) X`` (d x d). For the cosine kernel
  on embeddings this is exact, costs O(n d²) and O(d²) memory, and accumulates over batches, so
  a million rows stream through in a few seconds with memory bounded by the batch size.

With weights ``p`` (non-negative, normalised to sum 1) the kernel is ``diag(√p) K diag(√p)``,
as in the reference implementation (``vendi_score.vendi.score_K(K, p=p)``).

Orders: ``q = 1`` is the Shannon case (the paper's default); ``q = 0.5`` weighs rare modes up,
``q = 2`` is the inverse participation ratio ``1 / Σλ²``, ``q = inf`` is ``1 / λ_max``.
Eigenvalues below a rank tolerance (``max(λ) · size · eps``) are rounding noise and count as zero,
so identical items give exactly 1 for every order.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from trajforge.verifiers.diversity.blas import map_blocks, usable_cpus

Order = float  # any q > 0, ``math.inf`` included
ORDERS: tuple[Order, ...] = (0.5, 1.0, 2.0, math.inf)
DEFAULT_BATCH = 65_536


def parse_order(q: float | str) -> Order:
    """``0.5``, ``1``, ``"2"``, ``"inf"`` -> float; rejects q <= 0."""
    value = math.inf if isinstance(q, str) and q.strip().lower() in ("inf", "infinity") else float(q)
    if not value > 0:
        raise ValueError(f"Vendi order q must be > 0, got {q!r}")
    return value


def normalize_rows(X: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm (cosine kernel), as a new array. An all-zero row has no
    direction: error. (The squared norms come from one ``einsum`` pass, without the n x d
    temporary of ``np.linalg.norm``.)"""
    if not np.issubdtype(X.dtype, np.floating):
        X = X.astype(np.float64)
    norms = np.sqrt(np.einsum("ij,ij->i", X, X))[:, None]
    if np.any(norms == 0):
        raise ValueError(f"{int((norms == 0).sum())} row(s) are all zero and have no direction")
    return X / norms


def _clean_spectrum(w: np.ndarray, size: int) -> np.ndarray:
    w = np.asarray(w, dtype=np.float64)
    top = float(w.max()) if w.size else 0.0
    if top <= 0:
        raise ValueError("the kernel has no positive eigenvalue")
    w = np.where(w > top * max(size, 1) * np.finfo(np.float64).eps, w, 0.0)
    return w / w.sum()  # exact trace 1 (rounding in the accumulation leaves ~1e-16)


def entropy(w: np.ndarray, q: Order) -> float:
    """Order-q Rényi entropy of a probability vector (zeros ignored)."""
    p = w[w > 0]
    if q == 1:
        return float(-(p * np.log(p)).sum())
    if math.isinf(q):
        return float(-np.log(p.max()))
    return float(np.log((p ** q).sum()) / (1 - q))


def score_from_eigenvalues(w: np.ndarray, q: Order = 1.0, size: int | None = None) -> float:
    """Vendi score from the eigenvalues of a trace-normalised kernel or covariance."""
    w = np.asarray(w, dtype=np.float64)
    return math.exp(entropy(_clean_spectrum(w, size or len(w)), parse_order(q)))


def _weights(p: np.ndarray | Sequence[float] | None, n: int) -> np.ndarray | None:
    if p is None:
        return None
    p = np.asarray(p, dtype=np.float64)
    if p.shape != (n,):
        raise ValueError(f"weights have shape {p.shape}, expected ({n},)")
    if np.any(p < 0) or not np.all(np.isfinite(p)) or p.sum() <= 0:
        raise ValueError("weights must be finite, non-negative and not all zero")
    return p / p.sum()


def kernel_score(K: np.ndarray, q: Order = 1.0, weights: np.ndarray | None = None) -> float:
    """Vendi score of an n x n positive semi-definite similarity matrix with unit diagonal."""
    K = np.asarray(K, dtype=np.float64)
    n = K.shape[0]
    p = _weights(weights, n)
    if p is None:
        Kp = K / n
    else:
        s = np.sqrt(p)
        Kp = K * np.outer(s, s)
    return score_from_eigenvalues(np.linalg.eigvalsh(Kp), q, n)


@dataclass
class CovarianceAccumulator:
    """Streams ``Σ p_i x_i x_iᵀ`` (d x d, float64) over batches of rows.

    Each batch is multiplied in its own dtype (float32 embeddings use the fast float32 product,
    ``Xᵀ X`` as a symmetric rank-k update) and added to a float64 total, so precision loss is
    bounded by one batch; a batch is split over the CPUs, one BLAS thread each. Memory: d²
    floats plus one batch (and its normalised copy).
    """

    dim: int
    normalize: bool = True
    matrix: np.ndarray = field(init=False)
    total_weight: float = field(init=False, default=0.0)
    count: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        self.matrix = np.zeros((self.dim, self.dim), dtype=np.float64)

    def add(self, X: np.ndarray, weights: np.ndarray | Sequence[float] | None = None) -> None:
        X = np.asarray(X)
        if X.ndim != 2 or X.shape[1] != self.dim:
            raise ValueError(f"batch has shape {X.shape}, expected (rows, {self.dim})")
        if not np.issubdtype(X.dtype, np.floating):
            X = X.astype(np.float64)
        w = None
        if weights is not None:
            w = np.asarray(weights, dtype=np.float64)
            if w.shape != (X.shape[0],) or np.any(w < 0) or not np.all(np.isfinite(w)):
                raise ValueError("weights must be finite, non-negative, one per row")

        def part(lo: int, hi: int) -> np.ndarray:
            B = normalize_rows(X[lo:hi]) if self.normalize else X[lo:hi]
            return B.T @ B if w is None else B.T @ (B * w[lo:hi].astype(B.dtype)[:, None])

        # one block per CPU, one BLAS thread each (see ``blas``)
        for product in map_blocks(part, len(X), max(4096, -(-len(X) // usable_cpus()))):
            self.matrix += product
        self.total_weight += X.shape[0] if w is None else float(w.sum())
        self.count += X.shape[0]

    def eigenvalues(self) -> np.ndarray:
        if self.total_weight <= 0:
            raise ValueError("no rows (or only zero weights) were added")
        return np.linalg.eigvalsh(self.matrix / self.total_weight)

    def score(self, q: Order = 1.0) -> float:
        return score_from_eigenvalues(self.eigenvalues(), q, max(self.count, self.dim))

    def scores(self, orders: Iterable[Order] = ORDERS) -> dict[Order, float]:
        w = self.eigenvalues()
        size = max(self.count, self.dim)
        return {q: score_from_eigenvalues(w, q, size) for q in orders}


def dual_score(X: np.ndarray, q: Order = 1.0, weights: np.ndarray | None = None, *,
               normalize: bool = True, batch_size: int = DEFAULT_BATCH) -> float:
    """Vendi score through the d x d covariance, in batches of ``batch_size`` rows."""
    X = np.asarray(X)
    acc = CovarianceAccumulator(X.shape[1], normalize=normalize)
    p = _weights(weights, X.shape[0])
    for lo in range(0, X.shape[0], batch_size):
        acc.add(X[lo:lo + batch_size], None if p is None else p[lo:lo + batch_size])
    return acc.score(q)


def stream_score(batches: Iterable[np.ndarray | tuple[np.ndarray, np.ndarray]],
                 q: Order | Iterable[Order] = 1.0, *, normalize: bool = True
                 ) -> float | dict[Order, float]:
    """Vendi score of rows arriving in batches (arrays, or ``(rows, weights)`` pairs); memory is
    one batch plus d². Pass several orders to get ``{q: score}`` from one pass."""
    acc: CovarianceAccumulator | None = None
    for batch in batches:
        X, w = batch if isinstance(batch, tuple) else (batch, None)
        if acc is None:
            acc = CovarianceAccumulator(np.asarray(X).shape[1], normalize=normalize)
        acc.add(X, w)
    if acc is None:
        raise ValueError("no batches")
    if isinstance(q, (int, float, str)):
        return acc.score(parse_order(q))
    return acc.scores([parse_order(o) for o in q])


def vendi_score(X: np.ndarray, q: Order = 1.0, weights: np.ndarray | None = None, *,
                normalize: bool = True, form: str = "auto",
                batch_size: int = DEFAULT_BATCH) -> float:
    """Vendi score of the rows of ``X`` under the cosine kernel (``normalize=True``) or the
    linear kernel. ``form``: ``"kernel"`` (n x n), ``"dual"`` (d x d) or ``"auto"`` (the
    smaller matrix)."""
    X = np.asarray(X)
    if X.ndim != 2 or X.shape[0] == 0:
        raise ValueError(f"expected a non-empty (n, d) array, got shape {X.shape}")
    q = parse_order(q)
    n, d = X.shape
    if form == "auto":
        form = "kernel" if n <= d else "dual"
    if form == "dual":
        return dual_score(X, q, weights, normalize=normalize, batch_size=batch_size)
    if form != "kernel":
        raise ValueError(f"form must be 'auto', 'kernel' or 'dual', got {form!r}")
    Y = normalize_rows(X.astype(np.float64)) if normalize else X.astype(np.float64)
    return kernel_score(Y @ Y.T, q, weights)


def vendi_scores(X: np.ndarray, orders: Iterable[Order] = ORDERS, weights: np.ndarray | None = None,
                 *, normalize: bool = True) -> dict[Order, float]:
    """Vendi scores of several orders from one eigen-decomposition of the smaller of the
    kernel (n x n) and the covariance (d x d)."""
    X = np.asarray(X)
    n, d = X.shape
    orders = [parse_order(q) for q in orders]
    if n <= d:
        Y = normalize_rows(X.astype(np.float64)) if normalize else X.astype(np.float64)
        p = _weights(weights, n)
        K = Y @ Y.T
        Kp = K / n if p is None else K * np.outer(np.sqrt(p), np.sqrt(p))
        w = np.linalg.eigvalsh(Kp)
        return {q: score_from_eigenvalues(w, q, n) for q in orders}
    acc = CovarianceAccumulator(d, normalize=normalize)
    acc.add(X, _weights(weights, n))
    return acc.scores(orders)
