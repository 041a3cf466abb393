"""A tiny tool-aware tokenizer and model, built locally (no hub downloads) for the TRL tests.

They are ``trajforge.sft.tiny``'s (byte-level BPE trained on the export's own text, a chat
template whose assistant messages sit in ``{% generation %}`` markers, which TRL's
``assistant_only_loss`` needs), with one change for these tests: tools render as their full
JSON schema rather than the tiny model's one-line summary, so a test can check that every
schema reaches the prompt.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from trajforge.sft.tiny import CHAT_TEMPLATE as TINY_TEMPLATE
from trajforge.sft.tiny import TinyModelConfig, build_tiny_model, train_tokenizer

_COMPACT_TOOLS = TINY_TEMPLATE[TINY_TEMPLATE.index("{%- if tools %}"):TINY_TEMPLATE.index("<|end|>{%- endif %}")]
CHAT_TEMPLATE = TINY_TEMPLATE.replace(
    _COMPACT_TOOLS, "{%- if tools %}\n# Tools\n{%- for tool in tools %}\n{{ tool | tojson }}{%- endfor %}{% endif %}")


def assistant_text(message: dict[str, Any]) -> str:
    """What the template renders inside an assistant message's generation span."""
    text = message.get("content") or ""
    for call in message.get("tool_calls") or []:
        body = {"name": call["function"]["name"], "arguments": call["function"]["arguments"]}
        text += "<tool_call>" + json.dumps(body, ensure_ascii=False) + "</tool_call>"
    return text + "<|end|>"


def build_tokenizer(texts: Iterable[str], vocab_size: int = 800) -> Any:
    tokenizer = train_tokenizer(texts, vocab_size)
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def tiny_llama(tokenizer: Any) -> Any:
    return build_tiny_model(tokenizer, TinyModelConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                                       num_attention_heads=2, num_key_value_heads=2,
                                                       max_position_embeddings=8192))
