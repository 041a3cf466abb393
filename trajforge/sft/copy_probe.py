"""The copy and read probes: how well a policy copies into its calls the values the dialogue gave
it, and repeats in its words the values its tools showed.

An agent that cannot copy a value from the dialogue into a call (the user's email, the order id
a tool returned) fails every task at authentication, whatever its loss says. The probe reads it
teacher-forced, on held-out conversations: every string argument of an assistant tool call that
appears verbatim in an earlier user or tool message is a value to copy; the model reads the
reference conversation once, and at each of the value's tokens its most likely next token is
compared with the reference one. Reported: the share of values whose **first token** is right
(the token that needs copying most: after it, ``@example.com`` follows from the prior), the share
copied **exactly** (every token right) and the share of all value tokens right. A model that
copies scores near 1 on all three; one that writes values from its prior scores near chance on
the first token.

The **read probe** (``read_probe``) asks the same of what the policy *says*: every value of a
tool's output since the agent last spoke (a string leaf of its JSON, or a number as JSON writes
it) that the agent's next words repeat, and that no user message said, is a value to read (an
order's status, a price, a balance). A policy that states facts from its prior ("your order is
still pending", whatever the tool showed) scores low here while its copy probe is high.

The model must render with a prefix-stable chat template (a conversation's rendering extends
its prefixes'), which the built-in models' template and Hermes-style ones are; a call whose
rendering is not a prefix of the whole conversation's is skipped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any

MIN_VALUE_CHARS = 2


@dataclass(frozen=True)
class CopyProbe:
    conversations: int
    values: int
    first_token: float | None
    exact: float | None
    tokens: float | None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _arguments(call: Mapping[str, Any]) -> dict[str, Any]:
    args = call["function"]["arguments"]
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            return {}
    return args if isinstance(args, dict) else {}


def copied_values(messages: Sequence[Mapping[str, Any]], k: int) -> list[str]:
    """The string arguments of message ``k``'s calls that an earlier user or tool message holds."""
    seen = "\n".join(str(m.get("content") or "") for m in messages[:k] if m.get("role") in ("user", "tool"))
    return [v for call in messages[k].get("tool_calls") or [] for v in _arguments(call).values()
            if isinstance(v, str) and len(v) >= MIN_VALUE_CHARS and v in seen]


def value_spans(messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]],
                tokenizer: Any) -> tuple[str, list[tuple[int, int]]]:
    """The rendered conversation and the character spans of the values its calls copy."""
    return _turn_spans(messages, tools, tokenizer, copied_values, _in_arguments)


def _in_arguments(full: str, start: int, end: int, values: Sequence[str]) -> list[tuple[int, int]]:
    """Each value's span inside its JSON string in ``full[start:end]``, in order."""
    spans: list[tuple[int, int]] = []
    cursor = start
    for value in values:
        encoded = json.dumps(value, ensure_ascii=False)
        at = full.find(encoded, cursor, end)
        if at < 0:
            continue
        spans.append((at + 1, at + len(encoded) - 1))
        cursor = at + len(encoded)
    return spans


def _turn_spans(messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]], tokenizer: Any,
                values_of: Callable[[Sequence[Mapping[str, Any]], int], list[str]],
                place: Callable[[str, int, int, Sequence[str]], list[tuple[int, int]]]
                ) -> tuple[str, list[tuple[int, int]]]:
    """The rendered conversation and, for each agent turn, ``place``'s spans of ``values_of`` it
    in the turn's rendering (a turn whose rendering is not a prefix of the whole is skipped)."""
    full = tokenizer.apply_chat_template(list(messages), tools=list(tools), tokenize=False)
    spans: list[tuple[int, int]] = []
    for k, message in enumerate(messages):
        if message.get("role") != "assistant":
            continue
        values = values_of(messages, k)
        if not values:
            continue
        prefix = tokenizer.apply_chat_template(list(messages[:k]), tools=list(tools), tokenize=False,
                                               add_generation_prompt=True)
        turn = tokenizer.apply_chat_template(list(messages[:k + 1]), tools=list(tools), tokenize=False)
        if turn.startswith(prefix) and full.startswith(turn):
            spans += place(full, len(prefix), len(turn), values)
    return full, sorted(spans)


def _leaves(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v)
    elif isinstance(value, list):
        for v in value:
            yield from _leaves(v)
    elif isinstance(value, str):
        yield value
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield json.dumps(value)


@lru_cache(maxsize=4096)
def _whole(value: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w.])" + re.escape(value) + r"(?!\w|\.\d)")


def _mention(value: str, text: str, start: int = 0, end: int | None = None) -> int:
    """Where ``text[start:end]`` first says ``value`` as a whole (not inside a longer word or
    number: "10" is not said by "$10.50"); -1 if it does not."""
    match = _whole(value).search(text, start, len(text) if end is None else end)
    return match.start() if match else -1


def read_values(messages: Sequence[Mapping[str, Any]], k: int) -> list[str]:
    """The values of the tool outputs since the agent last spoke that message ``k``'s words
    repeat, none of them said by a user, longest first, none inside another."""
    said = "\n".join(str(m.get("content") or "") for m in messages[:k] if m.get("role") == "user")
    shown: set[str] = set()
    for m in reversed(messages[:k]):
        if m.get("role") == "assistant" and m.get("content"):
            break
        if m.get("role") == "tool":
            try:
                shown.update(_leaves(json.loads(str(m.get("content") or ""))))
            except ValueError:
                continue
    text = str(messages[k].get("content") or "")
    found = sorted((v for v in shown if len(v) >= MIN_VALUE_CHARS and _mention(v, text) >= 0
                    and _mention(v, said) < 0), key=len, reverse=True)
    return [v for i, v in enumerate(found) if not any(v in longer for longer in found[:i])]


def said_spans(messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]],
               tokenizer: Any) -> tuple[str, list[tuple[int, int]]]:
    """The rendered conversation and the character spans of the tool values its agent says."""
    return _turn_spans(messages, tools, tokenizer, read_values, _in_words)


def _in_words(full: str, start: int, end: int, values: Sequence[str]) -> list[tuple[int, int]]:
    """Each value's first mention as a whole in ``full[start:end]``."""
    return [(at, at + len(value)) for value in values if (at := _mention(value, full, start, end)) >= 0]


def _conversations(rows: Iterable[Mapping[str, Any]], limit: int) -> Iterator[tuple[list[Any], list[Any]]]:
    for i, row in enumerate(rows):
        if i >= limit:
            return
        messages = [json.loads(m) if isinstance(m, str) else m for m in row["messages"]]
        tools = [json.loads(t) if isinstance(t, str) else t for t in row["tools"]]
        yield messages, tools


def copy_probe(model: Any, tokenizer: Any, rows: Iterable[Mapping[str, Any]], limit: int = 32,
               max_tokens: int | None = None) -> CopyProbe:
    """Teacher-forced copy accuracy over the first ``limit`` ``sft`` rows (``messages`` + ``tools``)."""
    return _probe(model, tokenizer, rows, limit, max_tokens, value_spans)


def read_probe(model: Any, tokenizer: Any, rows: Iterable[Mapping[str, Any]], limit: int = 32,
               max_tokens: int | None = None) -> CopyProbe:
    """Teacher-forced accuracy on the tool values the agent's words repeat (see the module note)."""
    return _probe(model, tokenizer, rows, limit, max_tokens, said_spans)


Spans = Callable[[Sequence[Mapping[str, Any]], Sequence[Mapping[str, Any]], Any], tuple[str, list[tuple[int, int]]]]


def _probe(model: Any, tokenizer: Any, rows: Iterable[Mapping[str, Any]], limit: int,
           max_tokens: int | None, spans_of: Spans) -> CopyProbe:
    import torch

    max_tokens = max_tokens or int(getattr(model.config, "max_position_embeddings", 4096))
    conversations = values = first_ok = exact_ok = token_ok = token_n = 0
    was_training = model.training
    model.eval()
    for messages, tools in _conversations(rows, limit):
        text, spans = spans_of(messages, tools, tokenizer)
        if not spans:
            continue
        encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        ids, offsets = encoded["input_ids"][:max_tokens], encoded["offset_mapping"][:max_tokens]
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([ids], device=model.device)).logits[0]
        predicted = logits.argmax(-1).tolist()
        conversations += 1
        for start, end in spans:
            positions = [p for p, (a, b) in enumerate(offsets) if p > 0 and b > start and a < end]
            if not positions:
                continue
            hits = [predicted[p - 1] == ids[p] for p in positions]
            values += 1
            first_ok += hits[0]
            exact_ok += all(hits)
            token_ok += sum(hits)
            token_n += len(hits)
    if was_training:
        model.train()

    def share(n: int, of: int) -> float | None:
        return round(n / of, 4) if of else None

    return CopyProbe(conversations, values, share(first_ok, values), share(exact_ok, values),
                     share(token_ok, token_n))
