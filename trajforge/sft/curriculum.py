"""A horizon curriculum for SFT (``curriculum`` in ``trajforge.sft.train.TrainConfig``): train on
short prefixes of the conversations first, then on longer ones, then on whole conversations.

A stage of horizon ``h`` holds every conversation cut right after its ``h``-th assistant message:
the system, user and tool messages before that message are kept, nothing after it. A
conversation with ``h`` or fewer assistant messages is left out of that stage rather than
repeated whole: its cut would add no assistant message beyond what the final stage trains, so
it would only count double. After the listed stages comes always a final stage of the whole
conversations. Each stage is shuffled with the caller's ``random.Random``; the stages follow one
another in order of horizon. ``stage_rows`` caps each prefix stage at its first ``n`` rows after
the shuffle (a random share of the conversations; the final stage keeps them all): prefix rows
are short, so a cap bounds the time a stage takes from a fixed budget. Pure functions over plain
rows (``messages`` + any other columns, copied as they are); nothing heavy is imported.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any


@dataclass(frozen=True, slots=True)
class Stage:
    """One stage of the curriculum: its rows, each cut at ``horizon`` assistant messages
    (``None``: whole conversations)."""

    horizon: int | None
    rows: list[dict[str, Any]]


def check_horizons(horizons: Sequence[int]) -> tuple[int, ...]:
    """``horizons`` as a tuple; ``ValueError`` unless they are strictly increasing and >= 1."""
    values = tuple(horizons)
    if any(h < 1 for h in values) or any(a >= b for a, b in pairwise(values)):
        raise ValueError(f"horizons must be strictly increasing and at least 1, e.g. [2, 4]; got {list(values)}")
    return values


def _role(message: Any) -> Any:
    # a message is a dict once datasets decodes the export's Json column, JSON text otherwise
    return (json.loads(message) if isinstance(message, str) else message).get("role")


def cut_after_assistant(messages: Sequence[Any], horizon: int) -> list[Any] | None:
    """The messages up to and including the ``horizon``-th assistant message, or ``None`` when
    there are ``horizon`` or fewer assistant messages (the whole conversation is no prefix)."""
    seen = 0
    for i, message in enumerate(messages):
        if _role(message) == "assistant":
            seen += 1
            if seen == horizon:
                rest = messages[i + 1:]
                return list(messages[: i + 1]) if any(_role(m) == "assistant" for m in rest) else None
    return None


def curriculum_stages(rows: Sequence[Mapping[str, Any]], horizons: Sequence[int],
                      rng: random.Random, stage_rows: int | None = None) -> list[Stage]:
    """The stages: one per horizon, in order, then the whole conversations (horizon ``None``),
    each shuffled with ``rng``; a prefix stage keeps at most ``stage_rows`` rows (``None``: all).
    Without horizons: one stage of the rows as they are, unshuffled (the trainer's own sampler
    shuffles them)."""
    steps = check_horizons(horizons)
    if stage_rows is not None and stage_rows < 1:
        raise ValueError(f"stage_rows must be at least 1 (or None: all rows); got {stage_rows}")
    if not steps:
        return [Stage(None, [dict(r) for r in rows])]
    stages = []
    for horizon in (*steps, None):
        stage = []
        for row in rows:
            messages = row["messages"] if horizon is None else cut_after_assistant(row["messages"], horizon)
            if messages is not None:
                stage.append({**row, "messages": list(messages)})
        rng.shuffle(stage)
        if horizon is not None and stage_rows is not None:
            del stage[stage_rows:]
        stages.append(Stage(horizon, stage))
    return stages


def curriculum_rows(rows: Sequence[Mapping[str, Any]], horizons: Sequence[int],
                    rng: random.Random, stage_rows: int | None = None) -> list[dict[str, Any]]:
    """The stages' rows one after another: the order in which the trainer reads them."""
    return [row for stage in curriculum_stages(rows, horizons, rng, stage_rows) for row in stage.rows]
