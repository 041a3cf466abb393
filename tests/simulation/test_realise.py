"""The surface realiser, and what it guarantees over played episodes of every domain: sentences
start with a capital, a lead-in runs on in lower case, and the ground truth reads an entity again
only when a write changed it or an answer is given after it."""

from __future__ import annotations

import json
import re

import pytest

from trajforge.environments.registry import domain_names
from trajforge.generators import generate_blueprints
from trajforge.generators.compose import _run
from trajforge.schemas import AssistantMessage, TaskBlueprint, Trajectory, UserMessage
from trajforge.schemas.blueprint import BlueprintRejection
from trajforge.schemas.config import GenerationConfig, RunConfig, SimulationConfig
from trajforge.simulation.batch import simulate_batch
from trajforge.simulation.realise import Part, compose, lower_first, realise, sentence_case
from trajforge.simulation.worker_state import SimulationContext, shared_domain

# the measurement's own word list (benchmarks/realism.py has its own): a capitalised function word
# after a comma is a glitch ("Hello, Before ...")
_FUNCTION = {"before", "it", "it's", "the", "this", "that", "my", "your", "we", "you", "can", "could",
             "would", "please", "yes", "sure", "thanks", "what", "how", "so", "and", "but", "of", "to",
             "for", "in", "let's", "there's", "here's"}


def test_a_lead_runs_on_in_lower_case_and_values_keep_their_capitals() -> None:
    assert realise(["Oh sure,", Part("It's {value}.", {"value": "#X12"}), "Thanks."]) == \
        "Oh sure, it's #X12. Thanks."
    assert realise(["Hello,", Part("{value} here.", {"value": "Ana Silva"})]) == "Hello, Ana Silva here."
    assert realise(["Right,", "I'd like that."]) == "Right, I'd like that."
    assert realise(["Okay, so", "Can you help?"]) == "Okay, so can you help?"
    assert lower_first("ID first, please.") == "ID first, please."  # an acronym keeps its case
    assert lower_first("{value} it is.") == "{value} it is."


def test_every_sentence_starts_with_a_capital() -> None:
    assert realise([Part("{value}.", {"value": "the blue one"}), "and",
                    Part("{value}, please.", {"value": "size small"})]) == "The blue one. And size small, please."
    assert sentence_case("no. not that one! why? ok") == "No. Not that one! Why? Ok"
    assert sentence_case("ana@example.com is mine.") == "ana@example.com is mine."  # no capital form
    assert sentence_case("Ask Dr. smith.") == "Ask Dr. smith."  # an abbreviation ends no sentence
    assert realise(["Hi!", "  ", "", "Done ."]) == "Hi! Done."


def test_compose_spells_out_every_combination_once() -> None:
    out = compose(("", "Okay."), ("I can {action}.",), ("Shall I?", "Shall I?"))
    assert out == ("I can {action}. Shall I?", "Okay. I can {action}. Shall I?")


@pytest.fixture(scope="module")
def played() -> list[tuple[TaskBlueprint, Trajectory]]:
    config = RunConfig(simulation=SimulationConfig(agents=("oracle",)))
    out = []
    for name in domain_names():
        domain = shared_domain(name, 300, 0)
        bps = [b for b in generate_blueprints(domain, GenerationConfig(), "realise", 0, 40)
               if not isinstance(b, BlueprintRejection)]
        ctx = SimulationContext(config, domain)
        try:
            simulated = simulate_batch(config, bps, bps[-1].provenance.index + 1, ctx)
        finally:
            ctx.close()
        by_id = {b.id: b for b in bps}
        out += [(by_id[t.blueprint_id], t) for t in simulated.trajectories]
    return out


def test_played_messages_have_no_lower_case_starts_or_capitalisation_glitches(
        played: list[tuple[TaskBlueprint, Trajectory]]) -> None:
    lower, glitches = [], []
    for _, t in played:
        for m in t.messages:
            if not isinstance(m, (UserMessage, AssistantMessage)) or not m.content:
                continue
            for sentence in re.split(r"(?<=[.!?])\s+", m.content.strip()):
                if re.match(r"[a-z]", sentence) and "@" not in sentence.split(" ")[0]:
                    lower.append(m.content)
            glitches += [m.content for g in re.findall(r",\s+([A-Z][a-z']*)\b", m.content)
                         if g.lower() in _FUNCTION]
    assert len(played) >= 120
    assert not lower, lower[:5]
    assert not glitches, glitches[:5]


def test_the_scripted_user_tells_parts_of_its_scenario_once_each(
        played: list[tuple[TaskBlueprint, Trajectory]]) -> None:
    """The background and the constraint come in the opening message, each situation with its
    request, in some episodes, never twice; a terse or hurried user tells less."""
    told = {"background": 0, "situation": 0, "constraint": 0}
    quiet = loud = 0
    for bp, t in played:
        scenario = bp.user.scenario
        said = " ".join(m.content for m in t.messages if isinstance(m, UserMessage))
        first = next(m.content for m in t.messages if isinstance(m, UserMessage))
        for part, texts in (("background", [scenario.background]), ("constraint", [scenario.constraint]),
                            ("situation", list(scenario.situations))):
            for text in filter(None, texts):
                core = text[1:].rstrip(".!?")  # its first letter may run on in lower case
                assert said.count(core) <= 1, (part, text)
                if core in said:
                    told[part] += 1
                    assert part == "situation" or core in first
        n = sum(1 for text in (scenario.background, *scenario.situations) if text and text[1:-1] in said)
        if bp.user.persona.style.value in ("terse", "hurried"):
            quiet += n
        else:
            loud += n
    assert all(n > 10 for n in told.values()), told
    assert loud > 2 * quiet


def test_ground_truth_reads_an_entity_again_only_after_a_change_or_for_an_answer() -> None:
    for name in domain_names():
        domain = shared_domain(name, 300, 0)
        for bp in generate_blueprints(domain, GenerationConfig(), "realise", 0, 60):
            if isinstance(bp, BlueprintRejection):
                continue
            env = domain.environment()
            anchors = {o.after_call for o in bp.ground_truth.outputs}
            seen: dict[str, str] = {}
            for t, call in enumerate(bp.ground_truth.calls):
                result = str(_run(env, call))
                if call.kind != "read":
                    continue
                key = f"{call.name}:{json.dumps(call.arguments, sort_keys=True)}"
                assert seen.get(key) != result or t in anchors or call.name in domain.auth_tools, \
                    (name, bp.id, call.name, call.arguments)
                seen[key] = result
