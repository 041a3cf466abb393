"""The features a message is scored on: word uni/bi-grams with negation and contrast marking,
the opening and the last sentence, punctuation cues and character trigrams (for typos).

Identifiers, amounts and e-mail addresses are replaced by a class token first, so that a
confirmation request for ``#W1234567`` and one for "your most recent order" share features.
"""

from __future__ import annotations

import re

_EMAIL = re.compile(r"\S+@\S+\.\w+")
_ID = re.compile(r"#?\b[a-z]?\d{4,}\b|#\w+")
_MONEY = re.compile(r"\$\s?\d[\d,]*(?:\.\d+)?")
_TOKEN = re.compile(r"[a-z]+(?:'[a-z]+)?|\d+|\.\.\.|[?!.,;:\-]")
_SENTENCE_END = {".", "?", "!", ";", "...", "-", ":"}
_NEGATORS = {"no", "not", "never", "nope", "nah", "dont", "don't", "without", "nothing", "neither", "nor"}
_CONTRAST = {"but", "actually", "wait", "though", "however", "instead", "rather", "hold", "hang", "scratch",
             "hmm", "except", "unless", "only", "although"}


def tokens(text: str) -> list[str]:
    low = text.lower().replace("\u2019", "'").replace("\u2014", " - ").replace("\u2013", " - ")
    low = _EMAIL.sub(" zzemail ", low)
    low = _MONEY.sub(" zzmoney ", low)
    low = _ID.sub(" zzid ", low)
    return _TOKEN.findall(low)


def features(text: str) -> list[str]:
    """The (distinct, sorted) feature names of a message; empty for an empty message."""
    toks = tokens(text)
    if not toks:
        return []
    out: set[str] = set()
    negated = contrasted = False
    words: list[str] = []
    sentences: list[list[str]] = [[]]
    for t in toks:
        if t in _SENTENCE_END or t in {",", "!"}:
            negated = False
            if t in _SENTENCE_END:
                sentences.append([])
            continue
        mark = ("N_" if negated else "") + ("C_" if contrasted else "")
        out.add("w:" + mark + t)
        out.add("w:" + t)
        words.append(t)
        sentences[-1].append(t)
        if t in _NEGATORS or t.endswith("n't"):
            negated = True
        if t in _CONTRAST:
            contrasted = True
    seq = ["<s>", *toks, "</s>"]
    for a, b in zip(seq, seq[1:], strict=False):
        out.add(f"b:{a}_{b}")
    for a, b, c in zip(seq, seq[1:], seq[2:], strict=False):
        out.add(f"t:{a}_{b}_{c}")
    sentences = [s for s in sentences if s]
    if sentences:
        first, last = sentences[0], sentences[-1]
        out.add("f:" + first[0])
        out.add("f2:" + "_".join(first[:2]))
        for t in last:
            out.add("l:" + t)
        out.add("l2:" + "_".join(last[:2]))
        out.add(f"nsent:{min(len(sentences), 4)}")
    out.add(f"len:{min(len(words) // 3, 8)}")
    last_punct = next((t for t in reversed(toks) if t in _SENTENCE_END or t in {",", "!"}), "")
    out.add("end:" + (toks[-1] if toks[-1] in _SENTENCE_END or toks[-1] == "!" else "word"))
    out.add("lastp:" + last_punct)
    if "?" in toks:
        out.add("q")
    if contrasted:
        out.add("contrast")
    for w in words:
        padded = f"<{w}>"
        for i in range(len(padded) - 2):
            out.add("c:" + padded[i:i + 3])
    return sorted(out)
