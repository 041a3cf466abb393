"""Deterministic train / validation / test splits by blueprint family, and a contamination check.

A blueprint's **family** is the root of its provenance chain: its own id, or the id reached by
following ``parent_id`` links (a variant, a variant of a variant, ...). The split of a family is
a pure function of ``sha256(salt + family)`` and the ratios, so a blueprint and all its variants
land in the same split, whatever the run, shard layout or order of rows, and adding blueprints
never moves existing ones.

The **contamination check** flags test blueprints whose goal text is a near-duplicate of a train
blueprint's: word 3-shingles, hashed; MinHash signatures banded into an LSH index to find
candidates; exact Jaccard similarity on the candidates against a threshold. It needs nothing
beyond the standard library, so it runs on the core install.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field, model_validator

from trajforge.schemas.base import Record

Split = Literal["train", "validation", "test"]
SPLITS: tuple[Split, ...] = ("train", "validation", "test")


class SplitConfig(Record):
    """Ratios of families per split (they must sum to 1), and a salt to draw a different split."""

    train: float = Field(default=0.8, ge=0, le=1)
    validation: float = Field(default=0.1, ge=0, le=1)
    test: float = Field(default=0.1, ge=0, le=1)
    salt: str = ""
    near_duplicate_threshold: float = Field(default=0.8, gt=0, le=1,
                                            description="goal-text Jaccard that flags contamination")

    @model_validator(mode="after")
    def _sum_to_one(self) -> SplitConfig:
        if abs(self.train + self.validation + self.test - 1.0) > 1e-9:
            raise ValueError("train + validation + test must sum to 1")
        return self

    def ratios(self) -> dict[Split, float]:
        return {"train": self.train, "validation": self.validation, "test": self.test}


# --- families and assignment ------------------------------------------------------------------

def family_of(blueprint_id: str, parents: Mapping[str, str | None]) -> str:
    """The root of ``blueprint_id``'s provenance chain. A parent missing from ``parents`` is
    still the family (a variant whose parent lives in another run keeps its parent's family);
    a cycle, which valid provenance never has, stops at the smallest id on it."""
    seen: list[str] = []
    current = blueprint_id
    while True:
        seen.append(current)
        parent = parents.get(current)
        if not parent:
            return current
        if parent in seen:
            return min(seen[seen.index(parent):])
        current = parent


def families(parents: Mapping[str, str | None]) -> dict[str, str]:
    """Family of every blueprint in ``parents`` (blueprint id -> its parent id or None)."""
    return {bp: family_of(bp, parents) for bp in parents}


def _unit(salt: str, family: str) -> float:
    digest = hashlib.sha256(f"{salt}\x00{family}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def split_of(family: str, config: SplitConfig) -> Split:
    """The split a family belongs to: the hash of the family, a point in [0, 1), falls in the
    train, validation or test interval."""
    u = _unit(config.salt, family)
    if u < config.train:
        return "train"
    if u < config.train + config.validation:
        return "validation"
    return "test" if config.test > 0 else ("validation" if config.validation > 0 else "train")


def assign_splits(parents: Mapping[str, str | None], config: SplitConfig) -> dict[str, Split]:
    """Blueprint id -> split, by family."""
    return {bp: split_of(fam, config) for bp, fam in families(parents).items()}


# --- near-duplicate goals ---------------------------------------------------------------------

_WORD = re.compile(r"[a-z0-9]+")
_PRIME = (1 << 61) - 1
_BANDS, _ROWS = 16, 4  # 64 hashes; P(candidate) = 1 - (1 - J^4)^16: 0.9998 at J = 0.8, 0.08 at 0.3


def shingles(text: str, k: int = 3) -> frozenset[int]:
    """Hashed word ``k``-shingles of lower-cased text (the whole text if shorter than k)."""
    words = _WORD.findall(text.lower())
    grams = [" ".join(words[i:i + k]) for i in range(max(1, len(words) - k + 1))]
    return frozenset(int.from_bytes(hashlib.blake2b(g.encode(), digest_size=8).digest(), "big")
                     for g in grams)


def _permutations(n: int) -> list[tuple[int, int]]:
    out = []
    for i in range(n):
        digest = hashlib.sha256(f"minhash:{i}".encode()).digest()
        a = int.from_bytes(digest[:8], "big") % (_PRIME - 1) + 1
        b = int.from_bytes(digest[8:16], "big") % _PRIME
        out.append((a, b))
    return out


_PERMS = _permutations(_BANDS * _ROWS)


def minhash(shingle_set: frozenset[int]) -> tuple[int, ...]:
    if not shingle_set:
        return tuple(_PRIME for _ in _PERMS)
    return tuple(min((a * x + b) % _PRIME for x in shingle_set) for a, b in _PERMS)


def jaccard(a: frozenset[int], b: frozenset[int]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


@dataclass(frozen=True, slots=True)
class NearDuplicate:
    """A test blueprint whose goal text is close to a train blueprint's."""

    test_id: str
    train_id: str
    similarity: float


def near_duplicates(test: Mapping[str, str], train: Mapping[str, str],
                    threshold: float) -> list[NearDuplicate]:
    """For each test blueprint (id -> goal text), its most similar train blueprint when their
    word-shingle Jaccard is at least ``threshold``. Sorted by test id."""
    train_sets = {bp: shingles(text) for bp, text in train.items()}
    index: dict[tuple[int, tuple[int, ...]], list[str]] = {}
    for bp in sorted(train_sets):
        signature = minhash(train_sets[bp])
        for band in range(_BANDS):
            index.setdefault((band, signature[band * _ROWS:(band + 1) * _ROWS]), []).append(bp)
    found: list[NearDuplicate] = []
    for bp in sorted(test):
        mine = shingles(test[bp])
        signature = minhash(mine)
        candidates: set[str] = set()
        for band in range(_BANDS):
            candidates.update(index.get((band, signature[band * _ROWS:(band + 1) * _ROWS]), ()))
        best: NearDuplicate | None = None
        for other in sorted(candidates):
            sim = jaccard(mine, train_sets[other])
            if sim >= threshold and (best is None or sim > best.similarity):
                best = NearDuplicate(bp, other, sim)
        if best is not None:
            found.append(best)
    return found


def contamination(goals: Mapping[str, str], splits: Mapping[str, Split],
                  threshold: float) -> list[NearDuplicate]:
    """Test blueprints whose goal is a near-duplicate of a train blueprint's goal."""
    test = {bp: g for bp, g in goals.items() if splits.get(bp) == "test"}
    train = {bp: g for bp, g in goals.items() if splits.get(bp) == "train"}
    return near_duplicates(test, train, threshold)


def split_counts(splits: Mapping[str, Split], ids: Iterable[str]) -> dict[Split, int]:
    """How many of ``ids`` (blueprint ids, one per record) fall in each split."""
    counts: dict[Split, int] = dict.fromkeys(SPLITS, 0)
    for bp in ids:
        counts[splits[bp]] += 1
    return counts


def parse_splits(text: str | None) -> tuple[float, float, float] | None:
    """``"0.8,0.1,0.1"`` -> the three ratios (``None`` for the default)."""
    if not text:
        return None
    parts = text.split(",")
    if len(parts) != 3:
        raise ValueError("expected three ratios train,validation,test such as 0.8,0.1,0.1")
    return tuple(float(p) for p in parts)  # type: ignore[return-value]



def split_config(ratios: str | Sequence[float] | None, salt: str, field: str) -> SplitConfig:
    """A ``SplitConfig`` from train/validation/test ratios (a ``"0.8,0.1,0.1"`` text or three
    numbers; ``None``: the default) and a salt; a bad value is a ``ConfigError`` of ``field``."""
    from pydantic import ValidationError

    from trajforge.errors import ConfigError

    try:
        parsed = parse_splits(ratios) if isinstance(ratios, str) or ratios is None else tuple(ratios)
        values: dict[str, Any] = {"salt": salt}
        if parsed:
            if len(parsed) != 3:
                raise ValueError(f"expected three ratios (train, validation, test), got {list(parsed)}")
            values.update(zip(("train", "validation", "test"), parsed, strict=True))
        return SplitConfig(**values)
    except (ValueError, ValidationError) as exc:
        detail = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
        raise ConfigError(field, detail) from None


__all__: Sequence[str] = (
    "SPLITS", "NearDuplicate", "Split", "SplitConfig", "assign_splits", "contamination",
    "families", "family_of", "jaccard", "minhash", "near_duplicates", "parse_splits", "split_config",
    "shingles", "split_counts", "split_of",
)
