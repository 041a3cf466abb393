"""Broken domain plug-ins fail alone, with one line (DESIGN.md sections 3 and 7).

Each fake plug-in is a real installed distribution: a ``*.dist-info`` folder whose
``entry_points.txt`` registers it in the ``trajforge.domains`` group, on ``sys.path`` (in
process) or ``PYTHONPATH`` (a subprocess), so the registry finds it exactly as it finds retail.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from trajforge.cli import app
from trajforge.environments.registry import domain_names, load_domain, load_domain_class
from trajforge.environments.retail import RetailDomain
from trajforge.environments.validate import FROZEN_FIX, BrokenDomain

MODULE = "trajforge_fake_plugins"

PLUGINS = textwrap.dedent('''
    import random
    from typing import ClassVar

    from pydantic import BaseModel

    from trajforge.environments.base import Domain, State, ToolKind, Toolkit, tool
    from trajforge.schemas.base import Record


    class Note(Record):
        id: str
        text: str


    class NoteState(State):
        notes: dict[str, Note]


    class MutableNote(BaseModel):  # not frozen: a tool could change the template in place
        id: str
        text: str


    class MutableState(State):
        notes: dict[str, MutableNote]


    class NoteTools(Toolkit):
        state: NoteState

        @tool(ToolKind.read)
        def read_note(self, note_id: str) -> str:
            """Read a note.

            Args:
                note_id: The note's id.
            """
            return self.state.notes[note_id].text


    class UndocumentedTools(Toolkit):
        state: NoteState

        @tool(ToolKind.read)
        def read_note(self, note_id: str) -> str:
            return self.state.notes[note_id].text


    class UntypedTools(Toolkit):
        state: NoteState

        @tool(ToolKind.read)
        def read_note(self, note_id) -> str:
            """Read a note.

            Args:
                note_id: The note's id.
            """
            return self.state.notes[note_id].text


    class MutableTools(Toolkit):
        state: MutableState

        @tool(ToolKind.read)
        def read_note(self, note_id: str) -> str:
            """Read a note.

            Args:
                note_id: The note's id.
            """
            return self.state.notes[note_id].text


    class _Notes(Domain):
        policy_rules: ClassVar[dict[str, str]] = {}

        @classmethod
        def build_state(cls, rng: random.Random, size: int) -> State:
            return NoteState(notes={f"n{i}": Note(id=f"n{i}", text="hi") for i in range(size)})


    class GoodDomain(_Notes):
        name = "good_notes"
        toolkit_type = NoteTools
        policy = "Be kind."


    class NoDocDomain(_Notes):
        name = "nodoc"
        toolkit_type = UndocumentedTools
        policy = "Be kind."


    class NoTypeDomain(_Notes):
        name = "notype"
        toolkit_type = UntypedTools
        policy = "Be kind."


    class MutableDomain(_Notes):
        name = "mutable"
        toolkit_type = MutableTools
        policy = "Be kind."

        @classmethod
        def build_state(cls, rng: random.Random, size: int) -> State:
            return MutableState(notes={"n0": MutableNote(id="n0", text="hi")})


    class NoPolicyDomain(_Notes):  # declares no policy
        name = "nopolicy"
        toolkit_type = NoteTools
''')

# entry-point name -> class, and what its one line must say (beyond the domain and its source)
BROKEN = {
    "nodoc": ("NoDocDomain", ["tool UndocumentedTools.read_note has no docstring", "give it one"]),
    "notype": ("NoTypeDomain", ["tool UntypedTools.read_note: parameter 'note_id' has no type hint",
                                "annotate it (e.g. note_id: str)"]),
    "mutable": ("MutableDomain", ["state table MutableState.notes holds MutableNote", "not frozen",
                                  FROZEN_FIX]),
    "nopolicy": ("NoPolicyDomain", ["NoPolicyDomain declares no policy", "set the class attribute",
                                    "policy = "]),
}
ENTRY_POINTS = {"good_notes": "GoodDomain", **{name: cls for name, (cls, _) in BROKEN.items()}}


@pytest.fixture(scope="module")
def plugin_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("plugins")
    (root / f"{MODULE}.py").write_text(PLUGINS)
    info = root / f"{MODULE}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {MODULE}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[trajforge.domains]\n" + "".join(f"{n} = {MODULE}:{c}\n" for n, c in ENTRY_POINTS.items()))
    return root


@pytest.fixture()
def plugins(plugin_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.syspath_prepend(str(plugin_dir))
    return plugin_dir


def _says(line: str, name: str, parts: list[str]) -> None:
    assert "\n" not in line
    assert f"'{name}'" in line or line.startswith(f"{name}: ")
    assert f"{MODULE}:{ENTRY_POINTS[name]}" in line
    for part in parts:
        assert part in line, (part, line)


def test_a_good_plug_in_loads_next_to_the_broken_ones(plugins: Path) -> None:
    assert set(ENTRY_POINTS) | {"retail"} <= set(domain_names())
    domain = load_domain("good_notes", 3, 0)
    assert sorted(domain.template.notes) == ["n0", "n1", "n2"]  # type: ignore[attr-defined]
    assert load_domain_class("retail") is RetailDomain


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_broken_plug_in_is_one_config_error_naming_it_the_item_and_the_fix(
        plugins: Path, name: str) -> None:
    for load in (lambda: load_domain_class(name), lambda: load_domain(name, 3, 0)):
        with pytest.raises(BrokenDomain) as raised:
            load()
        error = raised.value
        assert error.field == "domain.name" and error.domain == name
        assert error.source == f"{MODULE}:{ENTRY_POINTS[name]}"
        assert str(error).startswith(f"domain.name: domain '{name}' ({MODULE}:{ENTRY_POINTS[name]}): ")
        _says(str(error), name, BROKEN[name][1])


def test_domains_lists_the_loadable_ones_and_one_line_per_broken_one(plugins: Path) -> None:
    result = CliRunner().invoke(app, ["domains"])
    assert result.exit_code == 0, result.output
    assert "retail" in result.stdout and "good_notes" in result.stdout
    for name in BROKEN:
        assert f"│ {name} " not in result.stdout  # not in the table
    lines = result.stderr.splitlines()
    assert sorted(line.split(":")[0] for line in lines) == sorted(BROKEN), result.stderr
    for line in lines:
        name = line.split(":")[0]
        assert line.startswith(f"{name}: broken: ")
        _says(line, name, BROKEN[name][1])


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_building_a_broken_domain_exits_2_with_one_line_and_writes_nothing(
        plugins: Path, tmp_path: Path, name: str) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["build", "--domain", name, "--out", str(out), "--n", "2", "--quiet"])
    assert result.exit_code == 2, (result.output, result.exception)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"error: domain.name: domain '{name}' ({MODULE}:{ENTRY_POINTS[name]}): ")
    _says(lines[0], name, BROKEN[name][1])
    assert not out.exists()


def test_a_real_process_shows_the_same_lines(plugin_dir: Path, tmp_path: Path) -> None:
    """What a user sees: no traceback, exit 2 and no folder for the build; exit 0 for domains."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugin_dir), os.environ.get("PYTHONPATH", "")]),
           "COLUMNS": "200"}
    out = tmp_path / "out"
    script = ("import sys; from trajforge.cli import app; sys.argv = ['trajforge'] + sys.argv[1:]; "
              "app()")
    build = subprocess.run([sys.executable, "-c", script, "build", "--domain", "mutable", "--out", str(out),
                            "--quiet"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert build.returncode == 2, build.stderr
    assert build.stderr.count("\n") == 1 and FROZEN_FIX in build.stderr, build.stderr
    assert not out.exists()
    listed = subprocess.run([sys.executable, "-c", script, "domains"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0, listed.stderr
    assert "retail" in listed.stdout and "good_notes" in listed.stdout
    assert len(listed.stderr.splitlines()) == len(BROKEN), listed.stderr
    assert "Traceback" not in build.stderr + listed.stderr


def test_duplicate_names_still_fail_loudly(plugin_dir: Path, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    twin = tmp_path / "twin-0.1.dist-info"
    twin.mkdir()
    (twin / "METADATA").write_text("Metadata-Version: 2.1\nName: twin\nVersion: 0.1\n")
    (twin / "entry_points.txt").write_text(f"[trajforge.domains]\nretail = {MODULE}:GoodDomain\n")
    monkeypatch.syspath_prepend(str(plugin_dir))
    monkeypatch.syspath_prepend(str(tmp_path))
    result = CliRunner().invoke(app, ["domains"])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: domain.name: domain 'retail' is registered twice")
    assert len(result.stderr.splitlines()) == 1


def test_state_tables_must_be_dicts_of_frozen_records_all_the_way_down() -> None:
    from pydantic import BaseModel

    from trajforge.environments.base import State
    from trajforge.environments.retail.data import RetailState
    from trajforge.environments.validate import state_problem
    from trajforge.schemas.base import Record

    class Loose(BaseModel):
        zip: str

    class Holder(Record):
        id: str
        addresses: list[Loose]

    class NestedState(State):
        holders: dict[str, Holder]

    class ListState(State):
        holders: list[Holder]

    assert state_problem(RetailState) is None
    nested = state_problem(NestedState)
    assert nested is not None and "\n" not in nested
    assert nested.startswith("state table NestedState.holders holds Holder, whose field addresses is a "
                             "Loose, which is not frozen") and nested.endswith(FROZEN_FIX)
    listed = state_problem(ListState)
    assert listed is not None and listed.startswith("state table ListState.holders is list[")
    assert listed.endswith("not a table; declare it as dict[str, <record>] with a frozen record type")


def test_dual_control_declarations_that_name_nothing_are_one_line_problems() -> None:
    """``instructions`` for a tool that is not the user's, ``user_tables`` naming no table:
    a load-time problem naming the declaration and the fix (a ``BrokenDomain`` at the registry)."""
    from trajforge.environments.telecom import TelecomDomain
    from trajforge.environments.validate import domain_problem

    class StrayTable(TelecomDomain):
        user_tables = frozenset({"phones"})

    class StrayInstruction(TelecomDomain):
        instructions = {**TelecomDomain.instructions, "enable_roaming": next(iter(TelecomDomain.instructions.values()))}

    assert domain_problem(TelecomDomain) is None
    assert "user_tables names phones" in (domain_problem(StrayTable) or "")
    problem = domain_problem(StrayInstruction) or ""
    assert "instructions names" in problem and "not a user tool" in problem
