"""Prefix caching for ``hf:`` generation: an episode's next prompt starts with its last one.

Each agent turn renders the whole conversation again, so without a cache a turn pays the
forward pass over everything said before it (on a CPU, most of an evaluation's time). A
``PrefixCache`` keeps the keys and values of recent sequences (prompt and completion, as
generated) and, for a new prompt, finds the stored sequence with the longest common token
prefix: those positions are taken from the cache and only the rest is computed. Keys and
values of a token depend only on the tokens before it and its position, and a reused prefix
is the same tokens at the same positions, so the result is the computation without a cache
(up to floating-point order, as with any change of batch shape).

A batch mixes episodes whose reusable prefixes differ in length: row r's cached part is
left-padded to the longest (masked out), then its new tokens follow, left-padded to the
longest new part (masked out too). ``generate`` takes position ids from the attention mask's
running sum, so each row's tokens keep their own positions 0, 1, ... whatever the padding.

Entries are evicted least recently used first. A prompt that reuses the whole prompt of an
entry continues that conversation, and its sequence replaces the entry, so a running evaluation
holds about one entry per episode; a prompt that shares only the start (the template's header,
another episode) adds an entry of its own.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any


@dataclass
class CachedSequence:
    tokens: list[int]  # the tokens whose keys and values are stored, in order
    layers: list[tuple[Any, Any]]  # per layer: keys and values, (heads, len(tokens), head_dim)
    prompt_length: int  # the tokens of the prompt it was generated from (the rest: its completion)


def entries_for(batch_size: int) -> int:
    """Entries for ``batch_size`` episodes in flight: each keeps its latest sequence, and as many
    again for prompts that share only a start."""
    return 2 * batch_size


def common_prefix(a: list[int], b: list[int]) -> int:
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


class PrefixCache:
    """The keys and values of up to ``max_entries`` recent sequences (see the module note)."""

    def __init__(self, max_entries: int) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[int, CachedSequence] = OrderedDict()
        self._next = 0
        self.reused_tokens = 0
        self.computed_tokens = 0

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        """Forget every entry (after the weights change, stored keys and values are stale)."""
        self._entries.clear()

    def match(self, ids: list[int]) -> tuple[int | None, int]:
        """(entry key, reusable length) for a prompt: the longest common prefix with a stored
        sequence, leaving at least the prompt's last token to compute (its logits are needed)."""
        best, length = None, 0
        for key, entry in self._entries.items():
            n = min(common_prefix(entry.tokens, ids), len(ids) - 1)
            if n > length:
                best, length = key, n
        if best is not None:
            self._entries.move_to_end(best)
        return best, length

    def entry(self, key: int) -> CachedSequence:
        return self._entries[key]

    def store(self, sequence: CachedSequence, replaces: int | None = None) -> None:
        if replaces is not None:
            self._entries.pop(replaces, None)
        self._entries[self._next] = sequence
        self._next += 1
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)


def generate_with_prefix_cache(model: Any, cache: PrefixCache, prompts: list[list[int]], pad_id: int,
                               end_ids: list[int], generate_kwargs: dict[str, Any],
                               bf16: bool = False) -> list[list[int]]:
    """Generate a continuation of each prompt (token ids), left-padded together, reusing and then
    storing cached prefixes (a cache of 0 entries: neither, plain batched generation); returns the
    new tokens of each row (up to the first end token, included). Without gradients, and under
    bfloat16 autocast when ``bf16`` (the weights stay as they are)."""
    import torch
    from transformers import DynamicCache

    matches = [cache.match(ids) for ids in prompts]
    # a row that reuses an entry's whole prompt continues that conversation: its sequence replaces it
    replaces = [key if key is not None and n >= cache.entry(key).prompt_length else None for key, n in matches]
    width_cached = max(n for _, n in matches)
    width_new = max(len(ids) - n for ids, (_, n) in zip(prompts, matches, strict=True))
    rows = len(prompts)
    input_ids = torch.full((rows, width_cached + width_new), pad_id, dtype=torch.long)
    mask = torch.zeros((rows, width_cached + width_new), dtype=torch.long)
    for r, (ids, (_, n)) in enumerate(zip(prompts, matches, strict=True)):
        input_ids[r, width_cached - n:width_cached] = torch.tensor(ids[:n], dtype=torch.long)
        mask[r, width_cached - n:width_cached] = 1
        new = ids[n:]
        input_ids[r, input_ids.shape[1] - len(new):] = torch.tensor(new, dtype=torch.long)
        mask[r, input_ids.shape[1] - len(new):] = 1
    kwargs = dict(generate_kwargs)
    if width_cached:
        layers = []
        first = next(cache.entry(k) for k, n in matches if k is not None and n)
        for layer, (k0, v0) in enumerate(first.layers):
            keys = k0.new_zeros((rows, k0.shape[0], width_cached, k0.shape[-1]))
            values = v0.new_zeros((rows, v0.shape[0], width_cached, v0.shape[-1]))
            for r, (key, n) in enumerate(matches):
                if key is not None and n:
                    k, v = cache.entry(key).layers[layer]
                    keys[r, :, width_cached - n:] = k[:, :n]
                    values[r, :, width_cached - n:] = v[:, :n]
            layers.append((keys, values))
        kwargs["cache"] = DynamicCache(layers)
    cache.reused_tokens += sum(n for _, n in matches)
    cache.computed_tokens += sum(len(ids) - n for ids, (_, n) in zip(prompts, matches, strict=True))
    with torch.no_grad(), torch.autocast(model.device.type, dtype=torch.bfloat16, enabled=bf16):
        output = model.generate(input_ids=input_ids.to(model.device), attention_mask=mask.to(model.device),
                                return_dict_in_generate=True, **kwargs)
    sequences = output.sequences.cpu()
    start = input_ids.shape[1]
    generated = [sequences[r, start:].tolist() for r in range(rows)]
    results = []
    for row in generated:
        ends = [i for i, t in enumerate(row) if t in end_ids]
        results.append(row[:ends[0] + 1] if ends else row)
    if not cache.max_entries:
        return results
    stored: Any = getattr(output, "cache", None)
    kv: list[tuple[Any, Any]] = [(getattr(layer, "keys", None), getattr(layer, "values", None))
                                 for layer in getattr(stored, "layers", ())]
    length = kv[0][0].shape[-2] if kv and kv[0][0] is not None else 0  # all positions but the last token's
    if not length or any(k is None or k.shape[-2] != length for k, _ in kv):
        return results  # no cache, or one that is not every position of every layer (a sliding window)
    for r, kept in enumerate(results):
        real = torch.cat([mask[r], torch.ones(len(kept), dtype=torch.long),
                          torch.zeros(len(generated[r]) - len(kept), dtype=torch.long)])[:length]
        positions = real.nonzero().squeeze(-1)
        tokens = sequences[r, :length][positions].tolist()
        on_device = positions.to(kv[0][0].device)
        layers_r = [(k[r][:, on_device].clone(), v[r][:, on_device].clone()) for k, v in kv]
        cache.store(CachedSequence(tokens, layers_r, len(prompts[r])), replaces=replaces[r])
    return results
