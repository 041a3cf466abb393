"""``sft.bf16: auto`` (and ``grpo.bf16: auto``): train under bf16 autocast only where it is the
faster of the two.

Why: whether bf16 autocast speeds training up depends on the processor, not on the model. On a
GPU it does. On a CPU it depends on its matrix units: on an Intel Xeon with AMX the minilm policy
trained at 1,150 tokens/s under bf16 against 830 in fp32 (README), while on an Intel Xeon without
AMX (``avx512_bf16`` only) one SmolLM2 training pass (8 of 30 blocks trained, 1,527 tokens) ran at
227 tokens/s under bf16 against 346 in fp32 (``benchmarks/results/freeze_speed-precision.md``). The
machine a config file runs on is not known when it is written, so ``auto`` measures: on a CPU it
times a forward and backward pass of the model as it will train (its frozen blocks frozen) over
``tokens`` random token ids, ``passes`` times in each mode after a warm-up, alternating, and keeps
the faster. No optimizer step is taken and the gradients are dropped, so the weights are untouched.
On a GPU ``auto`` is bf16 without a measurement where the card supports it
(``torch.cuda.is_bf16_supported()``: Ampere and later) and fp32 where it does not (a V100, a T4).
The choice and both speeds go to ``train_summary.json`` (``precision``), and the seconds it took
count against ``max_minutes``.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

AUTO = "auto"


@dataclass(frozen=True)
class PrecisionChoice:
    """What ``sft.bf16: auto`` chose, and from what (tokens/s per mode; empty on a GPU)."""

    bf16: bool
    tokens_per_second: dict[str, float]
    seconds: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _pass_seconds(model: Any, ids: Any, bf16: bool) -> float:
    import torch

    started = time.perf_counter()
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    seconds = time.perf_counter() - started
    model.zero_grad(set_to_none=True)
    return seconds


def choose_bf16(model: Any, tokens: int = 512, passes: int = 2, seed: int = 0) -> PrecisionChoice:
    """On a GPU bf16 where the card supports it; on a CPU the faster of bf16 autocast and fp32 for
    ``model`` (module docstring)."""
    import torch

    began = time.perf_counter()
    if torch.cuda.is_available():
        return PrecisionChoice(bf16=bool(torch.cuda.is_bf16_supported()), tokens_per_second={}, seconds=0.0)
    length = max(8, min(tokens, int(getattr(model.config, "max_position_embeddings", tokens) or tokens)))
    generator = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, int(model.config.vocab_size), (1, length), generator=generator)
    was_training = model.training
    model.train()
    try:
        for bf16 in (True, False):  # warm-up: first-call costs (allocations, kernel choice) in neither mode
            _pass_seconds(model, ids, bf16)
        totals = {"bf16": 0.0, "fp32": 0.0}
        for _ in range(passes):  # alternating, so a change of load on a shared CPU hits both
            totals["bf16"] += _pass_seconds(model, ids, True)
            totals["fp32"] += _pass_seconds(model, ids, False)
    finally:
        model.train(was_training)
    speeds = {mode: round(passes * length / seconds, 1) for mode, seconds in totals.items()}
    return PrecisionChoice(bf16=speeds["bf16"] > speeds["fp32"], tokens_per_second=speeds,
                           seconds=round(time.perf_counter() - began, 3))


def measured_if_auto(values: dict[str, Any], model: Any) -> PrecisionChoice | None:
    """``choose_bf16(model)`` when the trainer arguments ``values`` say ``bf16: auto``, else ``None``."""
    return choose_bf16(model) if values.get("bf16") == AUTO else None


def settle_bf16(values: dict[str, Any], precision: PrecisionChoice | None) -> dict[str, Any]:
    """Trainer arguments ``values`` with ``bf16: auto`` replaced by ``precision``'s choice, or left
    out when nothing was measured (then the caller's default applies: bf16 on a GPU, fp32 on a
    CPU). Any other ``bf16`` is kept as written."""
    if values.get("bf16") != AUTO:
        return values
    settled = {k: v for k, v in values.items() if k != "bf16"}
    if precision is not None:
        settled["bf16"] = precision.bf16
    return settled
