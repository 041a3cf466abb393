"""Diversity: embeddings, the Vendi score, greedy diverse selection and near-duplicate removal.

Numpy only, except the sentence-transformers embedder (imported lazily, ``diversity`` extra).
"""

from trajforge.verifiers.diversity.dedup import Dedup, nearest_neighbours, remove_near_duplicates
from trajforge.verifiers.diversity.documents import TEXT_VIEWS, document, structure_tokens
from trajforge.verifiers.diversity.embedders import (
    Embedder,
    HashedNgramEmbedder,
    SentenceTransformerEmbedder,
    make_embedder,
    packaged_model_path,
)
from trajforge.verifiers.diversity.select import (
    Selection,
    allocate,
    greedy_select,
    leave_one_out_vendi2,
    stratified_select,
    vendi2_of_set,
)
from trajforge.verifiers.diversity.vendi import (
    ORDERS,
    CovarianceAccumulator,
    dual_score,
    kernel_score,
    parse_order,
    stream_score,
    vendi_score,
)

__all__ = [
    "ORDERS", "CovarianceAccumulator", "Dedup", "Embedder", "HashedNgramEmbedder",
    "SentenceTransformerEmbedder", "Selection", "TEXT_VIEWS", "allocate", "document",
    "dual_score", "greedy_select", "kernel_score", "leave_one_out_vendi2", "make_embedder",
    "nearest_neighbours", "packaged_model_path", "parse_order", "remove_near_duplicates",
    "stratified_select", "stream_score", "structure_tokens", "vendi2_of_set", "vendi_score",
]
