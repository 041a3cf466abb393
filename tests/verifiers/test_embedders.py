"""Embedders: the hashed views (no model) and real sentence-transformers on the packaged
all-MiniLM-L6-v2, loaded by path with the hub switched off."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from trajforge.errors import ConfigError
from trajforge.verifiers.diversity.embedders import (
    HashedNgramEmbedder,
    SentenceTransformerEmbedder,
    make_embedder,
    packaged_model_path,
)

TEXTS = [
    "I want to return the Rain Jacket from my last order.",
    "I'd like to send back the rain jacket I ordered recently.",
    "What is the price of the Desk Lamp with an LED bulb?",
    "Please change the shipping address of order #W1234567 to 12 Elm St.",
]


def test_hashed_embedder_is_unit_norm_deterministic_and_entity_sensitive() -> None:
    emb = HashedNgramEmbedder(dim=512)
    X = emb.embed(TEXTS)
    assert X.shape == (4, 512) and X.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0, rtol=1e-6)
    np.testing.assert_array_equal(X, HashedNgramEmbedder(dim=512).embed(TEXTS))
    same = emb.embed(["order #W1 cancel", "order #W1 cancel"])
    assert float(same[0] @ same[1]) == pytest.approx(1.0)
    ids = emb.embed(["cancel order #W1111111 please", "cancel order #W2222222 please",
                     "cancel order #W1111111 now"])
    assert ids[0] @ ids[2] > ids[0] @ ids[1]  # the shared id weighs more than the shared wording
    empty = emb.embed([""])
    assert np.linalg.norm(empty) == pytest.approx(1.0)


def test_hashing_does_not_depend_on_the_process_hash_seed() -> None:
    code = ("from trajforge.verifiers.diversity.embedders import HashedNgramEmbedder;"
            "print(HashedNgramEmbedder(dim=64).embed(['a b c d']).round(6).tolist())")
    runs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={"PYTHONHASHSEED": seed}).stdout for seed in ("1", "2")}
    assert len(runs) == 1


def test_structure_embedder_splits_on_whitespace_only() -> None:
    emb = make_embedder("structure")
    assert isinstance(emb, HashedNgramEmbedder) and emb.whitespace
    assert emb.tokens("seq:a>b call:a") == ["seq:a>b", "call:a"]
    assert emb.key != make_embedder("hashed").key


@pytest.fixture(scope="module")
def minilm() -> SentenceTransformerEmbedder:
    mp = pytest.MonkeyPatch()
    mp.setenv("HF_HUB_OFFLINE", "1")
    mp.setenv("TRANSFORMERS_OFFLINE", "1")
    emb = make_embedder("minilm", device="cpu", batch_size=4)
    assert isinstance(emb, SentenceTransformerEmbedder)
    emb.load()
    yield emb
    mp.undo()


@pytest.mark.slow
def test_packaged_model_is_loaded_by_path(minilm: SentenceTransformerEmbedder) -> None:
    path = packaged_model_path()
    assert (path / "config.json").is_file() and minilm.model == str(path)
    assert minilm.key == "st:minilm" and minilm.dim == 384


@pytest.mark.slow
def test_minilm_embeddings_are_the_models_own_and_meaningful(minilm: SentenceTransformerEmbedder) -> None:
    X = minilm.embed(TEXTS)
    assert X.shape == (4, 384) and X.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0, rtol=1e-5)
    direct = minilm.load().encode(TEXTS, normalize_embeddings=True, convert_to_numpy=True)
    np.testing.assert_allclose(X, direct, atol=1e-5)
    S = X @ X.T
    assert S[0, 1] > 0.7 > S[0, 2]  # the paraphrase is close, the other request is not


def test_unknown_model_fails_with_a_config_error(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    # huggingface_hub reads those variables once, at import: in a full run another test has
    # imported it already, and the lookup went to the network (five retries, 70-80 s, then the
    # same ConfigError). Its settings, where it reads them at call time:
    constants = pytest.importorskip("huggingface_hub.constants")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    with pytest.raises(ConfigError, match="diversity.embedder"):
        make_embedder("no-such-org/no-such-model", device="cpu").embed(["x"])
