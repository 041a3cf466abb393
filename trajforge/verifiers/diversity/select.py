"""Greedy Vendi-maximising selection, exact and incremental, with a quality-weighted variant and
stratified allocation.

The objective is the order-2 Vendi score of the selected set ``S`` (m items, unit rows):
``VS₂(S) = m² / ‖C_S‖²_F`` with ``C_S = Σ_{s∈S} x_s x_sᵀ``. Adding a candidate ``x`` gives
``‖C_S + x xᵀ‖²_F = ‖C_S‖²_F + 2 a_x + 1`` where ``a_x = Σ_{s∈S} (x·x_s)²``: every candidate's
gain follows from one scalar, and a step changes each ``a_x`` by one squared dot product. Order
2 is used because it is the order whose rank-one update has this closed form; no step
recomputes an eigen-decomposition. The other orders are reported for the result.

Why this is fast at n = 100,000: ``a_x`` only grows as ``S`` grows, so a stale ``a_x`` is a
lower bound: a pool of the most promising candidates is run greedily on its own (small,
cache-resident matrix-vector products), and each pick is certified against the bound of
everything outside the pool (exact, not an approximation). The picks of a round are then
folded into every ``a_x`` with one GEMM (n x d x picks), so the dense per-step update is paid
at matrix-matrix speed rather than as a memory-bound pass over X per step. (OpenBLAS is ~100x
slower on the transposed view of a row gather, hence the explicit contiguous copies; and the
per-step matrix-vector product runs on one BLAS thread: a pool fits in cache, and waking a
second thread costs more than the product, ~10x more when the CPUs are shared.)

``stochastic_greedy_select`` is the sampled variant for when exact greedy is too slow (rows so
alike that few picks can be certified per round): a fixed cost per step, near-greedy value.

Quality-weighted variant (the qVS of Nguyen & Dieng, 2024): maximise
``mean quality(S) · VS₂(S)``; with all qualities equal it is the plain objective.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from threadpoolctl import threadpool_limits

from trajforge.verifiers.diversity.vendi import normalize_rows

Allocation = Literal["proportional", "balanced"]
Method = Literal["exact", "stochastic"]
_FOLD = 256


@dataclass(frozen=True)
class Selection:
    """``order``: selected row indices in the order chosen. ``gains``: the objective's increase
    at each step. ``final_gain``: for every row, the objective's increase if it were added to
    the final selection (its own step's gain for selected rows). ``vendi2``: VS₂ after each
    step."""

    order: np.ndarray
    gains: np.ndarray
    final_gain: np.ndarray
    vendi2: np.ndarray

    @property
    def mask(self) -> np.ndarray:
        m = np.zeros(len(self.final_gain), dtype=bool)
        m[self.order] = True
        return m


def _objective(m: int, frob: float, a: np.ndarray, qsum: float, quality: np.ndarray | None
               ) -> np.ndarray:
    """Objective of S ∪ {x} for candidates with cross terms ``a`` (vectorised)."""
    vs = (m + 1) ** 2 / (frob + 2.0 * a + 1.0)
    if quality is None:
        return vs
    return (qsum + quality) / (m + 1) * vs


def greedy_select(X: np.ndarray, k: int, *, quality: np.ndarray | None = None,
                  normalize: bool = True, pool: int = 2048) -> Selection:
    """Choose ``k`` rows of ``X`` greedily maximising VS₂ (or mean quality x VS₂ when
    ``quality`` is given, values >= 0). Ties go to the lowest index.

    Works in rounds. At the start of a round every ``a_x`` is exact. The ``pool`` candidates
    with the best bounds are copied out and run greedily among themselves (one small
    matrix-vector product per step keeps their ``a_x`` exact); a pick is certified as the
    global greedy choice while its objective beats the best any candidate outside the pool
    could reach (their ``a_x`` can only have grown). When a pick cannot be certified the round
    ends: its picks are folded into every ``a_x`` with one GEMM, and a round that certified
    nothing doubles the pool."""
    X = np.asarray(X)
    if not np.issubdtype(X.dtype, np.floating):
        X = X.astype(np.float64)
    n = X.shape[0]
    if not 0 <= k <= n:
        raise ValueError(f"cannot select {k} of {n} rows")
    if normalize:
        X = normalize_rows(X)
    q = None
    if quality is not None:
        q = np.asarray(quality, dtype=np.float64)
        if q.shape != (n,) or np.any(q < 0) or not np.all(np.isfinite(q)):
            raise ValueError("quality must be one finite value >= 0 per row")
    a_all = np.zeros(n, dtype=np.float64)  # exact a_x at the start of each round
    chosen = np.zeros(n, dtype=bool)
    order: list[int] = []
    gains: list[float] = []
    trace: list[float] = []
    frob = 0.0
    qsum = 0.0
    value = 0.0
    size = max(1, pool)
    while len(order) < k:
        live = np.flatnonzero(~chosen)
        m0 = len(order)
        if len(live) <= size:
            Q, out_a, out_q = live, np.inf, 0.0
        else:
            upper = _objective(m0, frob, a_all[live], qsum, None if q is None else q[live])
            part = np.argpartition(-upper, size)
            Q = np.sort(live[part[:size]])  # index order, so argmax's first hit is the lowest index
            outside = live[part[size:]]
            out_a = float(a_all[outside].min())
            out_q = 0.0 if q is None else float(q[outside].max())
        XQ = X[Q]
        aQ = a_all[Q].copy()
        qQ = None if q is None else q[Q]
        alive = np.ones(len(Q), dtype=bool)
        picked: list[int] = []
        one_thread = threadpool_limits(1, user_api="blas")  # see the module note on threads
        while len(order) < k:
            m = len(order)
            v = _objective(m, frob, aQ, qsum, qQ)
            v[~alive] = -np.inf
            j = int(np.argmax(v))
            best = float(v[j])
            if np.isfinite(out_a):
                # the best an outside candidate could do: smallest a, largest quality
                reach = float(_objective(m, frob, np.array([out_a]), qsum,
                                         None if q is None else np.array([out_q]))[0])
                if not best > reach:  # strict: an equal value outside could have a lower index
                    break
            pick = int(Q[j])
            alive[j] = False
            chosen[pick] = True
            order.append(pick)
            picked.append(pick)
            gains.append(best - value)
            value = best
            frob += 2.0 * float(aQ[j]) + 1.0
            trace.append((m + 1) ** 2 / frob)
            if q is not None:
                qsum += float(q[pick])
            g = XQ @ X[pick]
            aQ += g.astype(np.float64) ** 2
        one_thread.restore_original_limits()
        if picked:
            for lo in range(0, len(picked), _FOLD):  # n x _FOLD at a time: bounded memory
                G = X @ np.ascontiguousarray(X[picked[lo:lo + _FOLD]].T)
                G *= G
                a_all += G.sum(axis=1, dtype=np.float64)
        if len(picked) <= size // 16:  # the bound outside the pool is too close: widen it
            size = min(2 * size, n)
    final_gain = _objective(k, frob, a_all, qsum, q) - value
    final_gain[order] = gains
    return Selection(order=np.asarray(order, dtype=np.int64), gains=np.asarray(gains),
                     final_gain=final_gain, vendi2=np.asarray(trace))


def stochastic_greedy_select(X: np.ndarray, k: int, *, quality: np.ndarray | None = None,
                             normalize: bool = True, epsilon: float = 0.01,
                             sample: int | None = None, rng: np.random.Generator | None = None
                             ) -> Selection:
    """Stochastic greedy (Mirzasoleiman et al., 2015) on the same objective: each step
    evaluates a random sample of ``(n/k)·ln(1/epsilon)`` remaining candidates exactly
    (``a_x = xᵀ C_S x`` against the maintained d x d ``C_S``, a rank-one update per step) and
    takes the best. O(k · sample · d²) in all, independent of how alike the candidates are;
    with ``sample >= n`` it is exactly ``greedy_select``. ``rng`` defaults to seed 0."""
    X = np.asarray(X)
    if not np.issubdtype(X.dtype, np.floating):
        X = X.astype(np.float64)
    n, d = X.shape
    if not 0 <= k <= n:
        raise ValueError(f"cannot select {k} of {n} rows")
    if normalize:
        X = normalize_rows(X)
    q = None if quality is None else np.asarray(quality, dtype=np.float64)
    if q is not None and (q.shape != (n,) or np.any(q < 0) or not np.all(np.isfinite(q))):
        raise ValueError("quality must be one finite value >= 0 per row")
    rng = rng if rng is not None else np.random.default_rng(0)
    size = sample if sample is not None else max(1, math.ceil(n / max(k, 1) * math.log(1 / epsilon)))
    C = np.zeros((d, d), dtype=np.float64)
    remaining = np.arange(n)  # remaining[:left] are the unchosen rows
    left = n
    order: list[int] = []
    gains: list[float] = []
    trace: list[float] = []
    frob = qsum = value = 0.0
    one_thread = threadpool_limits(1, user_api="blas")  # small products: see the module note
    for m in range(k):
        if size >= left:
            pos = np.arange(left)
        else:
            pos = np.unique(rng.integers(0, left, size=size))
        cand = remaining[pos]
        rows = X[cand]
        a = ((rows @ C.astype(X.dtype)) * rows).sum(axis=1, dtype=np.float64)
        v = _objective(m, frob, a, qsum, None if q is None else q[cand])
        best = float(v.max())
        at = np.flatnonzero(v == best)
        j = at[np.argmin(cand[at])]
        pick = int(cand[j])
        order.append(pick)
        gains.append(best - value)
        value = best
        frob += 2.0 * float(a[j]) + 1.0
        trace.append((m + 1) ** 2 / frob)
        if q is not None:
            qsum += float(q[pick])
        x = X[pick].astype(np.float64)
        C += np.outer(x, x)
        left -= 1
        remaining[pos[j]] = remaining[left]
        remaining[left] = pick
    one_thread.restore_original_limits()
    a_all = np.empty(n, dtype=np.float64)
    Cx = C.astype(X.dtype)
    for lo in range(0, n, 16_384):
        B = X[lo:lo + 16_384]
        a_all[lo:lo + len(B)] = ((B @ Cx) * B).sum(axis=1, dtype=np.float64)
    final_gain = _objective(k, frob, a_all, qsum, q) - value
    final_gain[order] = gains
    return Selection(order=np.asarray(order, dtype=np.int64), gains=np.asarray(gains),
                     final_gain=final_gain, vendi2=np.asarray(trace))


def vendi2_of_set(X: np.ndarray, normalize: bool = True) -> float:
    """VS₂ of the rows of X through the d x d covariance (the objective's value)."""
    X = normalize_rows(np.asarray(X, dtype=np.float64)) if normalize else np.asarray(X, np.float64)
    C = X.T @ X
    return X.shape[0] ** 2 / float((C * C).sum())


def leave_one_out_vendi2(X: np.ndarray, normalize: bool = True, batch_size: int = 65_536
                         ) -> tuple[float, np.ndarray]:
    """VS₂ of all rows, and for each row how much VS₂ drops without it (its marginal
    contribution): ``n²/F - (n-1)²/(F - 2 xᵀCx + 1)``, one O(n d²) pass."""
    X = np.asarray(X)
    if normalize:
        X = normalize_rows(X)
    n = X.shape[0]
    C = np.zeros((X.shape[1], X.shape[1]))
    for lo in range(0, n, batch_size):
        B = X[lo:lo + batch_size]
        C += B.T @ B
    frob = float((C * C).sum())
    Cx = C.astype(X.dtype)
    a = np.empty(n, dtype=np.float64)
    for lo in range(0, n, batch_size):
        B = X[lo:lo + batch_size]
        a[lo:lo + len(B)] = ((B @ Cx) * B).sum(axis=1)
    full = n ** 2 / frob
    if n == 1:
        return full, np.array([full])
    without = (n - 1) ** 2 / np.maximum(frob - 2.0 * a + 1.0, 1e-12)
    return full, full - without


def allocate(sizes: dict[Hashable, int], k: int, how: Allocation = "proportional"
             ) -> dict[Hashable, int]:
    """Split ``k`` over strata. ``proportional``: by stratum size, largest remainders first;
    ``balanced``: as equal as the sizes allow. Never more than a stratum holds; a stratum's
    unused share goes to the others. Deterministic (ties by sorted key)."""
    total = sum(sizes.values())
    if not 0 <= k <= total:
        raise ValueError(f"cannot select {k} of {total} items")
    keys = sorted(sizes, key=str)
    quota = dict.fromkeys(keys, 0)
    remaining = k
    while remaining > 0:
        open_keys = [s for s in keys if quota[s] < sizes[s]]
        if how == "balanced":
            weights = {s: 1.0 for s in open_keys}
        else:
            weights = {s: float(sizes[s] - quota[s]) for s in open_keys}
        wsum = sum(weights.values())
        raw = {s: remaining * weights[s] / wsum for s in open_keys}
        give = {s: min(int(math.floor(raw[s])), sizes[s] - quota[s]) for s in open_keys}
        left = remaining - sum(give.values())
        for s in sorted(open_keys, key=lambda s: (-(raw[s] - give[s]), str(s))):
            if left == 0:
                break
            if quota[s] + give[s] < sizes[s]:
                give[s] += 1
                left -= 1
        if not any(give.values()):
            break
        for s, g in give.items():
            quota[s] += g
        remaining = k - sum(quota.values())
    return quota


def stratified_select(X: np.ndarray, k: int, strata: Sequence[Hashable], *,
                      quality: np.ndarray | None = None, how: Allocation = "proportional",
                      normalize: bool = True, method: Method = "exact",
                      rng: np.random.Generator | None = None
                      ) -> tuple[np.ndarray, np.ndarray, dict[Hashable, int]]:
    """Greedy selection inside each stratum with ``allocate``'s quotas. Returns the selected
    row indices (stratum by stratum, each in greedy order), each row's gain (as in
    ``Selection.final_gain``, within its stratum) and the quotas."""
    strata = list(strata)
    if len(strata) != len(X):
        raise ValueError("one stratum label per row")
    groups: dict[Hashable, list[int]] = {}
    for i, s in enumerate(strata):
        groups.setdefault(s, []).append(i)
    quota = allocate({s: len(v) for s, v in groups.items()}, k, how)
    order: list[int] = []
    gain = np.zeros(len(X), dtype=np.float64)
    for s in sorted(groups, key=str):
        idx = np.asarray(groups[s])
        qs = None if quality is None else quality[idx]
        sel = (greedy_select(X[idx], quota[s], quality=qs, normalize=normalize) if method == "exact"
               else stochastic_greedy_select(X[idx], quota[s], quality=qs, normalize=normalize,
                                             rng=rng))
        order.extend(idx[sel.order].tolist())
        gain[idx] = sel.final_gain
    return np.asarray(order, dtype=np.int64), gain, quota
