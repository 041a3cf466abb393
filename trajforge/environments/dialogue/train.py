"""Trains the dialogue-act models on ``banks/train.jsonl`` and writes ``weights.json``.

    python -m trajforge.environments.dialogue.train            # rewrite the shipped weights
    python -m trajforge.environments.dialogue.train --dev      # score a held-out fifth (tuning)

A multiclass averaged perceptron with a margin (an update also when the true label wins by no
more than ``MARGIN``): integer updates in a seeded order, so the weights (stored
as integers) are byte-identical on every machine and Python version.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from trajforge.environments.dialogue.features import features

LABELS = {"agent": ("confirm_request", "anything_else", "other"),
          "user": ("consent", "non_consent", "closing", "other")}
EPOCHS = 12
SEED = 20240515
MARGIN = 20  # update also when the true label wins by no more than this (integer score units)
HERE = Path(__file__).resolve().parent


def read_bank(name: str) -> list[dict[str, str]]:
    text = resources.files("trajforge.environments.dialogue").joinpath("banks", name).read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def train_role(examples: Sequence[tuple[str, str]], labels: Sequence[str], role: str, epochs: int = EPOCHS,
               seed: int = SEED, margin: int | None = None) -> dict[str, Any]:
    """Averaged perceptron over ``(text, label)``; returns the JSON-ready model."""
    index = {label: i for i, label in enumerate(labels)}
    data = [(features(t, role), index[y]) for t, y in examples]
    n = len(labels)
    w: dict[str, list[int]] = {}
    u: dict[str, list[int]] = {}  # the sum of update * time, for the averaging trick
    rng = random.Random(seed)
    order = list(range(len(data)))
    c = 1
    margin = MARGIN if margin is None else margin
    for _ in range(epochs):
        rng.shuffle(order)
        for k in order:
            feats, y = data[k]
            scores = [0] * n
            for f in feats:
                wf = w.get(f)
                if wf is not None:
                    for i in range(n):
                        scores[i] += wf[i]
            guess = max((i for i in range(n) if i != y), key=lambda i: (scores[i], -i))
            if scores[y] - scores[guess] <= margin:
                for f in feats:
                    wf = w.setdefault(f, [0] * n)
                    uf = u.setdefault(f, [0] * n)
                    wf[y] += 1
                    wf[guess] -= 1
                    uf[y] += c
                    uf[guess] -= c
            c += 1
    # averaged weight = w - u / c; stored as c * w - u (integers), scale c
    weights = {}
    for f in sorted(w):
        avg = [c * w[f][i] - u[f][i] for i in range(n)]
        if any(avg):
            weights[f] = avg
    return {"labels": list(labels), "role": role, "scale": c, "weights": weights}


def examples(rows: Sequence[dict[str, str]], role: str) -> list[tuple[str, str]]:
    return [(r["text"], r["label"]) for r in rows if r["role"] == role and r["label"] in LABELS[role]]


def train_all(rows: Sequence[dict[str, str]]) -> dict[str, Any]:
    return {"format": 1, "trained_on": "banks/train.jsonl", "epochs": EPOCHS, "seed": SEED,
            **{role: train_role(examples(rows, role), LABELS[role], role) for role in LABELS}}


def dump(model: dict[str, Any]) -> str:
    return json.dumps(model, sort_keys=True, separators=(",", ":")) + "\n"


def is_dev(text: str) -> bool:
    """A fixed fifth of the training bank, held out by ``--dev``."""
    return hashlib.sha256(text.encode()).digest()[0] % 5 == 0


def _dev_report(rows: list[dict[str, str]]) -> None:
    from trajforge.environments.dialogue.model import LinearModel

    fit = [r for r in rows if not is_dev(r["text"])]
    dev = [r for r in rows if is_dev(r["text"])]
    for role in LABELS:
        model = LinearModel.from_json(train_role(examples(fit, role), LABELS[role], role))
        held = examples(dev, role)
        wrong = [(t, y, model.predict(t)[0]) for t, y in held if model.predict(t)[0] != y]
        print(f"{role}: dev {len(held) - len(wrong)}/{len(held)} right")
        for t, y, p in wrong:
            print(f"   {y} -> {p}: {t}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Train the dialogue-act models.")
    parser.add_argument("--dev", action="store_true", help="hold out a fifth and report on it")
    parser.add_argument("--out", type=Path, default=HERE / "weights.json")
    args = parser.parse_args(argv)
    rows = read_bank("train.jsonl")
    if args.dev:
        _dev_report(rows)
        return 0
    args.out.write_text(dump(train_all(rows)))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
