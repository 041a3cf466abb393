"""Near-copies of blueprints: the same task reworded, for testing near-duplicate removal.

``paraphrase_blueprint`` keeps what the task *is* (intents, facts, disclosure plan, ground
truth, so it validates exactly like its source) and rewords how it is put: synonym swaps in the
goal text, its clauses reordered, a different persona wording, and a new user style and traits
(so the simulated user phrases the dialogue differently too). Its provenance names the source
(``generator="paraphrase"``, ``parent_id``), which is the label a dedup evaluation scores
against. Deterministic in the ``rng`` it is given.
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Sequence

from trajforge.environments.tasks import DEFAULT_PROSE, ProseSpec
from trajforge.generators.compose import TRAITS
from trajforge.generators.scenario import REQUEST_OPENERS
from trajforge.schemas.blueprint import Persona, Provenance, Style, TaskBlueprint

GENERATOR = "paraphrase"
VERSION = "1"

_ITEM = re.compile(r"\((\d+)\) (.*?)(?=\s\(\d+\) |$)", re.S)


@functools.cache
def goal_shape(role: str) -> re.Pattern[str]:
    """The goal text ``generators.scenario.goal_text`` writes for a domain whose user plays
    ``role``: the person, their story (possibly empty), an opener, the numbered requests."""
    openers = "|".join(re.escape(o) for o in REQUEST_OPENERS)
    return re.compile(r"^You are " + re.escape(role) + r" \((?P<who>[^)]*)\)\.(?: (?P<story>.*?))?"
                      r" (?:" + openers + r") (?P<rest>\(1\) .*)$", re.S)


def _swap(text: str, rng: random.Random, prose: ProseSpec, rate: float = 0.8) -> str:
    """Replace some synonym phrases (each occurrence independently) outside brackets."""
    bracket = text.find("[")
    head, tail = (text, "") if bracket < 0 else (text[:bracket], text[bracket:])
    for phrase, options in prose.synonyms:
        pattern = re.compile(r"\b" + re.escape(phrase) + r"\b", re.I)
        head = pattern.sub(functools.partial(_synonym, rng=rng, rate=rate, options=options), head)
    return head + tail


def _synonym(m: re.Match[str], *, rng: random.Random, rate: float, options: Sequence[str]) -> str:
    """One of ``options`` for the matched phrase (with probability ``rate``), its capital kept."""
    if rng.random() > rate:
        return m.group(0)
    word = rng.choice(options)
    return word[0].upper() + word[1:] if m.group(0)[0].isupper() else word


def _reorder_details(item: str, rng: random.Random) -> str:
    """Shuffle the ``[slot: value, ...]`` details of one request."""
    m = re.search(r"\[(.*)\]$", item)
    if not m:
        return item
    parts = [p.strip() for p in re.split(r", (?=\w+: )", m.group(1))]
    rng.shuffle(parts)
    return item[: m.start()] + "[" + ", ".join(parts) + "]"


def paraphrase_goal(goal: str, rng: random.Random, prose: ProseSpec = DEFAULT_PROSE) -> str:
    """Reword a goal text with the domain's ``prose``: role wording, opener, synonyms, detail
    order, and (for the shape ``generators.scenario.goal_text`` writes) clause order; the story is
    kept, its synonyms swapped."""
    m = goal_shape(prose.role).match(goal)
    if not m:
        return _swap(goal, rng, prose)
    items = [_reorder_details(_swap(text.strip(), rng, prose), rng) for _, text in _ITEM.findall(m["rest"])]
    persona = rng.choice(prose.roles).format(who=m["who"])
    story = _swap(m["story"], rng, prose) + " " if m["story"] else ""
    body = f"{story}{rng.choice(REQUEST_OPENERS)} " + " ".join(f"({k + 1}) {t}" for k, t in enumerate(items))
    return f"{body} {persona}" if rng.random() < 0.5 else f"{persona} {body}"


def paraphrase_persona(persona: Persona, rng: random.Random) -> Persona:
    style = rng.choice([s for s in Style if s is not persona.style])
    traits = tuple(sorted(rng.sample(TRAITS, rng.randint(0, 2))))
    return persona.model_copy(update={"style": style, "traits": traits})


def paraphrase_blueprint(bp: TaskBlueprint, rng: random.Random, *, seed: int, index: int,
                         prose: ProseSpec = DEFAULT_PROSE) -> TaskBlueprint:
    """A reworded copy of ``bp`` (its domain's ``prose``) with provenance pointing at it."""
    user = bp.user.model_copy(update={"goal": paraphrase_goal(bp.user.goal, rng, prose),
                                      "persona": paraphrase_persona(bp.user.persona, rng)})
    return TaskBlueprint(
        id=TaskBlueprint.make_id(bp.environment, user, bp.ground_truth, bp.policy_rules),
        environment=bp.environment, user=user, ground_truth=bp.ground_truth,
        policy_rules=bp.policy_rules, structure=bp.structure,
        provenance=Provenance(generator=GENERATOR, version=VERSION, seed=seed, index=index,
                              parent_id=bp.id))
