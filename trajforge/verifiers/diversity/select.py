"""Greedy Vendi-maximising selection, exact and incremental, with a quality-weighted variant and
stratified allocation.

The objective is the order-2 Vendi score of the selected set ``S`` (m items, unit rows):
``VS₂(S) = m² / ‖C_S‖²_F`` with ``C_S = Σ_{s∈S} x_s x_sᵀ``. Adding a candidate ``x`` gives
``‖C_S + x xᵀ‖²_F = ‖C_S‖²_F + 2 a_x + 1`` where ``a_x = Σ_{s∈S} (x·x_s)²``: every candidate's
gain follows from one scalar, and a step changes each ``a_x`` by one squared dot product. Order
2 is used because it is the order whose rank-one update has this closed form; no step
recomputes an eigen-decomposition. The other orders are reported for the result.

Why exact greedy is fast at n = 100,000: ``a_x`` only grows as ``S`` grows, so a value
computed earlier is a lower bound. Work goes in rounds. The rows are ranked by the objective
their bounds allow, and the best ``pool`` of them are run greedily on their own: one
cache-resident matrix-vector product per step keeps the pool's ``a_x`` exact, and a pick is
certified as the global greedy choice while it beats the best any row outside the pool could
reach. When it does not, the next-ranked rows join the pool (the round's picks folded into
them), so a round does not end on the first doubt. A round ends after about n rows' worth of
pool steps or ``fold`` picks; its picks are then folded into every ``a_x`` with row-blocked
float32 GEMMs. Those folds are the bulk of the work (n·k·d multiply-adds in all, at
matrix-matrix speed, not a memory-bound pass over X per step); the pool work is small. The
result is exactly the textbook O(n k d) loop's, ties included (the tests compare them).
Products run with one BLAS thread per call, spread over Python threads (see ``blas``); OpenBLAS
is also ~100x slower on the transposed view of a row gather, hence the contiguous copies.

``stochastic_greedy_select`` is the sampled variant: a fixed cost per step (4.6·n·d² in all
against exact's n·k·d, so cheaper once k is above ~1,800), near-greedy value;
``select(method="auto")`` uses it above ``AUTO_EXACT_LIMIT`` rows x picks.

Quality-weighted variant (the qVS of Nguyen & Dieng, 2024): maximise
``mean quality(S) · VS₂(S)``; with all qualities equal it is the plain objective.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Literal, overload

import numpy as np

from trajforge.verifiers.diversity.blas import map_blocks, one_blas_thread, usable_cpus
from trajforge.verifiers.diversity.vendi import CovarianceAccumulator, normalize_rows

Allocation = Literal["proportional", "balanced"]
Method = Literal["exact", "stochastic", "auto"]
# rows x picks up to which ``auto`` runs exact greedy: its folds cost n·k·d; 100,000 x 10,000 took
# 8-11 s (14-17 CPU-seconds) here (benchmarks/results/diversity_select.md): about a minute at 4e9
AUTO_EXACT_LIMIT = 4 * 10 ** 9
_BLOCK_ELEMENTS = 1 << 23  # a fold block: rows x picks products, 32 MiB in float32


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


@overload
def _objective(m: int, frob: float, a: float, qsum: float, quality: float | None) -> float: ...
@overload
def _objective(m: int, frob: float, a: np.ndarray, qsum: float, quality: np.ndarray | None) -> np.ndarray: ...
def _objective(m: int, frob: float, a: np.ndarray | float, qsum: float, quality: np.ndarray | float | None
               ) -> np.ndarray | float:
    """Objective of S ∪ {x} for candidates with cross terms ``a`` (vectorised)."""
    vs = (m + 1) ** 2 / (frob + 2.0 * a + 1.0)
    if quality is None:
        return vs
    return (qsum + quality) / (m + 1) * vs


def _prepare(X: np.ndarray, k: int, quality: np.ndarray | None, normalize: bool
             ) -> tuple[np.ndarray, np.ndarray | None]:
    X = np.asarray(X)
    if not np.issubdtype(X.dtype, np.floating):
        X = X.astype(np.float64)
    n = X.shape[0]
    if not 0 <= k <= n:
        raise ValueError(f"cannot select {k} of {n} rows")
    if normalize:
        X = normalize_rows(X)
    if quality is None:
        return X, None
    q = np.asarray(quality, dtype=np.float64)
    if q.shape != (n,) or np.any(q < 0) or not np.all(np.isfinite(q)):
        raise ValueError("quality must be one finite value >= 0 per row")
    return X, q


def _fold(X: np.ndarray, picks: list[int], a: np.ndarray, rows: np.ndarray | None = None,
          threads: int | None = None) -> None:
    """``a[i] += Σ_p (x_i·x_p)²`` over ``picks``, for ``rows`` (default all), as row-blocked GEMMs
    in X's dtype (float32 embeddings use the float32 GEMM), blocks spread over ``threads``
    (default: the CPUs; see ``blas``)."""
    if not picks:
        return
    P = np.ascontiguousarray(X[picks].T)
    n = len(a) if rows is None else len(rows)

    def block(lo: int, hi: int) -> None:
        G = (X[lo:hi] if rows is None else X[rows[lo:hi]]) @ P
        a[lo:hi] += np.einsum("ij,ij->i", G, G)

    size = min(max(1, _BLOCK_ELEMENTS // len(picks)), -(-n // usable_cpus()))
    size = max(size, (1 << 18) // len(picks))  # a small fold is not worth a thread
    map_blocks(block, n, size, threads)


class _Pool:
    """The candidates whose ``a`` is kept exact, in contiguous buffers (rows, ``a``, index,
    quality); removal swaps the last entry in."""

    def __init__(self, d: int, dtype: np.dtype, capacity: int) -> None:
        self.rows = np.empty((capacity, d), dtype=dtype)
        self.a = np.empty(capacity)
        self.idx = np.empty(capacity, dtype=np.int64)
        self.q = np.empty(capacity)
        self.size = 0

    def add(self, rows: np.ndarray, a: np.ndarray, idx: np.ndarray, q: np.ndarray) -> None:
        end = self.size + len(idx)
        if end > len(self.idx):
            grow = max(end, 2 * len(self.idx))
            for name in ("rows", "a", "idx", "q"):
                old = getattr(self, name)
                new = np.empty((grow, *old.shape[1:]), dtype=old.dtype)
                new[:self.size] = old[:self.size]
                setattr(self, name, new)
        self.rows[self.size:end] = rows
        self.a[self.size:end] = a
        self.idx[self.size:end] = idx
        self.q[self.size:end] = q
        self.size = end

    def remove(self, j: int) -> None:
        last = self.size - 1
        if j != last:
            self.rows[j] = self.rows[last]
            self.a[j] = self.a[last]
            self.idx[j] = self.idx[last]
            self.q[j] = self.q[last]
        self.size = last


class _Outside:
    """A round's rows outside the pool, ranked by their key at the round's start, and what
    bounds their objective (best key, least bound, most quality among them). ``pull`` moves the
    best-ranked into the round's pool, folding the round's picks into them."""

    def __init__(self, X: np.ndarray, bound: np.ndarray, qv: np.ndarray, q: np.ndarray | None,
                 frob0: float, qsum0: float, pool: _Pool, picked: list[int], rest: np.ndarray) -> None:
        self.X, self.bound, self.qv, self.q = X, bound, qv, q
        self.frob0, self.qsum0 = frob0, qsum0
        self.pool, self.picked = pool, picked
        self.rest = rest
        self.rest_key = (qsum0 + qv[rest]) / (frob0 + 1.0 + 2.0 * bound[rest])
        self.limits = (-math.inf, math.inf, 0.0)

    def pull(self, count: int) -> None:
        rest, rest_key, bound, qv = self.rest, self.rest_key, self.bound, self.qv
        if count < len(rest):
            part = np.argpartition(-rest_key, count)
            take, self.rest, self.rest_key = rest[part[:count]], rest[part[count:]], rest_key[part[count:]]
            self.limits = (float(self.rest_key.max()), float(bound[self.rest].min()), float(qv[self.rest].max()))
        else:
            take, self.rest, self.limits = rest, rest[:0], (-math.inf, math.inf, 0.0)
        a = bound[take]
        _fold(self.X, self.picked, a, take, threads=1)
        self.pool.add(self.X[take], a, take, qv[take])

    def reach(self, m: int, frob: float, qsum: float) -> float:
        """The best objective any row outside the pool could have now."""
        top, amin, qmax = self.limits
        if not len(self.rest):
            return -math.inf
        q = self.q
        best = float(_objective(m, frob, amin, qsum, None if q is None else qmax))
        if q is None:
            return best
        # each row there had key <= top at the round's start; since then the numerator
        # grew by qsum - qsum0 and the denominator by at least frob - frob0
        lo = self.frob0 + 1.0 + 2.0 * amin
        keyed = max(top, (top * lo + qsum - self.qsum0) / (lo + frob - self.frob0)) * (m + 1)
        return min(best, keyed * (1 + 1e-12))  # margin: a bound must not round low


def greedy_select(X: np.ndarray, k: int, *, quality: np.ndarray | None = None,
                  normalize: bool = True, pool: int = 1024, round_rows: int | None = None,
                  fold: int = 128) -> Selection:
    """Choose ``k`` rows of ``X`` greedily maximising VS₂ (or mean quality x VS₂ when
    ``quality`` is given, values >= 0). Ties go to the lowest index.

    At the start of a round every ``a_x`` is exact (it only grows afterwards, so it is a lower
    bound). The round ranks the live rows by the objective those values allow and moves the best
    ``pool`` into a pool; one matrix-vector product per step keeps the pool's ``a_x`` exact. The
    pool's best is the global greedy choice once it beats the best any row outside could reach;
    until it does, the next-ranked rows join the pool (the round's picks folded into them). A
    round ends after ``fold`` picks or once its steps have touched ``round_rows`` pool rows
    (default n); its picks are then folded into every ``a_x``. ``pool``, ``round_rows`` and
    ``fold`` change the speed, never the result."""
    X, q = _prepare(X, k, quality, normalize)
    n, d = X.shape
    qv = np.ones(n) if q is None else q
    bound = np.zeros(n, dtype=np.float64)  # a_x: exact at the start of each round
    chosen = np.zeros(n, dtype=bool)
    order: list[int] = []
    gains: list[float] = []
    trace: list[float] = []
    frob = qsum = value = 0.0
    pool, round_rows = max(1, pool), max(1, n if round_rows is None else round_rows)
    while len(order) < k:
        P = _Pool(d, X.dtype, max(2 * pool, 4096))
        picked: list[int] = []
        outside = _Outside(X, bound, qv, q, frob, qsum, P, picked, np.flatnonzero(~chosen))
        outside.pull(pool)
        work = 0
        with one_blas_thread():  # see the module note on threads
            while len(order) < k and work < round_rows and len(picked) < fold:
                m = len(order)
                while True:
                    if P.size:
                        v = _objective(m, frob, P.a[:P.size], qsum, None if q is None else P.q[:P.size])
                        j = int(np.argmax(v))
                        best = float(v[j])
                        if best > outside.reach(m, frob, qsum):
                            break
                    outside.pull(max(pool, P.size))
                ties = np.flatnonzero(v == best)
                if len(ties) > 1:
                    j = int(ties[np.argmin(P.idx[ties])])
                pick = int(P.idx[j])
                frob += 2.0 * float(P.a[j]) + 1.0
                order.append(pick)
                picked.append(pick)
                gains.append(best - value)
                value = best
                trace.append((m + 1) ** 2 / frob)
                if q is not None:
                    qsum += float(q[pick])
                chosen[pick] = True
                P.remove(j)
                g = P.rows[:P.size] @ X[pick]
                P.a[:P.size] += g.astype(np.float64) ** 2
                work += P.size
        _fold(X, picked, bound)
    final_gain = _objective(k, frob, bound, qsum, q) - value
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
    X, q = _prepare(X, k, quality, normalize)
    n, d = X.shape
    rng = rng if rng is not None else np.random.default_rng(0)
    size = sample if sample is not None else max(1, math.ceil(n / max(k, 1) * math.log(1 / epsilon)))
    C = np.zeros((d, d), dtype=np.float64)
    remaining = np.arange(n)  # remaining[:left] are the unchosen rows
    left = n
    order: list[int] = []
    gains: list[float] = []
    trace: list[float] = []
    frob = qsum = value = 0.0
    with one_blas_thread():  # small products: see the module note
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
    a_all = np.empty(n, dtype=np.float64)
    Cx = C.astype(X.dtype)

    def block(lo: int, hi: int) -> None:
        a_all[lo:hi] = np.einsum("ij,ij->i", X[lo:hi] @ Cx, X[lo:hi])

    map_blocks(block, n, 16_384)
    final_gain = _objective(k, frob, a_all, qsum, q) - value
    final_gain[order] = gains
    return Selection(order=np.asarray(order, dtype=np.int64), gains=np.asarray(gains),
                     final_gain=final_gain, vendi2=np.asarray(trace))


def select(X: np.ndarray, k: int, *, method: Method = "exact", quality: np.ndarray | None = None,
           normalize: bool = True, rng: np.random.Generator | None = None) -> Selection:
    """``greedy_select`` (``exact``), ``stochastic_greedy_select`` (``stochastic``, with ``rng``)
    or, for ``auto``, exact greedy up to ``AUTO_EXACT_LIMIT`` (rows x picks) and stochastic
    greedy above it."""
    if method == "auto":
        method = "exact" if len(X) * k <= AUTO_EXACT_LIMIT else "stochastic"
    if method == "exact":
        return greedy_select(X, k, quality=quality, normalize=normalize)
    if method == "stochastic":
        return stochastic_greedy_select(X, k, quality=quality, normalize=normalize, rng=rng)
    raise ValueError(f"method must be 'exact', 'stochastic' or 'auto', got {method!r}")


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
    acc = CovarianceAccumulator(X.shape[1], normalize=False)
    for lo in range(0, n, batch_size):
        acc.add(X[lo:lo + batch_size])
    C = acc.matrix
    frob = float((C * C).sum())
    Cx = C.astype(X.dtype)
    a = np.empty(n, dtype=np.float64)

    def block(lo: int, hi: int) -> None:
        a[lo:hi] = np.einsum("ij,ij->i", X[lo:hi] @ Cx, X[lo:hi])

    map_blocks(block, n, 16_384)
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
            weights = dict.fromkeys(open_keys, 1.0)
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
        sel = select(X[idx], quota[s], method=method, quality=qs, normalize=normalize, rng=rng)
        order.extend(idx[sel.order].tolist())
        gain[idx] = sel.final_gain
    return np.asarray(order, dtype=np.int64), gain, quota
