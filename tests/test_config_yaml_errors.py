"""A broken config file is one line naming the line of the file where the problem is."""

from __future__ import annotations

from pathlib import Path

import pytest

from trajforge.config import load_config
from trajforge.errors import ConfigError


@pytest.mark.parametrize(("text", "line", "says"), [
    ("generation:\n  n_blueprints: [1, 2\n", 2, "a flow sequence is never closed"),
    ("generation:\n  n_blueprints: 3\n  seed: \"abc\n", 3, "a quoted scalar is never closed"),
    ("generation:\n  n_blueprints: 3\n bad: : x\n", 3, "expected <block end>"),
    ("generation:\n  n_blueprints: {a: 1\n\n\n", 2, "a flow mapping is never closed"),
])
def test_a_yaml_error_names_a_line_of_the_file(tmp_path: Path, text: str, line: int, says: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    message = str(err.value)
    assert f"at line {line}:" in message and says in message, message
    assert line <= len(text.splitlines())
    assert "\n" not in message
