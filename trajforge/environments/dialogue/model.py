"""A linear model over :mod:`features`: one weight vector per label, the label with the highest
sum wins. The weights (integers, from :mod:`train`) ship as ``weights.json`` next to this file."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from trajforge.environments.dialogue.features import features

WEIGHTS_FILE = "weights.json"


@dataclass(frozen=True)
class LinearModel:
    labels: tuple[str, ...]
    scale: float  # divides the integer weights into averaged-perceptron weights
    weights: dict[str, tuple[int, ...]]
    role: str = ""  # the role whose structural cues the features include

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LinearModel:
        return cls(tuple(data["labels"]), float(data["scale"]),
                   {f: tuple(w) for f, w in data["weights"].items()}, str(data.get("role", "")))

    def scores(self, feats: list[str]) -> list[float]:
        get = self.weights.get
        rows = [w for w in map(get, feats) if w is not None]
        if not rows:
            return [0.0] * len(self.labels)
        return [sum(column) / self.scale for column in zip(*rows, strict=True)]

    def predict(self, text: str) -> tuple[str, float]:
        """The best label and its softmax share of the scores."""
        s = self.scores(features(text, self.role))
        best = max(range(len(s)), key=lambda i: (s[i], -i))
        top = s[best]
        z = sum(math.exp(v - top) for v in s)
        return self.labels[best], 1.0 / z


@cache
def load_models() -> dict[str, LinearModel]:
    """The shipped models by role (``agent``, ``user``), read once."""
    text = resources.files("trajforge.environments.dialogue").joinpath(WEIGHTS_FILE).read_text()
    data = json.loads(text)
    return {role: LinearModel.from_json(data[role]) for role in ("agent", "user")}
