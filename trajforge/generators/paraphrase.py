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

from trajforge.generators.compose import TRAITS
from trajforge.schemas.blueprint import Persona, Provenance, Style, TaskBlueprint

GENERATOR = "paraphrase"
VERSION = "1"

# (pattern, replacements): whole words/phrases, case-insensitive at the first letter
SYNONYMS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("I want to", ("I'd like to", "I need to", "I wish to")),
    ("I'd like to", ("I want to", "I would like to", "I need to")),
    ("I need to", ("I have to", "I must", "I want to")),
    ("Can you", ("Could you", "Would you", "Please")),
    ("Can I", ("Could I", "Am I able to", "Is it possible to")),
    ("Could I", ("Can I", "May I")),
    ("return", ("send back", "give back")),
    ("send back", ("return",)),
    ("cancel", ("call off", "cancel out")),
    ("change", ("update", "alter", "switch")),
    ("exchange", ("swap", "trade")),
    ("swap", ("exchange", "switch")),
    ("different", ("another", "other")),
    ("tell me", ("let me know", "check")),
    ("a refund for", ("my money back for", "to be refunded for")),
    ("one of my orders", ("an order of mine", "one order")),
    ("status", ("state", "progress")),
    ("price", ("cost",)),
    ("available", ("in stock",)),
)
PERSONA_WORDING = (
    "You are a customer ({who}).",
    "Play a shopper ({who}).",
    "Act as a customer of the store ({who}).",
    "You're a client of this shop ({who}).",
    "Role: store customer ({who}).",
)
GOAL_OPENERS = ("You want:", "Your requests:", "What you need:", "You are hoping to:",
                "Your goal:")
_GOAL = re.compile(r"^You are a customer \((?P<who>[^)]*)\)\. You want: (?P<rest>.*)$", re.S)
_ITEM = re.compile(r"\((\d+)\) (.*?)(?=\s\(\d+\) |$)", re.S)


def _swap(text: str, rng: random.Random, rate: float = 0.8) -> str:
    """Replace some synonym phrases (each occurrence independently) outside brackets."""
    bracket = text.find("[")
    head, tail = (text, "") if bracket < 0 else (text[:bracket], text[bracket:])
    for phrase, options in SYNONYMS:
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


def paraphrase_goal(goal: str, rng: random.Random) -> str:
    """Reword a goal text: persona wording, opener, synonyms, detail order, and (for the
    standard ``You are a customer (...). You want: (1) ... (2) ...`` shape) clause order."""
    m = _GOAL.match(goal)
    if not m:
        return _swap(goal, rng)
    items = [_reorder_details(_swap(text.strip(), rng), rng) for _, text in _ITEM.findall(m["rest"])]
    persona = rng.choice(PERSONA_WORDING).format(who=m["who"])
    body = f"{rng.choice(GOAL_OPENERS)} " + " ".join(f"({k + 1}) {t}" for k, t in enumerate(items))
    return f"{body} {persona}" if rng.random() < 0.5 else f"{persona} {body}"


def paraphrase_persona(persona: Persona, rng: random.Random) -> Persona:
    style = rng.choice([s for s in Style if s is not persona.style])
    traits = tuple(sorted(rng.sample(TRAITS, rng.randint(0, 2))))
    return persona.model_copy(update={"style": style, "traits": traits})


def paraphrase_blueprint(bp: TaskBlueprint, rng: random.Random, *, seed: int, index: int
                         ) -> TaskBlueprint:
    """A reworded copy of ``bp`` with provenance pointing at it."""
    user = bp.user.model_copy(update={"goal": paraphrase_goal(bp.user.goal, rng),
                                      "persona": paraphrase_persona(bp.user.persona, rng)})
    return TaskBlueprint(
        id=TaskBlueprint.make_id(bp.environment, user, bp.ground_truth, bp.policy_rules),
        environment=bp.environment, user=user, ground_truth=bp.ground_truth,
        policy_rules=bp.policy_rules, structure=bp.structure,
        provenance=Provenance(generator=GENERATOR, version=VERSION, seed=seed, index=index,
                              parent_id=bp.id))
