"""The Vendi score: known values, the two forms agree, streaming and weights are exact, and the
values match the published definition (Friedman & Dieng 2023, eq. 1 and the order-q family)
computed here from scratch on the n x n kernel."""

from __future__ import annotations

import math

import numpy as np
import pytest

from trajforge.verifiers.diversity.vendi import (
    ORDERS,
    CovarianceAccumulator,
    dual_score,
    kernel_score,
    parse_order,
    stream_score,
    vendi_score,
    vendi_scores,
)


def published(X: np.ndarray, q: float, p: np.ndarray | None = None) -> float:
    """exp of the order-q Rényi entropy of the eigenvalues of K/n (or of diag(√p) K diag(√p)),
    K the cosine kernel; zero eigenvalues left out, as the paper's 0·log 0 = 0."""
    Y = X / np.linalg.norm(X, axis=1, keepdims=True)
    K = Y @ Y.T
    if p is None:
        A = K / len(X)
    else:
        p = p / p.sum()
        A = np.sqrt(p)[:, None] * K * np.sqrt(p)[None, :]
    lam = np.linalg.eigvalsh(A)
    lam = lam[lam > 1e-12]
    if q == 1:
        return math.exp(-float((lam * np.log(lam)).sum()))
    if math.isinf(q):
        return 1.0 / float(lam.max())
    return float((lam ** q).sum()) ** (1.0 / (1.0 - q))


@pytest.mark.parametrize("q", ORDERS)
@pytest.mark.parametrize("form", ["kernel", "dual"])
def test_identical_items_score_one(q: float, form: str) -> None:
    X = np.tile(np.random.default_rng(0).normal(size=(1, 16)), (50, 1))
    assert vendi_score(X, q, form=form) == pytest.approx(1.0, abs=1e-9)


@pytest.mark.parametrize("q", ORDERS)
@pytest.mark.parametrize("form", ["kernel", "dual"])
def test_n_orthogonal_items_score_n(q: float, form: str) -> None:
    rng = np.random.default_rng(1)
    Q, _ = np.linalg.qr(rng.normal(size=(32, 32)))
    X = Q[:, :12].T * rng.uniform(0.5, 3.0, size=(12, 1))  # 12 orthogonal rows, any lengths
    assert vendi_score(X, q, form=form) == pytest.approx(12.0, rel=1e-9)


@pytest.mark.parametrize("q", ORDERS)
def test_r_orthogonal_groups_of_copies_score_r(q: float) -> None:
    X = np.repeat(np.eye(20)[:5], 7, axis=0)  # 5 directions, 7 copies each, n > d not needed
    assert vendi_score(X, q, form="dual") == pytest.approx(5.0, rel=1e-9)
    assert vendi_score(X, q, form="kernel") == pytest.approx(5.0, rel=1e-9)


@pytest.mark.parametrize("q", ORDERS)
def test_dual_equals_kernel_and_published_on_random_data(q: float) -> None:
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 24)) + rng.normal(size=(1, 24))  # correlated rows
    expected = published(X, q)
    assert 1.0 < expected < 24.0
    assert vendi_score(X, q, form="kernel") == pytest.approx(expected, rel=1e-9)
    assert vendi_score(X, q, form="dual") == pytest.approx(expected, rel=1e-9)
    assert vendi_scores(X, [q])[q] == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("q", [0.5, 1.0, 3.0, math.inf])
def test_weights_match_published_and_integer_weights_equal_duplicated_rows(q: float) -> None:
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 10))
    w = rng.integers(1, 4, size=60).astype(float)
    expected = published(X, q, w)
    assert kernel_score(_unit(X) @ _unit(X).T, q, w) == pytest.approx(expected, rel=1e-9)
    assert dual_score(X, q, w, batch_size=7) == pytest.approx(expected, rel=1e-9)
    repeated = np.repeat(X, w.astype(int), axis=0)
    assert vendi_score(repeated, q, form="dual") == pytest.approx(expected, rel=1e-9)


def _unit(X: np.ndarray) -> np.ndarray:
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def test_streaming_is_independent_of_batching() -> None:
    rng = np.random.default_rng(4)
    X = rng.normal(size=(1000, 16)).astype(np.float32)
    whole = dual_score(X.astype(np.float64), 1.0)
    for size in (1, 33, 1000):
        batches = (X[lo:lo + size] for lo in range(0, len(X), size))
        assert stream_score(batches, 1.0) == pytest.approx(whole, rel=1e-6)  # float32 batches
    multi = stream_score((X[lo:lo + 100] for lo in range(0, 1000, 100)), ORDERS)
    assert isinstance(multi, dict) and set(multi) == set(ORDERS)
    assert multi[1.0] == pytest.approx(whole, rel=1e-6)


def test_orders_are_ordered_and_bounded() -> None:
    X = np.random.default_rng(5).normal(size=(200, 12))
    values = vendi_scores(X, ORDERS)
    ordered = [values[q] for q in ORDERS]
    assert all(a >= b - 1e-12 for a, b in zip(ordered, ordered[1:]))
    assert 1.0 <= ordered[-1] and ordered[0] <= 12.0
    acc = CovarianceAccumulator(12)
    acc.add(X)
    assert acc.score(math.inf) == pytest.approx(1.0 / np.linalg.eigvalsh(acc.matrix / 200).max())


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="all zero"):
        vendi_score(np.zeros((3, 4)))
    with pytest.raises(ValueError, match="> 0"):
        parse_order(0)
    assert parse_order("inf") == math.inf
    with pytest.raises(ValueError, match="weights"):
        dual_score(np.eye(3), 1.0, np.array([1.0, -1.0, 1.0]))
    with pytest.raises(ValueError, match="no batches"):
        stream_score(iter(()))
