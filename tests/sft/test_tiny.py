"""The tiny model's pieces: the compact template renders tools and calls, wraps exactly the
assistant messages in generation spans, and ``parse_completion`` reads back what it wrote; the
model and tokenizer save and load like any Hugging Face model."""

from __future__ import annotations

import json

import pytest

from trajforge.schemas.messages import AssistantMessage
from trajforge.evaluation.blueprints import fresh_blueprints
from trajforge.evaluation.config import PlayConfig
from trajforge.evaluation.run import evaluate
from trajforge.sft.tiny import END_TOKEN, TinyModelConfig, build_tiny
from trajforge.simulation.episodes import scripted_agents
from trajforge.simulation.local_model import chat_messages, parse_completion

pytest.importorskip("transformers")
pytest.importorskip("tokenizers")
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def episodes():
    bps = fresh_blueprints(4, seed=99)
    result = evaluate(bps, scripted_agents, "oracle", PlayConfig(), "fresh:99")
    from trajforge.schemas.trajectory import Trajectory

    return [Trajectory.model_validate_json(r["trajectory"]) for r in result.rows]


@pytest.fixture(scope="module")
def tiny(episodes):
    rows = [{"messages": chat_messages(t.messages), "tools": [s.model_dump(mode="json") for s in t.tools]}
            for t in episodes]
    return build_tiny(rows, TinyModelConfig(vocab_size=600, hidden_size=16, intermediate_size=32,
                                            num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1)), rows


def test_generation_spans_parse_back_into_the_same_assistant_messages(episodes, tiny):
    (_, tokenizer), rows = tiny
    names = {t.function.name for t in episodes[0].tools}
    for trajectory, row in zip(episodes, rows):
        rendered = tokenizer.apply_chat_template(row["messages"], tools=row["tools"], tokenize=True,
                                                 return_dict=True, return_assistant_tokens_mask=True)
        ids, mask = rendered["input_ids"], rendered["assistant_masks"]
        spans, current = [], []
        for token, bit in zip(ids, mask):
            if bit:
                current.append(token)
            elif current:
                spans.append(current)
                current = []
        if current:
            spans.append(current)
        expected = [m for m in trajectory.messages if isinstance(m, AssistantMessage)]
        assert len(spans) == len(expected)
        for span, message in zip(spans, expected):
            text = tokenizer.decode(span)
            assert text.endswith(END_TOKEN)
            turn = parse_completion(text[: -len(END_TOKEN)], names, "c")
            assert turn.content == (message.content.strip() if message.content else None)
            assert [(c.name, c.parsed_arguments()) for c in turn.calls] == \
                   [(c.name, c.parsed_arguments()) for c in message.tool_calls]
            assert not turn.rejected
        # the tools are listed compactly, one line each, with their parameters
        prompt = tokenizer.decode(ids)
        assert "\nget_order_details(order_id): " in prompt


def test_the_tiny_model_saves_and_loads_like_any_hf_model(tiny, tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    (model, tokenizer), rows = tiny
    model.save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    loaded = AutoModelForCausalLM.from_pretrained(tmp_path)
    tok = AutoTokenizer.from_pretrained(tmp_path)
    assert tok.chat_template == tokenizer.chat_template and len(tok) == len(tokenizer)
    assert tok.eos_token == END_TOKEN and loaded.config.eos_token_id == tok.eos_token_id
    text = tok.apply_chat_template(rows[0]["messages"], tools=rows[0]["tools"], tokenize=False)
    assert tok(text)["input_ids"] == tokenizer(text)["input_ids"]
    assert all((a == b).all() for a, b in zip(model.state_dict().values(), loaded.state_dict().values()))


def test_the_dialogue_only_template_drops_the_system_block_and_keeps_the_spans(tiny):
    """``tiny.system_prompt: false``: no system message or tool list, the same dialogue, the same
    assistant spans, and one digit per token."""
    from trajforge.sft.tiny import chat_template

    (_, tokenizer), rows = tiny
    row = rows[0]
    full = tokenizer.apply_chat_template(row["messages"], tools=row["tools"], tokenize=False)
    tokenizer.chat_template = chat_template(system_prompt=False)
    try:
        short = tokenizer.apply_chat_template(row["messages"], tools=row["tools"], tokenize=False)
        mask = tokenizer.apply_chat_template(row["messages"], tools=row["tools"], tokenize=True, return_dict=True,
                                             return_assistant_tokens_mask=True)["assistant_masks"]
    finally:
        tokenizer.chat_template = chat_template(system_prompt=True)
    assert "<|system|>" not in short and "# Tools" not in short
    assert full.endswith(short) and short.startswith("<|user|>")
    assert sum(mask) > 0
    assert tokenizer.tokenize("95611") == ["9", "5", "6", "1", "1"]


def test_split_spaces_makes_a_word_the_same_token_in_prose_and_in_json():
    from trajforge.sft.tiny import train_tokenizer

    texts = ["My email is lena.sato916@example.com.", '{"email": "lena.sato916@example.com"}'] * 5
    text = 'My email is lena.sato916@example.com. {"email": "lena.sato916@example.com"}'
    glued = train_tokenizer(texts, 400).tokenize(text)
    assert "Ġlena" in glued and "lena" in glued  # two unrelated tokens for one name
    spaced = train_tokenizer(texts, 400, split_spaces=True)
    tokens = spaced.tokenize(text)
    assert "Ġlena" not in tokens and tokens.count("lena") == 2
    assert spaced.decode(spaced(text, add_special_tokens=False)["input_ids"]) == text


@pytest.mark.parametrize("bf16", [False, True])
def test_bf16_generation_runs_the_layers_in_bfloat16_and_keeps_the_weights(tiny, bf16):
    """``eval --bf16``: ``generate`` under bfloat16 autocast (the linear layers compute in bf16),
    the weights untouched; without it, float32 throughout."""
    import torch

    from trajforge.simulation.local_model import DecodingConfig, hf_generate_batch

    (model, tokenizer), rows = tiny
    seen: list[torch.dtype] = []
    layer = next(m for m in model.modules() if isinstance(m, torch.nn.Linear))
    hook = layer.register_forward_hook(lambda _m, _i, out: seen.append(out.dtype))
    prompt = tokenizer.apply_chat_template(rows[0]["messages"][:1], tools=rows[0]["tools"], tokenize=False,
                                           add_generation_prompt=True)
    try:
        texts = hf_generate_batch(model, tokenizer, DecodingConfig(max_new_tokens=4, bf16=bf16))([prompt, prompt])
    finally:
        hook.remove()
    assert len(texts) == 2 and texts[0] == texts[1]
    assert seen and set(seen) == {torch.bfloat16 if bf16 else torch.float32}
    assert all(p.dtype == torch.float32 for p in model.parameters())


def test_the_prefix_cache_plays_the_same_episodes_and_reuses_the_earlier_turns(tiny):
    """``eval --prefix-cache`` (the default): every turn after the first reuses the keys and values
    of the episode's earlier turns, and the episodes are the ones played without it, message by
    message (greedy, float32)."""
    import torch
    from transformers import AutoModelForCausalLM

    from trajforge.evaluation.policies import template_agents
    from trajforge.simulation.local_model import BatchedGenerator, DecodingConfig, context_length, hf_generate_batch
    from trajforge.simulation.prefix_cache import PrefixCache

    (built, tokenizer), _ = tiny
    torch.manual_seed(0)  # large random weights: every token's logits depend on the whole context
    config = built.config.__class__.from_dict({**built.config.to_dict(), "initializer_range": 0.5,
                                               "num_hidden_layers": 2})
    model = AutoModelForCausalLM.from_config(config).eval()
    blueprints = fresh_blueprints(3, seed=7)
    play = PlayConfig(trials=1, max_turns=3, max_steps_per_turn=2, concurrency=3)
    settings = DecodingConfig(max_new_tokens=12)
    played = {}
    for cache in (None, PrefixCache(6)):
        generate = hf_generate_batch(model, tokenizer, settings, cache)
        make_agent = template_agents("tiny", tokenizer, BatchedGenerator(generate, 3), context_length(model) - 12)
        result = evaluate(blueprints, make_agent, "tiny", play, "fresh:7")
        played[cache is None] = [json.loads(r["trajectory"])["messages"] for r in result.rows]
    assert played[True] == played[False] and len(played[True]) == 3
    assert sum(m["role"] == "assistant" for messages in played[True] for m in messages) >= 6
    assert cache is not None and cache.reused_tokens > cache.computed_tokens > 0
    assert 0 < len(cache) <= 6
