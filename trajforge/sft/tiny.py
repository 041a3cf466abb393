"""``--model tiny``: a small Llama-style model built from a config, with a byte-level BPE
tokenizer trained on the export's own text, so training and evaluation run offline on CPU.

The chat template is compact on purpose: a tool is rendered as one line, ``name(arg, ...):
description``, not its full JSON schema, so a tiny model spends its context on the dialogue.
Every assistant message (text, ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``
blocks, and the ``<|end|>`` token) sits inside ``{% generation %}`` markers, which is what TRL's
``assistant_only_loss`` needs. ``trajforge.simulation.local_model.parse_completion`` is the inverse of
how the template writes an assistant message. The result is saved with ``save_pretrained`` and
loads back with ``AutoModelForCausalLM`` / ``AutoTokenizer.from_pretrained``.

``tiny.system_prompt: false`` leaves the system message and the tool list out of the template
altogether. A model trained from scratch on one domain cannot read a policy; it learns the
policy and the tools from the demonstrations, and the system block is ~880 of a single-intent
conversation's ~2,000 tokens. Measured on CPU (benchmarks/results/sft_tiny_cpu-experiments.md,
run C): 60% more steps in 15 minutes, but lower format validity (71% against 86%) and no
copying of values either, so it is off by default.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

SPECIAL_TOKENS = ("<|pad|>", "<|system|>", "<|user|>", "<|assistant|>", "<|tool|>", "<|end|>")
END_TOKEN = "<|end|>"
PAD_TOKEN = "<|pad|>"
CALL_OPEN, CALL_CLOSE = "<tool_call>", "</tool_call>"

@dataclass(frozen=True)
class Markers:
    """How a chat template opens each role's message and ends it: the tiny template's own role
    tokens, or ChatML's (``<|im_start|>role``, ``<|im_end|>``) for a model pretrained on it."""

    system: str
    user: str
    assistant: str
    tool: str
    end: str  # ends every message; inside the assistant's generation span, so a model learns to stop
    after: str = ""  # written after ``end``, outside the span


ROLES = ("system", "user", "assistant", "tool")  # the fields of Markers that open a message, in order
CHATML_START = "<|im_start|>"  # ChatML opens a message with this token, then the role's name
TINY_MARKERS = Markers("<|system|>", "<|user|>", "<|assistant|>", "<|tool|>", END_TOKEN)
CHATML_MARKERS = Markers(f"{CHATML_START}system\n", f"{CHATML_START}user\n", f"{CHATML_START}assistant\n",
                         f"{CHATML_START}tool\n", "<|im_end|>", "\n")


def _literal(text: str) -> str:
    """``text`` in the template source: as it is, or, where it holds whitespace (which a ``{%-``
    tag after it would strip) or Jinja's characters, as an expression (a JSON string is a valid
    Jinja string literal)."""
    if not text or not any(c.isspace() or c in "{}%#" for c in text):
        return text
    return "{{ " + json.dumps(text) + " }}"


def chat_template(system_prompt: bool = True, markers: Markers = TINY_MARKERS) -> str:
    """The compact chat template (module docstring) with ``markers``; without ``system_prompt`` it
    renders the dialogue only (see ``TinyModelConfig.system_prompt``)."""
    m = {k: _literal(v) for k, v in vars(markers).items()}
    system = (
        "{%- if messages[0].role == 'system' or tools %}" + m["system"] +
        "{%- if messages[0].role == 'system' %}{{ messages[0].content }}{% endif %}"
        "{%- if tools %}{{ '\\n# Tools' }}"
        "{%- for tool in tools %}{%- set f = tool.function if tool.function is defined else tool %}{{ '\\n' }}"
        "{{ f.name }}({{ (f.parameters.properties if f.parameters is defined and f.parameters.properties "
        "is defined else {}) | join(', ') }}): {{ f.description | default('') }}"
        "{%- endfor %}{% endif %}" + m["end"] + m["after"] + "{%- endif %}"
    )
    dialogue = (
        "{%- for message in messages %}"
        "{%- if message.role == 'assistant' %}" + m["assistant"] +
        "{%- generation %}"
        "{%- if message.content %}{{ message.content }}{% endif %}"
        "{%- for call in message.tool_calls or [] %}"
        "<tool_call>{{ {'name': call.function.name, 'arguments': call.function.arguments} | tojson }}</tool_call>"
        "{%- endfor %}" + m["end"] +
        "{%- endgeneration %}" + m["after"] +
        "{%- elif message.role == 'tool' %}" + m["tool"] + "{{ message.content }}" + m["end"] + m["after"] +
        "{%- elif message.role == 'user' %}" + m["user"] + "{{ message.content }}" + m["end"] + m["after"] +
        "{%- endif %}"
        "{%- endfor %}"
        "{%- if add_generation_prompt %}" + m["assistant"] + "{% endif %}"
    )
    return system + dialogue if system_prompt else dialogue


CHAT_TEMPLATE = chat_template()


class TinyModelConfig(BaseModel):
    """Sizes of the tiny model and its tokenizer (``tiny.*`` in the train config)."""

    model_config = ConfigDict(extra="forbid")

    vocab_size: int = Field(4000, ge=300)
    hidden_size: int = Field(128, ge=8)
    intermediate_size: int = Field(384, ge=8)
    num_hidden_layers: int = Field(4, ge=1)
    num_attention_heads: int = Field(4, ge=1)
    num_key_value_heads: int = Field(2, ge=1)
    max_position_embeddings: int = Field(4096, ge=64)
    tokenizer_rows: int = Field(2000, ge=1, description="training rows the tokenizer learns from")
    split_digits: bool = Field(True, description="one token per digit, so ids copy digit by digit")
    system_prompt: bool = Field(True, description="render the system message and the tool list")
    split_spaces: bool = Field(False, description="a space is its own token, so a word is the same token "
                                                  "in prose and inside a JSON string")


def conversation_text(messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]) -> str:
    """The text the tokenizer learns from: what the template will render, roughly."""
    parts = []
    for tool in tools:
        f = tool.get("function", tool)
        parts.append(f"{f.get('name')}({', '.join((f.get('parameters') or {}).get('properties') or {})}):"
                     f" {f.get('description', '')}")
    for m in messages:
        if m.get("content"):
            parts.append(str(m["content"]))
        for call in m.get("tool_calls") or []:
            body = {"name": call["function"]["name"], "arguments": call["function"]["arguments"]}
            parts.append(CALL_OPEN + json.dumps(body, ensure_ascii=False) + CALL_CLOSE)
    return "\n".join(parts)


def train_tokenizer(texts: Iterable[str], vocab_size: int, split_digits: bool = True,
                    system_prompt: bool = True, split_spaces: bool = False) -> Any:
    """A byte-level BPE (no unknown tokens) with the chat's special tokens and the template.

    With ``split_digits`` every digit is its own token (as in Llama's tokenizer). A domain's ids
    (and postal codes, card numbers) are mostly digit strings the agent must copy
    from the dialogue into its calls; merged digit chunks split a new id in unpredictable places,
    single digits make copying the same small step for every id.

    With ``split_spaces`` a space is a token of its own. Byte-level BPE otherwise glues a word to
    the space before it: the user's ``My email is lena...`` has ``Ġlena`` where the call's
    ``{"email": "lena...`` has ``lena``, two unrelated tokens, so the first token of every value
    the agent copies from prose is a lookup the model must learn name by name. Conversations get
    about 30% longer. Off by default: in 15 CPU minutes it did not make the tiny model copy
    (run D of benchmarks/results/sft_tiny_cpu-experiments.md)."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.BPE())
    steps: list[pre_tokenizers.PreTokenizer] = []
    if split_spaces:
        steps.append(pre_tokenizers.Split(Regex(r"\s"), behavior="isolated"))
    if split_digits:
        steps.append(pre_tokenizers.Digits(individual_digits=True))
    steps.append(pre_tokenizers.ByteLevel(add_prefix_space=False))
    core.pre_tokenizer = pre_tokenizers.Sequence(steps) if len(steps) > 1 else steps[0]
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=list(SPECIAL_TOKENS),
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    core.train_from_iterator(texts, trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, pad_token=PAD_TOKEN, eos_token=END_TOKEN)
    tokenizer.chat_template = chat_template(system_prompt)
    return tokenizer


def build_tiny_model(tokenizer: Any, config: TinyModelConfig, seed: int = 0) -> Any:
    """A freshly initialised ``LlamaForCausalLM`` sized by ``config``."""
    import torch
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    llama = LlamaConfig(vocab_size=len(tokenizer), hidden_size=config.hidden_size,
                        intermediate_size=config.intermediate_size,
                        num_hidden_layers=config.num_hidden_layers,
                        num_attention_heads=config.num_attention_heads,
                        num_key_value_heads=config.num_key_value_heads,
                        max_position_embeddings=config.max_position_embeddings,
                        pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
                        bos_token_id=None, tie_word_embeddings=True)
    model = LlamaForCausalLM(llama)
    model.generation_config = GenerationConfig(eos_token_id=tokenizer.eos_token_id,
                                               pad_token_id=tokenizer.pad_token_id)
    return model


def build_tiny(rows: Iterable[Mapping[str, Any]], config: TinyModelConfig, seed: int = 0) -> tuple[Any, Any]:
    """(model, tokenizer) for the ``sft`` rows ``rows`` (``messages`` + ``tools``)."""
    texts = []
    for i, row in enumerate(rows):
        if i >= config.tokenizer_rows:
            break
        texts.append(conversation_text(row["messages"], row["tools"]))
    if not texts:
        raise ValueError("no training rows to learn a tokenizer from")
    tokenizer = train_tokenizer(texts, config.vocab_size, config.split_digits, config.system_prompt,
                                config.split_spaces)
    return build_tiny_model(tokenizer, config, seed), tokenizer
