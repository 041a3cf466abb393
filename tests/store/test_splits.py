"""Family splits and the near-duplicate (contamination) check."""

from __future__ import annotations

import random

import pytest
from pydantic import ValidationError

from trajforge.store.splits import (
    SplitConfig,
    assign_splits,
    contamination,
    family_of,
    jaccard,
    near_duplicates,
    shingles,
)


def test_variants_share_their_family_split() -> None:
    rng = random.Random(3)
    parents: dict[str, str | None] = {}
    roots = [f"bp_{i}" for i in range(300)]
    for r in roots:
        parents[r] = None
    for i in range(600):  # variants of variants
        parent = rng.choice(list(parents))
        parents[f"v_{i}"] = parent
    splits = assign_splits(parents, SplitConfig())
    for bp in parents:
        assert splits[bp] == splits[family_of(bp, parents)]
        assert family_of(bp, parents) in roots


def test_assignment_is_deterministic_and_order_free() -> None:
    parents = {f"bp_{i}": None for i in range(500)}
    a = assign_splits(parents, SplitConfig())
    b = assign_splits(dict(reversed(list(parents.items()))), SplitConfig())
    subset = assign_splits({k: None for k in list(parents)[:50]}, SplitConfig())
    assert a == b
    assert all(subset[k] == a[k] for k in subset)  # adding blueprints never moves old ones
    salted = assign_splits(parents, SplitConfig(salt="other"))
    assert salted != a


def test_ratios_are_respected() -> None:
    parents = {f"bp_{i}": None for i in range(20_000)}
    splits = assign_splits(parents, SplitConfig(train=0.7, validation=0.2, test=0.1))
    share = {s: sum(v == s for v in splits.values()) / len(splits) for s in ("train", "validation", "test")}
    assert share["train"] == pytest.approx(0.7, abs=0.015)
    assert share["validation"] == pytest.approx(0.2, abs=0.015)
    assert share["test"] == pytest.approx(0.1, abs=0.015)
    only_train = assign_splits(parents, SplitConfig(train=1.0, validation=0.0, test=0.0))
    assert set(only_train.values()) == {"train"}


def test_bad_ratios_are_refused() -> None:
    with pytest.raises(ValidationError, match="sum to 1"):
        SplitConfig(train=0.9, validation=0.2, test=0.1)


def test_missing_parent_and_cycles() -> None:
    assert family_of("v", {"v": "elsewhere"}) == "elsewhere"
    assert family_of("a", {"a": "b", "b": "a"}) == "a"


GOALS = [
    "You are a customer (email: ann.lee@example.com). You want: (1) I want to return the Rain Jacket. "
    "[order: the order with the Rain Jacket, items: the Rain Jacket, payment: my gift card]",
    "You are a customer (name: Bo Chen, zip: 11310). You want: (1) Can you tell me the status of an order? "
    "[order: the order with the Yoga Mat] (2) I moved and need to update the address on my account.",
    "You are a customer (email: zed@example.com). You want: (1) I'd like to pay for one of my orders with "
    "a different payment method. [order: #W1983141, payment: my visa card ending in 0593]",
]


def test_near_duplicates_are_found_and_distinct_goals_are_not() -> None:
    rng = random.Random(0)
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron".split()
    train = {f"tr_{i}": " ".join(rng.choice(words) for _ in range(30)) for i in range(200)}
    train.update({f"goal_{i}": g for i, g in enumerate(GOALS)})
    planted = GOALS[2] + " Thanks."  # the same goal with a word added
    other_item = GOALS[0].replace("Rain Jacket", "Tent")  # same template, another task
    test = {"t_planted": planted, "t_other_item": other_item,
            "t_new": "completely unrelated words about ordering a pizza with extra cheese tonight"}
    found = near_duplicates(test, train, threshold=0.8)
    assert [(d.test_id, d.train_id) for d in found] == [("t_planted", "goal_2")]
    assert found[0].similarity == pytest.approx(jaccard(shingles(planted), shingles(GOALS[2])))
    assert found[0].similarity >= 0.8
    assert jaccard(shingles(other_item), shingles(GOALS[0])) < 0.8


def test_lsh_finds_every_pair_exact_jaccard_finds() -> None:
    rng = random.Random(1)
    vocab = [f"w{i}" for i in range(40)]
    base = [" ".join(rng.choice(vocab) for _ in range(40)) for _ in range(60)]
    train = {f"a{i}": t for i, t in enumerate(base)}
    test = {}
    for i, t in enumerate(base[:30]):
        words = t.split()
        for _ in range(rng.randint(0, 6)):
            words[rng.randrange(len(words))] = rng.choice(vocab)
        test[f"b{i}"] = " ".join(words)
    threshold = 0.6
    exact = set()
    for b, text in test.items():
        sims = {a: jaccard(shingles(text), shingles(t)) for a, t in train.items()}
        best = max(sims, key=lambda a: sims[a])
        if sims[best] >= threshold:
            exact.add(b)
    found = {d.test_id for d in near_duplicates(test, train, threshold)}
    assert found == exact and len(exact) >= 10


def test_contamination_compares_test_to_train_only() -> None:
    goals = {"a": GOALS[0], "b": GOALS[0], "c": GOALS[0], "d": GOALS[1]}
    splits = {"a": "test", "b": "train", "c": "validation", "d": "train"}
    flagged = contamination(goals, splits, 0.8)  # type: ignore[arg-type]
    assert [(d.test_id, d.train_id, d.similarity) for d in flagged] == [("a", "b", 1.0)]
