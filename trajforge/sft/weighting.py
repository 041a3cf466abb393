"""``after_tool_weight``: a heavier loss on the agent's turns that read a tool result.

Most of what an agent writes is cheap to predict once learnt: greetings, the fixed parts of a
confirmation, the JSON around a call. What decides an episode is the turn right after a tool
answered: which act follows the read (ask for a detail, confirm, refuse, report), which call
comes next, what value it copies. In a whole conversation those tokens are a small share of the
loss. ``after_tool_weight: w`` multiplies the loss of every trained token of an assistant
message that directly follows a tool message by ``w`` (the others keep 1); the loss is the
weighted mean over the trained tokens, so its scale stays that of the unweighted loss.
Evaluation losses stay unweighted, comparable between runs with and without it.

A message "follows a tool message" when the role marker before its ``<|assistant|>`` is
``<|tool|>``: the built-in models' chat template (``trajforge.sft.tiny``) has such markers. A
model whose tokenizer has none cannot use the option; ``role_markers`` says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from trajforge.errors import ConfigError

if TYPE_CHECKING:
    import torch

ROLE_MARKERS = ("<|system|>", "<|user|>", "<|assistant|>", "<|tool|>")
IGNORE = -100


@dataclass(frozen=True)
class RoleMarkers:
    """Token ids of the chat template's role markers."""

    roles: tuple[int, ...]
    assistant: int
    tool: int


def role_markers(tokenizer: Any, source: str) -> RoleMarkers:
    """The role markers of ``tokenizer``, or a ``ConfigError`` naming ``source`` when it has none."""
    ids = {}
    for token in ROLE_MARKERS:
        found = tokenizer.convert_tokens_to_ids(token)
        if not isinstance(found, int) or found == tokenizer.unk_token_id:
            raise ConfigError("after_tool_weight", f"needs the chat template's {token} marker, which the tokenizer "
                                                   f"of '{source}' does not have (use --model tiny or minilm)")
        ids[token] = found
    return RoleMarkers(tuple(ids.values()), ids["<|assistant|>"], ids["<|tool|>"])


def after_tool_weights(input_ids: torch.Tensor, labels: torch.Tensor, markers: RoleMarkers,
                       weight: float) -> torch.Tensor:
    """Per-token weights shaped like ``labels``: ``weight`` at trained positions of an assistant
    message whose previous message is a tool's, 1 at other trained positions, 0 where the label
    is ignored."""
    import torch

    is_role = torch.isin(input_ids, torch.tensor(markers.roles, device=input_ids.device))
    positions = torch.arange(input_ids.size(-1), device=input_ids.device).expand_as(input_ids)
    # for each position, where the latest role marker at or before it is (-1: none yet)
    latest = torch.where(is_role, positions, torch.full_like(positions, -1)).cummax(dim=-1).values
    # for each role marker, the token of the marker before it (-1: the first)
    marker_token = torch.where(is_role, input_ids, torch.full_like(input_ids, -1))
    previous_marker = torch.full_like(input_ids, -1)
    previous_marker[..., 1:] = torch.gather(marker_token, -1, latest[..., :-1].clamp(min=0))
    previous_marker[..., 1:] = torch.where(latest[..., :-1] >= 0, previous_marker[..., 1:], -1)
    # the marker before the message a position belongs to
    before_message = torch.gather(previous_marker, -1, latest.clamp(min=0))
    in_assistant = torch.gather(input_ids, -1, latest.clamp(min=0)) == markers.assistant
    after_tool = in_assistant & (latest >= 0) & (before_message == markers.tool)
    trained = labels != IGNORE
    ones = trained.to(torch.float32)
    return torch.where(after_tool & trained, ones * weight, ones)
