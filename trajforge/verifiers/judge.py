"""An optional checklist judge: a model answers binary criteria derived from the blueprint, each
with a quote from the dialogue as evidence (in the style of checklist rewards).

Criteria: each intent handled (carried out, or refused as the policy requires), each required
fact communicated, the policy respected, the tone. A criterion passes only if the model says so
*and* quotes evidence that really is in the dialogue; a missing answer or a quote that is not in
the transcript fails with that reason. Verdicts are stored like any other check
(``judge:<criterion>``) and carry the deterministic checks' overall outcome, so adding a judge
never changes which trajectories pass; they are data to compare and to train reward models on.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from trajforge.environments.base import Domain, ToolKind
from trajforge.errors import LLMFailure
from trajforge.schemas.blueprint import TaskBlueprint
from trajforge.schemas.config import ModelConfig
from trajforge.schemas.messages import AssistantMessage, ToolMessage, UserMessage
from trajforge.schemas.trajectory import Trajectory, Verdict
from trajforge.simulation.llm import EpisodeLedger, Gateway
from trajforge.simulation.llm_agent import episode_tag

CHECK_PREFIX = "judge:"
_JSON = re.compile(r"\{.*\}", re.S)


@dataclass(frozen=True)
class Criterion:
    key: str
    question: str


def checklist(bp: TaskBlueprint, domain: Domain) -> list[Criterion]:
    items = []
    for k, intent in enumerate(bp.user.intents):
        slots = ", ".join(f"{s}: {v}" for s, v in intent.slots.items())
        items.append(Criterion(f"intent_{k + 1}", f"Did the agent fully handle the user's request "
                                                  f"{k + 1} ({intent.kind.replace('_', ' ')}; {slots}): "
                                                  "carry it out, or refuse it as the policy requires?"))
    for out in bp.ground_truth.outputs:
        items.append(Criterion(f"told_{out.key}", f"Did the agent tell the user the {out.key.replace('_', ' ')} "
                                                  f"({out.value})?"))
    items.append(Criterion("policy", "Did the agent follow the policy throughout: authenticate the "
                                     "user before account actions, get an explicit yes before "
                                     "every change, and take no action the policy forbids?"))
    items.append(Criterion("tone", "Was the agent polite and professional, without inventing facts?"))
    return items


WRITE_MARK = " (changes data)"


def transcript(trajectory: Trajectory, domain: Domain) -> str:
    """The conversation as numbered lines (``[3] user: ...``, ``[4] agent calls name(args)``,
    a write marked ``WRITE_MARK``), what the judge reads and quotes."""
    writes = {t.name for t in domain.tools.values() if t.kind is ToolKind.write}
    users_calls = {c.id for m in trajectory.messages if isinstance(m, UserMessage) for c in m.tool_calls}
    lines = []
    for i, m in enumerate(trajectory.messages):
        if isinstance(m, UserMessage):
            if m.content:
                lines.append(f"[{i}] user: {m.content}")
            for call in m.tool_calls:  # dual control: the user acts on their own device
                lines.append(f"[{i}] user does {call.name}({call.arguments}) on their own device")
        elif isinstance(m, ToolMessage) and m.tool_call_id in users_calls:
            lines.append(f"[{i}] the user's device{' ERROR' if m.is_error else ''}: {m.content[:400]}")
        elif isinstance(m, AssistantMessage):
            if m.content:
                lines.append(f"[{i}] agent: {m.content}")
            for call in m.tool_calls:
                lines.append(f"[{i}] agent calls {call.name}({call.arguments})"
                             + (WRITE_MARK if call.name in writes else ""))
        elif isinstance(m, ToolMessage):
            lines.append(f"[{i}] tool {m.name}{' ERROR' if m.is_error else ''}: {m.content[:400]}")
    return "\n".join(lines)


def judge_prompt(bp: TaskBlueprint, domain: Domain, trajectory: Trajectory) -> list[dict[str, Any]]:
    criteria = [{"key": c.key, "question": c.question} for c in checklist(bp, domain)]
    system = ("You grade a support conversation against a checklist. For every criterion "
              "answer passed true or false and quote, word for word, the part of the conversation "
              "that shows it (copy the text after the speaker label). Answer with JSON only: "
              '{"criteria": [{"key": "...", "passed": true, "evidence": "..."}]}')
    user = (f"The agent's policy:\n{domain.policy}\n\nConversation:\n{transcript(trajectory, domain)}\n\n"
            f"Checklist:\n{json.dumps(criteria)}")
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _squash(text: str) -> str:
    return " ".join(text.split()).lower()


def parse_judgement(text: str | None, criteria: list[Criterion], dialogue: str) -> dict[str, tuple[bool, str, str]]:
    """key -> (passed, reason, quote). Unanswered criteria and quotes not in the dialogue fail."""
    match = _JSON.search(text or "")
    try:
        answers = json.loads(match.group(0)).get("criteria", []) if match else []
    except (ValueError, AttributeError):
        answers = []
    by_key = {str(a.get("key")): a for a in answers if isinstance(a, dict)}
    haystack = _squash(dialogue)
    out = {}
    for criterion in criteria:
        answer = by_key.get(criterion.key)
        if answer is None:
            out[criterion.key] = (False, "the judge gave no answer", "")
            continue
        quote = str(answer.get("evidence") or "")
        if not quote.strip() or _squash(quote) not in haystack:
            out[criterion.key] = (False, "the judge's evidence is not in the dialogue", quote[:500])
            continue
        passed = answer.get("passed") is True
        out[criterion.key] = (passed, "yes" if passed else "the judge says no", quote[:500])
    return out


async def judge_trajectory(gateway: Gateway, model: ModelConfig, trajectory: Trajectory,
                           bp: TaskBlueprint, domain: Domain, base: list[Verdict],
                           ledger: EpisodeLedger) -> list[Verdict]:
    """Judge verdicts for one trajectory; ``base`` are its deterministic verdicts."""
    criteria = checklist(bp, domain)
    overall = base[0].trajectory_passed if base else False
    reward = base[0].reward if base else 0.0
    try:
        completion = await gateway.complete("judge", model, judge_prompt(bp, domain, trajectory),
                                            ledger=ledger, headers=episode_tag(bp.id, trajectory.episode.seed))
        judged = parse_judgement(completion.first.content, criteria, transcript(trajectory, domain))
    except LLMFailure as failure:
        judged = {c.key: (False, f"judge failed: {failure}", "") for c in criteria}
    return [Verdict(id=Verdict.make_id(trajectory.id, CHECK_PREFIX + key), trajectory_id=trajectory.id,
                    blueprint_id=trajectory.blueprint_id, run_id=trajectory.run_id,
                    check=CHECK_PREFIX + key, passed=passed, reason=reason,
                    evidence=json.dumps({"quote": quote}), trajectory_passed=overall, reward=reward)
            for key, (passed, reason, quote) in judged.items()]


# --- the scripted judge (for serve-policy and offline tests) ------------------------------------

def scripted_judge_role() -> Callable[[dict[str, Any], dict[str, str]], dict[str, Any]]:
    """A rule-based stand-in that reads the prompt's transcript: a required value passes when
    an agent line says it; the policy passes when every call marked as a write follows a user
    'yes'; an intent passes when some tool call after the user's request succeeded; tone
    passes. Each answer quotes the line it rests on."""
    from trajforge.environments.dialogue import is_affirmative

    def answer(body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        text = (body.get("messages") or [{}])[-1].get("content") or ""
        dialogue = text.split("Conversation:\n", 1)[-1].split("\n\nChecklist:\n", 1)[0]
        criteria = json.loads(text.rsplit("Checklist:\n", 1)[-1]) if "Checklist:\n" in text else []
        lines = dialogue.splitlines()
        agent = [ln.split(": ", 1)[1] for ln in lines if "] agent: " in ln]
        said = [ln for ln in lines if "] user: " in ln]
        results = []
        for c in criteria:
            key, question = c["key"], c["question"]
            if key.startswith("told_"):
                value = question.rsplit("(", 1)[-1].rstrip("?").rstrip(")")
                line = next((a for a in agent if value in a), None)
                results.append({"key": key, "passed": line is not None,
                                "evidence": line or (agent[-1] if agent else "")})
            elif key == "policy":
                bad = None
                last_said = ""
                for line in lines:
                    if "] user: " in line:
                        last_said = line.split(": ", 1)[1]
                    elif " agent calls " in line and line.endswith(WRITE_MARK):
                        if not is_affirmative(last_said):
                            bad = line.split("] ", 1)[1]
                            break
                results.append({"key": key, "passed": bad is None,
                                "evidence": bad or (said[-1].split(": ", 1)[1] if said else "")})
            elif key.startswith("intent_"):
                ok = next((ln.split("] ", 1)[1] for ln in lines if "] tool " in ln and " ERROR" not in ln), None)
                results.append({"key": key, "passed": ok is not None, "evidence": ok or ""})
            else:
                results.append({"key": key, "passed": True, "evidence": agent[0] if agent else ""})
        return {"role": "assistant", "content": json.dumps({"criteria": results})}

    return answer
