"""Config files and ``--set`` values read YAML's scalars as a user writes them on a command line
(YAML 1.2's core schema): ``no`` is a string, ``3e-3`` a float, only true/false booleans."""

from __future__ import annotations

from pathlib import Path

import pytest

from trajforge.config import parse_override, read_yaml
from trajforge.sft.train import load_train_config


@pytest.mark.parametrize(("text", "value"), [
    ("k=no", "no"), ("k=yes", "yes"), ("k=off", "off"), ("k=true", True), ("k=False", False),
    ("k=3e-3", 0.003), ("k=-2.5E-3", -0.0025), ("k=1.5", 1.5), ("k=.5", 0.5), ("k=3", 3),
    ("k=null", None), ("k=[a, no, 2e2]", ["a", "no", 200.0]), ("k=hello world", "hello world"),
    ("k={a: 1", "{a: 1"),  # not YAML: kept as typed
])
def test_override_values(text: str, value: object) -> None:
    assert parse_override(text) == ("k", value)


def test_a_config_file_reads_the_same_scalars(tmp_path: Path) -> None:
    assert read_yaml("a: no\nb: 5e-4\nc: on\nd: true\n") == {"a": "no", "b": 0.0005, "c": "on", "d": True}
    config = tmp_path / "sft.yaml"
    config.write_text("model: tiny\nsft:\n  eval_strategy: no\n  learning_rate: 3e-3\n")
    loaded = load_train_config(config, dict([parse_override("sft.save_strategy=no")]))
    assert loaded.sft == {"eval_strategy": "no", "learning_rate": 0.003, "save_strategy": "no"}
