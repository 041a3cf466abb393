"""A tiny tool-aware tokenizer and model, built locally (no hub downloads) for the TRL tests.

The tokenizer is a byte-level BPE trained on the export's own text with ``tokenizers``; its chat
template renders ``tools`` and tool calls and wraps every assistant message (content, calls and
the end-of-turn token) in ``{% generation %}`` markers, which is what TRL's
``assistant_only_loss`` needs.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

SPECIAL = ["<|pad|>", "<|system|>", "<|user|>", "<|assistant|>", "<|tool|>", "<|end|>"]

CHAT_TEMPLATE = (
    "{%- if messages[0].role == 'system' or tools %}<|system|>"
    "{%- if messages[0].role == 'system' %}{{ messages[0].content }}{% endif %}"
    "{%- if tools %}\n# Tools\n{%- for tool in tools %}\n{{ tool | tojson }}{%- endfor %}{% endif %}"
    "<|end|>{%- endif %}"
    "{%- for message in messages %}"
    "{%- if message.role == 'assistant' %}<|assistant|>"
    "{%- generation %}"
    "{%- if message.content %}{{ message.content }}{% endif %}"
    "{%- for call in message.tool_calls or [] %}"
    "<tool_call>{{ {'name': call.function.name, 'arguments': call.function.arguments} | tojson }}</tool_call>"
    "{%- endfor %}<|end|>"
    "{%- endgeneration %}"
    "{%- elif message.role == 'tool' %}<|tool|>{{ message.content }}<|end|>"
    "{%- elif message.role == 'user' %}<|user|>{{ message.content }}<|end|>"
    "{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}<|assistant|>{% endif %}"
)


def assistant_text(message: dict[str, Any]) -> str:
    """What the template renders inside an assistant message's generation span."""
    text = message.get("content") or ""
    for call in message.get("tool_calls") or []:
        body = {"name": call["function"]["name"], "arguments": call["function"]["arguments"]}
        text += "<tool_call>" + json.dumps(body, ensure_ascii=False) + "</tool_call>"
    return text + "<|end|>"


def build_tokenizer(texts: Iterable[str], vocab_size: int = 800) -> Any:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    core.train_from_iterator(texts, trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, pad_token="<|pad|>", eos_token="<|end|>")
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def tiny_llama(tokenizer: Any) -> Any:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64,
                         num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2,
                         max_position_embeddings=8192, pad_token_id=tokenizer.pad_token_id,
                         eos_token_id=tokenizer.eos_token_id, bos_token_id=None)
    return LlamaForCausalLM(config)
