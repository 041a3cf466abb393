"""Real records for the store tests: built as pydantic models, converted with the Arrow helpers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from trajforge.schemas import (
    AssistantMessage,
    BlueprintRejection,
    DisclosureStep,
    EnvironmentRef,
    EpisodeSpec,
    Fault,
    FaultKind,
    FunctionSpec,
    GroundTruth,
    GroundTruthCall,
    Intent,
    Persona,
    Provenance,
    RequiredOutput,
    RoleUsage,
    StateChange,
    StructuralDescriptors,
    TaskBlueprint,
    TerminationReason,
    ToolCall,
    ToolMessage,
    ToolSpec,
    Trajectory,
    UserMessage,
    UserSpec,
    Verdict,
)
from trajforge.schemas.arrow import (
    blueprint_to_row,
    rejection_to_row,
    trajectory_to_row,
    verdict_to_row,
)

Rows = dict[str, list[dict[str, Any]]]
CHECKS = ("final_state", "outputs")


def blueprint(index: int) -> TaskBlueprint:
    env = EnvironmentRef(domain="retail", size=10, seed=index)
    user = UserSpec(
        persona=Persona(style="polite", verbosity=2, patience=3, volunteers="medium"),
        goal=f"cancel order {index}",
        known_facts={"name": "Ada"},
        hidden_facts={"order_id": f"o{index}"},
        intents=(Intent(kind="cancel_order", slots={"order_id": f"o{index}"}),),
        disclosure=(DisclosureStep(intent=0, action="reveal_intent", trigger="opening"),),
    )
    diff = (StateChange(table="orders", key=f"o{index}", path="status",
                        before="pending", after="cancelled"),)
    truth = GroundTruth(
        calls=(GroundTruthCall(name="cancel_order", arguments={"order_id": f"o{index}"},
                               kind="write", intent=0),),
        initial_state_hash="h0", final_state_hash=f"h{index}", final_state_diff=diff,
        outputs=(RequiredOutput(intent=0, key="status", value="cancelled", after_call=0),),
    )
    return TaskBlueprint(
        id=TaskBlueprint.make_id(env, user, truth, ("confirm_writes",)),
        environment=env, user=user, ground_truth=truth, policy_rules=("confirm_writes",),
        structure=StructuralDescriptors(n_intents=1, write_count=1, read_count=0,
                                        evidence_burden=(0,), dependency_depth=1,
                                        tool_topology="single", n_revisions=0, n_redirects=0),
        provenance=Provenance(generator="test", version="1", seed=7, index=index),
    )


def trajectory(bp: TaskBlueprint, run_id: str) -> Trajectory:
    episode = EpisodeSpec(agent="faulty", user="scripted", seed=bp.provenance.index, max_turns=10,
                          fault=Fault(kind=FaultKind.wrong_argument, target=0))
    call = ToolCall(id="c1", name="cancel_order", arguments='{"order_id": "o1"}')
    return Trajectory(
        id=Trajectory.make_id(bp.id, episode), blueprint_id=bp.id, run_id=run_id,
        domain="retail", episode=episode,
        messages=(UserMessage(content="please cancel"), AssistantMessage(tool_calls=(call,)),
                  ToolMessage(content="ok", tool_call_id="c1", name="cancel_order"),
                  AssistantMessage(content="done")),
        tools=(ToolSpec(function=FunctionSpec(name="cancel_order", description="Cancel.",
                                              parameters={"type": "object"})),),
        termination=TerminationReason.user_stop, final_state_hash="hx",
        final_state_diff=bp.ground_truth.final_state_diff,
        usage=(RoleUsage(role="agent", calls=2, prompt_tokens=100, completion_tokens=20),),
        cost_usd=None, latency_s=0.5, agent_entropy=(0.1, None),
    )


def verdicts(t: Trajectory) -> list[Verdict]:
    passed = t.episode.seed % 2 == 0
    return [Verdict(id=Verdict.make_id(t.id, check), trajectory_id=t.id,
                    blueprint_id=t.blueprint_id, run_id=t.run_id, check=check, passed=passed,
                    reason="", evidence="{}", trajectory_passed=passed,
                    reward=1.0 if passed else 0.0)
            for check in CHECKS]


def rejection(index: int, run_id: str) -> BlueprintRejection:
    return BlueprintRejection(id=f"rj_{index}", run_id=run_id, domain="retail", index=index,
                              seed=index, generator="test", reason="unsolvable", detail="{}")


def build_rows(run_id: str, start: int, stop: int, *, rejections: bool = False) -> Rows:
    """One blueprint, one trajectory and two verdicts per index; optionally a rejection for
    every index instead of nothing."""
    rows: Rows = {"blueprints": [], "trajectories": [], "verdicts": []}
    if rejections:
        rows["rejections"] = [rejection_to_row(rejection(i, run_id)) for i in range(start, stop)]
    for index in range(start, stop):
        bp = blueprint(index)
        t = trajectory(bp, run_id)
        rows["blueprints"].append(blueprint_to_row(bp, run_id))
        rows["trajectories"].append(trajectory_to_row(t))
        rows["verdicts"].extend(verdict_to_row(v) for v in verdicts(t))
    return rows


@pytest.fixture
def make_rows() -> Callable[..., Rows]:
    return build_rows


# --- keep `datasets`' cache out of the home folder ------------------------------------------

@pytest.fixture(scope="session", autouse=True)
def _datasets_cache(tmp_path_factory: pytest.TempPathFactory):
    """``load_dataset`` keeps Arrow copies of what it loads under ~/.cache by default; the tests
    load many small exports, so the copies go to a temporary folder instead."""
    try:
        import datasets.config
    except ImportError:
        yield
        return
    patch = pytest.MonkeyPatch()
    patch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path_factory.mktemp("hf-datasets-cache"))
    yield
    patch.undo()


# --- a default build and its export, shared by the export / publish / TRL tests ---------------

@pytest.fixture(scope="session")
def default_build(tmp_path_factory: pytest.TempPathFactory):
    """``trajforge build`` with the embedded default config (300 blueprints, oracle + faulty)."""
    from trajforge.config import load_config
    from trajforge.store.builds import run_build

    out = tmp_path_factory.mktemp("default-build")
    config = load_config(None, {"store.out": str(out)})
    run_build(config)
    return out


@pytest.fixture(scope="session")
def default_export(default_build, tmp_path_factory: pytest.TempPathFactory):
    """Every export of the default build, with its card: ``(folder, summary)``."""
    from trajforge.store.card import write_card
    from trajforge.store.export_writer import write_export

    folder = tmp_path_factory.mktemp("default-export") / "dataset"
    summary = write_export(default_build, folder)
    write_card(default_build, folder, summary, repo_id="acme/retail-trajectories")
    return folder, summary
