"""``after_tool_weight``: a heavier loss on the agent's turns that read a tool result.

Most of what an agent writes is cheap to predict once learnt: greetings, the fixed parts of a
confirmation, the JSON around a call. What decides an episode is the turn right after a tool
answered: which act follows the read (ask for a detail, confirm, refuse, report), which call
comes next, what value it copies. In a whole conversation those tokens are a small share of the
loss. ``after_tool_weight: w`` multiplies the loss of every trained token of an assistant
message that directly follows a tool message by ``w`` (the others keep 1); the loss is the
weighted mean over the trained tokens, so its scale stays that of the unweighted loss.
Evaluation losses stay unweighted, comparable between runs with and without it.

A message "follows a tool message" when the message before it is a tool's, read from the chat
template's role markers: the tiny template's role tokens (``<|assistant|>``, ``<|tool|>``: the
``tiny`` and ``minilm`` models) or ChatML's ``<|im_start|>`` followed by the role's name (the
``smollm2`` model, and many instruct models). A model whose tokenizer has neither cannot use the
option; ``role_markers`` says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from trajforge.errors import ConfigError
from trajforge.sft.tiny import CHATML_START, ROLES, TINY_MARKERS

if TYPE_CHECKING:
    import torch

IGNORE = -100


@dataclass(frozen=True)
class RoleMarkers:
    """Where messages start and which role each is: a message starts at a token of ``starts``;
    its role is told by the token ``offset`` places on (0: the marker names the role itself; 1:
    the first token of the role's name after ChatML's ``<|im_start|>``)."""

    starts: tuple[int, ...]
    assistant: int
    tool: int
    offset: int = 0


def _token(tokenizer: Any, token: str) -> int | None:
    found = tokenizer.convert_tokens_to_ids(token)
    return found if isinstance(found, int) and found != tokenizer.unk_token_id else None


def role_markers(tokenizer: Any, source: str) -> RoleMarkers:
    """The role markers of ``tokenizer``, or a ``ConfigError`` naming ``source`` when it has none."""
    ids = {role: _token(tokenizer, getattr(TINY_MARKERS, role)) for role in ROLES}
    if None not in ids.values():
        return RoleMarkers(tuple(int(i) for i in ids.values() if i is not None),
                           int(ids["assistant"] or 0), int(ids["tool"] or 0))
    start = _token(tokenizer, CHATML_START)
    if start is not None:
        # a role is told by the first token of its name, which must differ between the roles
        firsts = {role: (tokenizer.encode(role, add_special_tokens=False) or [-1])[0] for role in ROLES}
        if -1 not in firsts.values() and len(set(firsts.values())) == len(ROLES):
            return RoleMarkers((start,), firsts["assistant"], firsts["tool"], offset=1)
    raise ConfigError("after_tool_weight", f"needs role markers (<|assistant|> and <|tool|>, or ChatML's "
                                           f"<|im_start|>), which the tokenizer of '{source}' does not have")


def after_tool_weights(input_ids: torch.Tensor, labels: torch.Tensor, markers: RoleMarkers,
                       weight: float) -> torch.Tensor:
    """Per-token weights shaped like ``labels``: ``weight`` at trained positions of an assistant
    message whose previous message is a tool's, 1 at other trained positions, 0 where the label
    is ignored."""
    import torch

    is_role = torch.isin(input_ids, torch.tensor(markers.starts, device=input_ids.device))
    positions = torch.arange(input_ids.size(-1), device=input_ids.device).expand_as(input_ids)
    # for each position, where the latest role marker at or before it is (-1: none yet)
    latest = torch.where(is_role, positions, torch.full_like(positions, -1)).cummax(dim=-1).values
    # the token that names each message's role
    named = torch.gather(input_ids, -1, (positions + markers.offset).clamp(max=input_ids.size(-1) - 1))
    # for each role marker, the role of the message before it (-1: the first)
    marker_token = torch.where(is_role, named, torch.full_like(input_ids, -1))
    previous_marker = torch.full_like(input_ids, -1)
    before = latest[..., :-1]
    previous_marker[..., 1:] = torch.where(before >= 0, torch.gather(marker_token, -1, before.clamp(min=0)), -1)
    # the marker before the message a position belongs to
    before_message = torch.gather(previous_marker, -1, latest.clamp(min=0))
    in_assistant = torch.gather(named, -1, latest.clamp(min=0)) == markers.assistant
    after_tool = in_assistant & (latest >= 0) & (before_message == markers.tool)
    trained = labels != IGNORE
    ones = trained.to(torch.float32)
    return torch.where(after_tool & trained, ones * weight, ones)
