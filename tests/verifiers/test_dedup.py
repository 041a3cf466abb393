"""Blocked near-duplicate removal and nearest neighbours equal their brute-force versions on
the full similarity matrix, whatever the block size and visiting order."""

from __future__ import annotations

import numpy as np
import pytest

from trajforge.verifiers.diversity.dedup import nearest_neighbours, remove_near_duplicates


def with_near_copies(n: int, d: int, copies: int, noise: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    src = rng.integers(0, n, size=copies)
    return np.concatenate([X, X[src] + noise * rng.normal(size=(copies, d))])


def brute_dedup(X: np.ndarray, threshold: float, priority: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    Y = X / np.linalg.norm(X, axis=1, keepdims=True)
    S = Y @ Y.T
    keep = np.zeros(len(X), dtype=bool)
    dup = np.full(len(X), -1)
    kept: list[int] = []
    for i in priority:
        hits = [j for j in kept if S[i, j] >= threshold]
        if hits:
            dup[i] = hits[0]
        else:
            keep[i] = True
            kept.append(int(i))
    return keep, dup


@pytest.mark.parametrize("block", [1, 7, 64, 4096])
def test_blocked_dedup_equals_brute_force(block: int) -> None:
    X = with_near_copies(150, 12, 60, noise=0.15, seed=0)
    priority = np.random.default_rng(1).permutation(len(X))
    got = remove_near_duplicates(X, 0.95, priority=priority, block=block)
    keep, dup = brute_dedup(X, 0.95, priority)
    assert 40 <= (~keep).sum() <= 80  # the planted copies are found, not just anything
    np.testing.assert_array_equal(got.keep, keep)
    np.testing.assert_array_equal(got.duplicate_of, dup)
    removed = ~got.keep
    assert np.all(got.keep[got.duplicate_of[removed]])  # a duplicate points at a kept row
    assert np.all(got.similarity[removed] >= 0.95) and np.all(np.isnan(got.similarity[got.keep]))


def test_chains_keep_both_ends() -> None:
    a = np.array([1.0, 0.0])
    b = np.array([np.cos(0.3), np.sin(0.3)])
    c = np.array([np.cos(0.6), np.sin(0.6)])
    threshold = float(np.cos(0.35))  # a~b, b~c, not a~c
    got = remove_near_duplicates(np.stack([a, b, c]), threshold)
    assert got.keep.tolist() == [True, False, True]
    assert got.duplicate_of.tolist() == [-1, 0, -1]


@pytest.mark.parametrize("block", [1, 5, 32, 1000])
def test_nearest_neighbours_equal_brute_force(block: int) -> None:
    X = np.random.default_rng(2).normal(size=(97, 8))
    Y = X / np.linalg.norm(X, axis=1, keepdims=True)
    S = Y @ Y.T
    np.fill_diagonal(S, -np.inf)
    idx, sim = nearest_neighbours(X, block=block)
    np.testing.assert_array_equal(idx, S.argmax(axis=1))
    np.testing.assert_allclose(sim, S.max(axis=1), rtol=1e-12)


def test_priority_must_be_a_permutation() -> None:
    with pytest.raises(ValueError, match="permutation"):
        remove_near_duplicates(np.eye(3), 0.9, priority=[0, 0, 1])
