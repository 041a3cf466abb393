"""Near-duplicate removal and nearest-neighbour similarity with blocked matrix products.

Neither function materialises the n x n similarity matrix: rows are compared block against
block (``block`` x ``block`` cosine similarities at a time), so memory is O(n d + block²)
whatever n is. At n = 100,000 and the default block of 2,048, a block of similarities is 16 MiB.
The block products run on Python threads with one BLAS thread each (``blas.map_ordered``: at
most one block per thread held at a time), which keeps both cores busy on a quiet machine and
does not collapse when other processes load the cores (see ``blas``).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from trajforge.verifiers.diversity.blas import map_ordered, one_blas_thread
from trajforge.verifiers.diversity.vendi import normalize_rows

DEFAULT_BLOCK = 2048


@dataclass(frozen=True)
class Dedup:
    """``keep``: one flag per row. ``duplicate_of``: for a removed row, the kept row it
    duplicates (the first by priority with similarity >= threshold), else -1. ``similarity``:
    that row's similarity to it (NaN for kept rows)."""

    keep: np.ndarray
    duplicate_of: np.ndarray
    similarity: np.ndarray


def _rows_product(B: np.ndarray, Y: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Similarities of the block ``B`` with the rows ``rows`` of ``Y``."""
    return B @ Y[rows].T


def _slab_product(B: np.ndarray, X: np.ndarray, block: int, start: int) -> np.ndarray:
    """Similarities (float64) of the block ``B`` with the ``block`` rows of ``X`` from ``start``."""
    return (B @ X[start:min(len(X), start + block)].T).astype(np.float64)


def remove_near_duplicates(X: np.ndarray, threshold: float, *,
                           priority: Sequence[int] | np.ndarray | None = None,
                           normalize: bool = True, block: int = DEFAULT_BLOCK) -> Dedup:
    """Greedy near-duplicate removal: rows are visited in ``priority`` order (default: index
    order; put better rows first), and a row is removed when its cosine similarity to a row
    already kept is >= ``threshold``. A removed row never removes another, so a chain
    a ~ b ~ c with a !~ c keeps a and c.

    Blocked: each block of rows is compared with the kept rows of earlier blocks, chunk by
    chunk, then resolved in order within the block (a ``block`` x ``block`` product)."""
    X = np.asarray(X)
    if not np.issubdtype(X.dtype, np.floating):
        X = X.astype(np.float32)
    if normalize:
        X = normalize_rows(X)
    n = X.shape[0]
    order = np.arange(n) if priority is None else np.asarray(priority, dtype=np.int64)
    if sorted(order.tolist()) != list(range(n)):
        raise ValueError("priority must be a permutation of the row indices")
    Y = X[order]  # rows in visiting order
    keep = np.zeros(n, dtype=bool)          # in visiting order
    dup_of = np.full(n, -1, dtype=np.int64)  # in visiting order, pointing to a visiting position
    sim = np.full(n, np.nan, dtype=np.float64)
    kept_positions: list[np.ndarray] = []  # kept visiting positions, one array per earlier block
    for lo in range(0, n, block):
        hi = min(n, lo + block)
        B = Y[lo:hi]
        best = np.full(hi - lo, -np.inf)
        arg = np.full(hi - lo, -1, dtype=np.int64)
        chunks = [positions[clo:clo + block] for positions in kept_positions
                  for clo in range(0, len(positions), block)]  # in priority order
        for chunk, S in zip(chunks, map_ordered(functools.partial(_rows_product, B, Y), chunks), strict=True):
            hit = S >= threshold
            # first kept row (by priority) at or above the threshold, per row of the block
            first = np.where(hit.any(axis=1), hit.argmax(axis=1), -1)
            new = np.flatnonzero((first >= 0) & (arg < 0))
            arg[new] = chunk[first[new]]
            best[new] = S[new, first[new]]
        with one_blas_thread():
            S = B @ B.T
        block_kept: list[int] = []
        for r in range(hi - lo):
            if arg[r] < 0 and block_kept:
                row = S[r, block_kept]
                hits = np.flatnonzero(row >= threshold)
                if hits.size:
                    arg[r] = lo + block_kept[hits[0]]
                    best[r] = row[hits[0]]
            if arg[r] < 0:
                block_kept.append(r)
                keep[lo + r] = True
        dup_of[lo:hi] = arg
        sim[lo:hi] = np.where(arg >= 0, best, np.nan)
        kept_positions.append(np.asarray([lo + r for r in block_kept], dtype=np.int64))
    # back from visiting order to row indices
    out_keep = np.zeros(n, dtype=bool)
    out_dup = np.full(n, -1, dtype=np.int64)
    out_sim = np.full(n, np.nan)
    out_keep[order] = keep
    out_dup[order] = np.where(dup_of >= 0, order[np.maximum(dup_of, 0)], -1)
    out_sim[order] = sim
    return Dedup(keep=out_keep, duplicate_of=out_dup, similarity=out_sim)


def nearest_neighbours(X: np.ndarray, *, normalize: bool = True, block: int = DEFAULT_BLOCK
                       ) -> tuple[np.ndarray, np.ndarray]:
    """For each row, the index of its most similar other row and that cosine similarity.

    Uses symmetry: only blocks on or below the diagonal are computed, each updating the
    maxima of its rows and of its columns, so the cost is n² d / 2."""
    X = np.asarray(X)
    if not np.issubdtype(X.dtype, np.floating):
        X = X.astype(np.float32)
    if normalize:
        X = normalize_rows(X)
    n = X.shape[0]
    best = np.full(n, -np.inf)
    arg = np.full(n, -1, dtype=np.int64)
    for lo in range(0, n, block):
        hi = min(n, lo + block)
        B = X[lo:hi]
        starts = list(range(0, hi, block))
        products = map_ordered(functools.partial(_slab_product, B, X, block), starts)
        for clo, S in zip(starts, products, strict=True):
            chi = min(n, clo + block)
            if clo == lo:
                np.fill_diagonal(S, -np.inf)
            r_arg = S.argmax(axis=1)
            r_val = S[np.arange(hi - lo), r_arg]
            better = r_val > best[lo:hi]
            best[lo:hi] = np.where(better, r_val, best[lo:hi])
            arg[lo:hi] = np.where(better, clo + r_arg, arg[lo:hi])
            if clo != lo:
                c_arg = S.argmax(axis=0)
                c_val = S[c_arg, np.arange(chi - clo)]
                better = c_val > best[clo:chi]
                best[clo:chi] = np.where(better, c_val, best[clo:chi])
                arg[clo:chi] = np.where(better, lo + c_arg, arg[clo:chi])
    best[arg < 0] = np.nan
    return arg, best
