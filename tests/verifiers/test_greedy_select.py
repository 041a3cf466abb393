"""Greedy selection against brute force: each step picks the candidate a full recomputation of
the order-2 Vendi score (from eigenvalues) says is best, gains and the trace are exact, and the
lazy bookkeeping (refresh interval, shortlist width) never changes the result."""

from __future__ import annotations

import numpy as np
import pytest

from trajforge.verifiers.diversity.select import (
    allocate,
    greedy_select,
    leave_one_out_vendi2,
    stochastic_greedy_select,
    stratified_select,
)
from trajforge.verifiers.diversity.vendi import vendi_score


def clustered(n: int, d: int, clusters: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(clusters, d)) * 3
    return centres[rng.integers(0, clusters, size=n)] + rng.normal(size=(n, d))


def brute_force(X: np.ndarray, k: int, quality: np.ndarray | None = None) -> tuple[list[int], list[float]]:
    """Recompute the objective from scratch (eigenvalues) for every candidate at every step."""
    chosen: list[int] = []
    gains: list[float] = []
    value = 0.0
    for _ in range(k):
        best, best_i = -np.inf, -1
        for i in range(len(X)):
            if i in chosen:
                continue
            S = chosen + [i]
            v = vendi_score(X[S], 2.0, form="kernel")
            if quality is not None:
                v *= float(np.mean(quality[S]))
            if v > best + 1e-12:
                best, best_i = v, i
        chosen.append(best_i)
        gains.append(best - value)
        value = best
    return chosen, gains


def test_steps_match_brute_force() -> None:
    X = clustered(60, 8, 5, seed=0)
    sel = greedy_select(X, 15)
    order, gains = brute_force(X, 15)
    assert sel.order.tolist() == order
    np.testing.assert_allclose(sel.gains, gains, rtol=1e-9, atol=1e-12)
    for m in range(1, 16):
        assert sel.vendi2[m - 1] == pytest.approx(vendi_score(X[sel.order[:m]], 2.0), rel=1e-9)


def test_quality_weighted_steps_match_brute_force() -> None:
    X = clustered(50, 6, 4, seed=1)
    quality = np.random.default_rng(1).uniform(0.2, 1.0, size=50)
    sel = greedy_select(X, 12, quality=quality)
    order, gains = brute_force(X, 12, quality)
    assert sel.order.tolist() == order
    np.testing.assert_allclose(sel.gains, gains, rtol=1e-9, atol=1e-12)


def test_final_gain_of_unselected_rows_is_exact() -> None:
    X = clustered(40, 5, 3, seed=2)
    sel = greedy_select(X, 8)
    base = vendi_score(X[sel.order], 2.0)
    for i in range(40):
        if i in sel.order:
            continue
        added = vendi_score(X[list(sel.order) + [i]], 2.0)
        assert sel.final_gain[i] == pytest.approx(added - base, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("pool", [1, 3, 1000])
def test_lazy_bookkeeping_does_not_change_the_result(pool: int) -> None:
    X = clustered(500, 16, 12, seed=3)
    reference = greedy_select(X, 60)
    other = greedy_select(X, 60, pool=pool)
    assert other.order.tolist() == reference.order.tolist()
    np.testing.assert_allclose(other.gains, reference.gains, rtol=1e-6)


def test_selection_beats_random_subsets() -> None:
    X = clustered(2000, 32, 40, seed=4)
    sel = greedy_select(X, 100)
    rng = np.random.default_rng(0)
    random = [vendi_score(X[rng.choice(2000, 100, replace=False)], 1.0) for _ in range(10)]
    assert vendi_score(X[sel.order], 1.0) > 1.2 * np.mean(random)


def test_leave_one_out_matches_brute_force() -> None:
    X = clustered(30, 6, 3, seed=5)
    full, loo = leave_one_out_vendi2(X)
    assert full == pytest.approx(vendi_score(X, 2.0), rel=1e-9)
    for i in range(30):
        rest = np.delete(X, i, axis=0)
        assert loo[i] == pytest.approx(full - vendi_score(rest, 2.0), rel=1e-7, abs=1e-9)


def test_allocation() -> None:
    sizes = {"a": 50, "b": 30, "c": 15, "d": 5}
    prop = allocate(sizes, 20, "proportional")
    assert sum(prop.values()) == 20 and prop == {"a": 10, "b": 6, "c": 3, "d": 1}
    bal = allocate(sizes, 20, "balanced")
    assert sum(bal.values()) == 20 and bal == {"a": 5, "b": 5, "c": 5, "d": 5}
    capped = allocate({"a": 50, "b": 2}, 30, "balanced")  # b's unused share goes to a
    assert capped == {"a": 28, "b": 2}
    assert allocate(sizes, 100) == sizes
    with pytest.raises(ValueError):
        allocate(sizes, 101)


def test_stratified_selection_fills_each_quota_from_its_stratum() -> None:
    X = clustered(300, 10, 6, seed=6)
    strata = [("x", "y", "z")[i % 3] for i in range(300)]
    strata[:10] = ["rare"] * 10
    order, gain, quota = stratified_select(X, 40, strata, how="balanced")
    assert len(order) == len(set(order.tolist())) == 40
    picked = [strata[i] for i in order]
    assert {s: picked.count(s) for s in set(picked)} == {s: q for s, q in quota.items() if q}
    assert quota["rare"] == 10
    assert np.all(np.isfinite(gain))


def test_bad_arguments() -> None:
    with pytest.raises(ValueError):
        greedy_select(np.eye(3), 4)
    with pytest.raises(ValueError):
        greedy_select(np.eye(3), 2, quality=np.array([1.0, -1.0, 0.5]))


def test_stochastic_greedy_with_a_full_sample_is_exact_greedy() -> None:
    X = clustered(300, 12, 8, seed=7)
    quality = np.random.default_rng(7).uniform(0.5, 1.0, size=300)
    for q in (None, quality):
        exact = greedy_select(X, 40, quality=q)
        full = stochastic_greedy_select(X, 40, quality=q, sample=300)
        assert full.order.tolist() == exact.order.tolist()
        np.testing.assert_allclose(full.final_gain, exact.final_gain, rtol=1e-9, atol=1e-12)


def test_stochastic_greedy_is_deterministic_in_its_rng_and_close_to_greedy() -> None:
    X = clustered(3000, 24, 30, seed=8)
    a = stochastic_greedy_select(X, 150, rng=np.random.default_rng(1))
    b = stochastic_greedy_select(X, 150, rng=np.random.default_rng(1))
    assert a.order.tolist() == b.order.tolist() and len(set(a.order.tolist())) == 150
    exact = greedy_select(X, 150)
    assert a.vendi2[-1] >= 0.9 * exact.vendi2[-1]
    assert a.vendi2[-1] == pytest.approx(vendi_score(X[a.order], 2.0), rel=1e-9)


def naive_greedy(X: np.ndarray, k: int, quality: np.ndarray | None = None) -> list[int]:
    """The O(n k d) textbook loop: every step scores every remaining row from its exact
    ``a_x = Σ_s (x·x_s)²``; ties go to the lowest index."""
    X = X / np.linalg.norm(X, axis=1, keepdims=True)
    a = np.zeros(len(X))
    chosen: list[int] = []
    frob = qsum = 0.0
    for m in range(k):
        v = (m + 1) ** 2 / (frob + 2 * a + 1)
        if quality is not None:
            v = (qsum + quality) / (m + 1) * v
        v[chosen] = -np.inf
        j = int(np.argmax(v))
        chosen.append(j)
        frob += 2 * a[j] + 1
        qsum += 0.0 if quality is None else float(quality[j])
        a += (X @ X[j]) ** 2
    return chosen


@pytest.mark.parametrize(("pool", "rounds"), [(1, 1), (7, 13), (64, 500), (1024, None)])
def test_matches_the_naive_loop_whatever_the_rounds(pool: int, rounds: int | None) -> None:
    rng = np.random.default_rng(9)
    data = [clustered(1500, 24, 30, seed=9), rng.normal(size=(1200, 16))]
    for X in data:
        for quality in (None, rng.uniform(0.0, 1.0, size=len(X))):
            sel = greedy_select(X, 250, quality=quality, pool=pool, round_rows=rounds)
            assert sel.order.tolist() == naive_greedy(X, 250, quality)


def test_exact_ties_go_to_the_lowest_index() -> None:
    """Rows from a few exactly representable unit vectors, so every product and sum is exact
    and many candidates tie exactly; small pools and rounds put tied rows on both sides of the pool."""
    for seed in range(60):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(10, 60))
        basis = np.vstack([np.eye(4), np.full(4, 0.5)])  # unit rows, products 0, 1/2 or 1
        X = basis[rng.integers(0, 5, size=n)]
        k = int(rng.integers(1, n))
        quality = (None, rng.choice([0.5, 1.0, 2.0], size=n))[seed % 2]
        pool, rounds = int(rng.integers(1, 6)), int(rng.integers(1, 30))
        sel = greedy_select(X, k, quality=quality, pool=pool, round_rows=rounds)
        assert sel.order.tolist() == naive_greedy(X, k, quality), (seed, pool, rounds)


def test_auto_method_is_exact_up_to_the_limit_and_stochastic_above(monkeypatch: pytest.MonkeyPatch) -> None:
    from trajforge.verifiers.diversity import select as module

    X = clustered(400, 12, 8, seed=11)
    exact = greedy_select(X, 30).order.tolist()
    assert module.select(X, 30, method="auto").order.tolist() == exact
    monkeypatch.setattr(module, "AUTO_EXACT_LIMIT", 400 * 30 - 1)
    sampled = stochastic_greedy_select(X, 30, rng=np.random.default_rng(3)).order.tolist()
    assert sampled != exact
    assert module.select(X, 30, method="auto", rng=np.random.default_rng(3)).order.tolist() == sampled
    with pytest.raises(ValueError, match="method"):
        module.select(X, 3, method="fastest")  # type: ignore[arg-type]


def test_a_pool_that_outgrows_its_buffers_stays_exact() -> None:
    """The first pick ties everywhere (every a_x is 0), so the whole input joins the pool,
    past its initial capacity."""
    X = np.random.default_rng(12).normal(size=(5000, 8))
    assert greedy_select(X, 40, pool=16).order.tolist() == naive_greedy(X, 40)
