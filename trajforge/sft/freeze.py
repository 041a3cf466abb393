"""``trainable_layers: N``: train only the last N transformer blocks (freeze tuning).

Why: on a CPU the backward pass costs about twice the forward, through every block down to the
lowest one that trains. With the embeddings and the lower blocks frozen, the backward stops at
the lowest trained block and the optimizer holds a fraction of the weights. For SmolLM2-135M (30
blocks) on the 2-core CPU, a training pass with its last 10 blocks trained ran 1.96 times as many
tokens per second as with all 30, side by side (``benchmarks/results/freeze_speed.md``). What
pretraining put in the lower blocks (reading, copying) is kept as it is; the upper blocks learn
the task. LLaMA-Factory calls this freeze tuning; it needs no extra library, unlike LoRA.

What trains: the parameters of the last N blocks and every parameter that comes after the
blocks in the model's order (a final norm, an untied LM head). The input embeddings, position
embeddings and the blocks below are frozen, and so is an LM head tied to the input embeddings.
The blocks are the model's ``nn.ModuleList`` with ``config.num_hidden_layers`` entries, which
Llama-, BERT- and GPT-style models all have.
"""

from __future__ import annotations

from typing import Any

from trajforge.errors import ConfigError


def transformer_blocks(model: Any) -> tuple[str, Any]:
    """(name, module list) of the model's transformer blocks."""
    from torch import nn

    layers = getattr(model.config, "num_hidden_layers", None)
    for name, module in model.named_modules():
        if isinstance(module, nn.ModuleList) and len(module) == layers:
            return name, module
    raise ConfigError("trainable_layers", f"found no list of {layers} transformer blocks in {type(model).__name__}")


def freeze_lower_layers(model: Any, trainable: int) -> dict[str, int]:
    """Freeze all but the last ``trainable`` blocks and what follows them; returns the counts of
    trainable and frozen parameters."""
    _, blocks = transformer_blocks(model)
    if trainable > len(blocks):
        raise ConfigError("trainable_layers", f"is {trainable}, but the model has {len(blocks)} blocks")
    kept = {id(p) for block in list(blocks)[len(blocks) - trainable:] for p in block.parameters()}
    inside = {id(p) for p in blocks.parameters()}
    tied = {id(p) for p in model.get_input_embeddings().parameters()}
    past_blocks = False
    for param in model.parameters():  # the model's order: embeddings, blocks, what follows
        past_blocks = past_blocks or id(param) in inside
        head = past_blocks and id(param) not in inside and id(param) not in tied
        param.requires_grad_(id(param) in kept or head)
    counts = {"trainable": 0, "frozen": 0}
    for param in model.parameters():
        counts["trainable" if param.requires_grad else "frozen"] += param.numel()
    return counts
