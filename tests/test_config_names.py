"""Configured names that a registry resolves are checked when the config is loaded: a typo is
a one-line ``ConfigError`` naming the field (CLI exit 2, nothing written), never a ``KeyError``
in the middle of a batch."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from trajforge.config import load_config
from trajforge.errors import ConfigError
from trajforge.verifiers.checks import CHECKS


def test_an_unknown_check_fails_at_load_naming_the_field_and_the_known_ones() -> None:
    with pytest.raises(ConfigError) as raised:
        load_config(None, {"verification.checks": ["final_state", "final_stat"]})
    assert raised.value.field == "verification.checks"
    assert str(raised.value) == ("verification.checks: unknown check 'final_stat'; known: "
                                 + ", ".join(sorted(CHECKS)))
    assert "\n" not in str(raised.value)


def test_an_unknown_check_in_a_config_file_fails_at_load(tmp_path: Path) -> None:
    path = tmp_path / "run.yaml"
    path.write_text("verification:\n  checks: [policy, polcy]\n")
    with pytest.raises(ConfigError, match=r"^verification\.checks: unknown check 'polcy'; known: "):
        load_config(path, {"store.out": str(tmp_path / "out")})


@pytest.mark.parametrize("checks", [None, [], sorted(CHECKS), ["policy", "final_state"]])
def test_known_checks_load_as_given(checks: list[str] | None, tmp_path: Path) -> None:
    config = load_config(None, {"verification.checks": checks, "store.out": str(tmp_path / "out")})
    assert config.verification.checks == (None if checks is None else tuple(checks))


def test_the_cli_refuses_an_unknown_check_with_one_line_and_exit_2(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "trajforge.cli", "build", "--set", "verification.checks=[final_stat]",
         "--out", str(out), "--quiet"],
        cwd=tmp_path, env={**os.environ, "COLUMNS": "80"}, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: verification.checks: unknown check 'final_stat'; known: ")
    assert sorted(p.name for p in tmp_path.iterdir()) == [], "a refused build created files"


def test_a_flow_given_an_unknown_check_fails_before_any_batch(tmp_path, prefect_api) -> None:
    """The build flow's parameters (as a deployment passes them) are checked as a config file is."""
    from trajforge.flows.build import build_dataset

    config = {"store": {"out": str(tmp_path / "out")}, "generation": {"n_blueprints": 4},
              "verification": {"checks": ["final_stat"]}}
    with pytest.raises(ConfigError, match="verification.checks: unknown check 'final_stat'"):
        build_dataset(config=config)
    assert not (tmp_path / "out").exists()
