"""Explicit schemas of the exports: the Arrow schema of each Parquet shard and the matching
Hugging Face ``datasets`` Features, embedded in the file so ``load_dataset`` restores them.

Why messages are ``List(Json())`` rather than a struct: an Arrow struct pads every message with
every key set to ``None`` (a user message comes back with ``tool_calls: None``), and tool-call
arguments are dicts whose keys differ from tool to tool, which no single struct type holds. A
JSON-typed element keeps each message exactly as exported (``None`` keys absent, ``arguments``
a JSON object), round-trips through Parquet's JSON logical type, and is what transformers' chat
templates and TRL expect after decoding. ``datasets.Json`` (datasets >= 4.7) maps to Arrow's
canonical ``arrow.json`` extension type; this module builds that schema and the ``huggingface``
schema metadata by hand, so the core install (pyarrow only) writes the same bytes the
``datasets`` library would.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Literal

import pyarrow as pa

ExportFormat = Literal["sft", "preferences", "sharegpt", "openai", "rl_tasks"]
EXPORT_FORMATS: tuple[ExportFormat, ...] = ("sft", "preferences", "sharegpt", "openai", "rl_tasks")


def export_formats(names: Iterable[str] | None, field: str) -> list[ExportFormat]:
    """The formats named (comma-separated lists allowed; none given, or ``all``: every format),
    each once, in the order given; an unknown name is a ``ConfigError`` of ``field``."""
    from trajforge.errors import ConfigError

    chosen = [n.strip() for v in names or ["all"] for n in v.split(",") if n.strip()]
    if "all" in chosen:
        return list(EXPORT_FORMATS)
    known = {f: f for f in EXPORT_FORMATS}
    out: list[ExportFormat] = []
    for name in chosen:
        if name not in known:
            raise ConfigError(field, f"'{name}' is not one of {', '.join(EXPORT_FORMATS)}, all")
        if known[name] not in out:
            out.append(known[name])
    return out

JSON = pa.json_(pa.string())

# A feature in the serialized form of ``datasets.Features.to_dict()``.
Feature = dict[str, Any]


def _string() -> Feature:
    return {"dtype": "string", "_type": "Value"}


def _value(dtype: str) -> Feature:
    return {"dtype": dtype, "_type": "Value"}


def _json() -> Feature:
    return {"_type": "Json"}


def _list(feature: Feature | dict[str, Feature]) -> Feature:
    return {"feature": feature, "_type": "List"}


_ARROW = {"string": pa.string(), "bool": pa.bool_(), "float64": pa.float64(), "int32": pa.int32(),
          "int64": pa.int64()}

_MESSAGES = _list(_json())

FEATURES: dict[ExportFormat, dict[str, Feature]] = {
    "sft": {
        "id": _string(),
        "blueprint_id": _string(),
        "domain": _string(),
        "messages": _MESSAGES,
        "tools": _list(_json()),
    },
    "preferences": {
        "id": _string(),
        "blueprint_id": _string(),
        "domain": _string(),
        "prompt": _MESSAGES,
        "chosen": _MESSAGES,
        "rejected": _MESSAGES,
        "tools": _list(_json()),
        "chosen_trajectory_id": _string(),
        "rejected_trajectory_id": _string(),
        "failed_checks": _list(_string()),
        "fault_kind": _string(),
    },
    "sharegpt": {
        "id": _string(),
        "conversations": _list({"from": _string(), "value": _string()}),
        "system": _string(),
        "tools": _string(),
    },
    "openai": {
        "messages": _MESSAGES,
        "tools": _list(_json()),
        "parallel_tool_calls": _value("bool"),
        # exports.openai_metadata: what `trajforge verify --input` needs beyond the dialogue
        "metadata": {"trajectory_id": _string(), "blueprint_id": _string(), "run_id": _string(),
                     "domain": _string(), "termination": _string()},
    },
    "rl_tasks": {
        "id": _string(),
        "environment": _string(),
        "environment_config": _json(),
        "prompt": _MESSAGES,
        "tools": _list(_json()),
        "verification": _json(),
        "user": _json(),
        "structure": _json(),
        "family": _string(),
    },
}


def _arrow_type(feature: Feature) -> pa.DataType:
    """The Arrow type of a feature: a ``_type``-tagged one, or a plain dict of sub-features."""
    kind = feature.get("_type")
    if kind == "Value":
        return _ARROW[feature["dtype"]]
    if kind == "Json":
        return JSON
    if kind == "List":
        return pa.list_(_arrow_type(feature["feature"]))
    # a plain dict of sub-features is a struct
    return pa.struct([(name, _arrow_type(sub)) for name, sub in feature.items()])


def arrow_schema(fmt: ExportFormat) -> pa.Schema:
    """The Arrow schema of a ``fmt`` shard, with the ``huggingface`` metadata ``datasets`` reads."""
    fields = FEATURES[fmt]
    metadata = {"huggingface": json.dumps({"info": {"features": fields}})}
    return pa.schema([(name, _arrow_type(f)) for name, f in fields.items()], metadata=metadata)


def features(fmt: ExportFormat) -> Any:
    """The declared ``datasets.Features`` of an export (needs the ``export`` extra)."""
    from datasets import Features

    return Features.from_dict(FEATURES[fmt])


def to_arrow_rows(fmt: ExportFormat, records: list[dict[str, Any]],
                  tool_cache: dict[int, tuple[Any, str]] | None = None) -> list[dict[str, Any]]:
    """Records with their JSON-typed values encoded as JSON text, as Arrow's JSON type stores
    them (compact, keys in export order).

    ``tool_cache`` (id -> (object, text)) lets a caller that shares one parsed tool list across
    many records encode each tool schema once; it keeps the objects alive so ids stay valid."""
    fields = FEATURES[fmt]
    out = []
    for record in records:
        row = {}
        for name, feature in fields.items():
            value = record.get(name)
            if tool_cache is not None and name == "tools" and isinstance(value, list):
                row[name] = [_cached(tool_cache, t) for t in value]
            else:
                row[name] = _encode(feature, value)
        out.append(row)
    return out


def _cached(cache: dict[int, tuple[Any, str]], value: Any) -> str:
    hit = cache.get(id(value))
    if hit is None or hit[0] is not value:
        hit = (value, json.dumps(value, ensure_ascii=False, separators=(",", ":")))
        cache[id(value)] = hit
    return hit[1]


def _encode(feature: Feature | dict[str, Feature], value: Any) -> Any:
    if value is None:
        return None
    kind = feature.get("_type")
    if kind == "Json":
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if kind == "List":
        return [_encode(feature["feature"], v) for v in value]
    if kind == "Value":
        return value
    return {name: _encode(sub, value.get(name)) for name, sub in feature.items()}


def _storage_type(t: pa.DataType) -> pa.DataType:
    if isinstance(t, pa.BaseExtensionType):
        return t.storage_type
    if pa.types.is_list(t):
        return pa.list_(_storage_type(t.value_type))
    if pa.types.is_struct(t):
        return pa.struct([(f.name, _storage_type(f.type)) for f in t])
    return t


def to_table(fmt: ExportFormat, records: list[dict[str, Any]]) -> pa.Table:
    """An Arrow table of ``fmt`` records, typed by ``arrow_schema(fmt)``."""
    return rows_to_table(fmt, to_arrow_rows(fmt, records))


def rows_to_table(fmt: ExportFormat, rows: list[dict[str, Any]]) -> pa.Table:
    """An Arrow table of rows already encoded by ``to_arrow_rows``.

    pyarrow cannot build extension-typed nested arrays from Python objects, so the rows are
    built on the JSON type's storage (strings) and cast, which only relabels the type."""
    schema = arrow_schema(fmt)
    storage = pa.schema([(f.name, _storage_type(f.type)) for f in schema])
    return pa.Table.from_pylist(rows, schema=storage).cast(schema)
