"""Canonical JSON and content-addressed ids.

The same defining fields always give the same id, whatever the key order or the way a number
was written (``1`` and ``1.0`` hash equal), so ids serve as dedup, cache and primary keys.
"""

from __future__ import annotations

import hashlib
import json
import random
from typing import Any


def _digest64(*parts: Any) -> int:
    """The first 8 bytes of the SHA-256 of ``parts`` joined with ``:``, as an unsigned int."""
    return int.from_bytes(hashlib.sha256(":".join(str(p) for p in parts).encode()).digest()[:8], "big")


def hash_seed(*parts: Any) -> int:
    """A seed derived from ``parts`` (joined with ``:``): the first 8 bytes of their SHA-256 as
    a non-negative int that fits a signed 64-bit column, independent of every other draw."""
    return _digest64(*parts) >> 1


def hash_stream(*parts: Any) -> random.Random:
    """A random stream of its own for ``parts``, independent of every other draw (seeded with
    the full 8 bytes, not ``hash_seed``'s 63 bits: the streams generation has always drawn)."""
    return random.Random(_digest64(*parts))


def normalize(value: Any) -> Any:
    """Make a JSON-able value canonical: integral floats become ints, floats are rounded."""
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        if value.is_integer():
            return int(value)
        return round(value, 9)
    if isinstance(value, dict):
        return {str(k): normalize(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [normalize(v) for v in value]
    raise TypeError(f"not JSON-able: {type(value).__name__}")


def canonical_json(value: Any) -> str:
    """Compact JSON with sorted keys over the normalized value."""
    return json.dumps(normalize(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_id(value: Any, *, prefix: str = "", length: int = 24) -> str:
    """sha256 of the canonical JSON, hex, truncated to ``length`` characters (96 bits by default)."""
    digest = hashlib.sha256(canonical_json(value).encode()).hexdigest()[:length]
    return f"{prefix}{digest}"
