"""User behaviours beyond giving facts (``schemas.blueprint.Behaviour``): which ones a task
admits, and the draw that labels a blueprint with some of them.

A behaviour is admitted only where the scripted user can act it out at the turn its docstring
names, so the label is true of every episode a scripted user plays (the realism report counts
what was acted out against what was labelled):

- one acted on the agent's first question, or with the user's first answer (``question_back``,
  ``withholds_detail``, ``off_topic``, ``impatient``), needs a fact the user gives only when
  asked (an identity fact, or a slot of the kind an intent is first stated as); the first two
  exclude each other (both take that first question);
- ``corrects_detail`` needs such a fact with a digit in it (an id, a number, a postcode);
- ``asks_human`` is not drawn for a task a correct agent hands over anyway;
- ``price_second_thoughts`` needs a change of mind at a confirmation whose every wording names
  an amount (``IntentSpec.actions`` with a ``$``);
- ``ends_unhappy`` is not drawn: every task with an intent refused (and none handed over, which
  ends the conversation) has it;
- ``wrong_detail`` needs an identity fact with a digit among those the user gives
  (``IdentitySpec.given``) and an identity lookup that takes it; the blueprint gets a ``misstate``
  step with the wrong value, drawn (a digit off) until every such lookup, run on the domain's
  initial state, fails; where eight draws find none, the behaviour is dropped. It excludes
  ``corrects_detail`` (both are a slip in a number).

The draw has a stream of its own (``ids.hash_stream``), so the rest of a blueprint is what it
would be without behaviours.
"""

from __future__ import annotations

import random
import string
from collections.abc import Collection, Mapping, Sequence

from trajforge.environments.base import Domain, Environment, actor_of
from trajforge.errors import ToolError
from trajforge.schemas.blueprint import Behaviour, DisclosureStep, GroundTruthCall, Intent

ON_FIRST_QUESTION = (Behaviour.question_back, Behaviour.withholds_detail)
# behaviours a blueprint gets at most one of
EXCLUSIVE = (ON_FIRST_QUESTION, (Behaviour.corrects_detail, Behaviour.wrong_detail))
MISSTATE_DRAWS = 8
# how many behaviours a blueprint drawn to have some gets, equally likely
COUNTS = (1, 1, 2)


def admitted(domain: Domain, hidden: dict[str, str], intents: Sequence[Intent],
             disclosure: Sequence[DisclosureStep], facts: Mapping[str, str]) -> tuple[Behaviour, ...]:
    """The drawn behaviours (not ``ends_unhappy``) a task admits, in ``Behaviour``'s order;
    ``facts``: all the user's facts, known and hidden."""
    out: list[Behaviour] = []
    if identity_detail(domain, facts) is not None:
        out.append(Behaviour.wrong_detail)
    asked = [value for key, value in hidden.items() if _asked(domain, key, intents)]
    if asked:
        out += [Behaviour.question_back, Behaviour.withholds_detail, Behaviour.off_topic,
                Behaviour.impatient]
    if any(any(c.isdigit() for c in value) for value in asked):
        out.append(Behaviour.corrects_detail)
    if all(i.outcome != "transferred" for i in intents):
        out.append(Behaviour.asks_human)
    for step in disclosure:
        if step.action in ("revise", "redirect") and step.trigger == "on_confirmation":
            intent = intents[step.intent]
            actions = domain.intents[intent.initial_kind or intent.kind].actions
            if actions and all("$" in a for a in actions):
                out.append(Behaviour.price_second_thoughts)
                break
    return tuple(b for b in Behaviour if b in out)


def _asked(domain: Domain, key: str, intents: Sequence[Intent]) -> bool:
    """Whether the hidden fact ``key`` is one the agent asks for: an identity fact, or a slot of
    the kind its intent is first stated as (a fact only a redirected kind needs is said with the
    redirect, unasked)."""
    k, dot, slot = key.partition(".")
    if not dot:
        return True
    intent = intents[int(k)]
    return slot in domain.intents[intent.initial_kind or intent.kind].slots


def draw_behaviours(options: Collection[Behaviour], rng: random.Random,
                    p_behaviour: float) -> set[Behaviour]:
    """One in ``p_behaviour`` blueprints gets one or two of ``options``."""
    chosen: set[Behaviour] = set()
    if not options or rng.random() >= p_behaviour:
        return chosen
    pool = sorted(options)
    for _ in range(rng.choice(COUNTS)):
        if not pool:
            break
        pick = pool.pop(rng.randrange(len(pool)))
        chosen.add(pick)
        for group in EXCLUSIVE:
            if pick in group:
                pool = [b for b in pool if b not in group]
    return chosen


def identity_detail(domain: Domain, facts: Mapping[str, str]) -> str | None:
    """The identity fact ``wrong_detail`` gets wrong: of the set the user gives, the first with a
    digit whose value is no other fact's (a phone number that is also the line asked about would
    be said right there too)."""
    identity = domain.identity
    group = identity.factors[identity.given(facts.get)]
    return next((f for f in group if any(c.isdigit() for c in facts.get(f, ""))
                 and all(v != facts[f] for k, v in facts.items() if k != f)), None)


def misstated(value: str, rng: random.Random) -> str:
    """``value`` with one of its digits changed: the slip a person makes reading a number out."""
    at = rng.choice([i for i, c in enumerate(value) if c.isdigit()])
    digit = rng.choice([d for d in string.digits if d != value[at]])
    return value[:at] + digit + value[at + 1:]


def misstate_step(domain: Domain, facts: Mapping[str, str], volunteered: Collection[str],
                  calls: Sequence[GroundTruthCall], rng: random.Random) -> DisclosureStep | None:
    """``wrong_detail``'s step: the identity detail a digit off, such that every identity lookup
    of ``calls`` that takes it finds nothing on the domain's initial state (``None``: no draw did)."""
    key = identity_detail(domain, facts)
    if key is None:
        return None
    right = facts[key]
    if not misstated_lookups(domain, calls, right, right):
        return None
    env = domain.environment()
    for _ in range(MISSTATE_DRAWS):
        wrong = misstated(right, rng)
        if all(_finds_nothing(env, c, arguments) for c, arguments in misstated_lookups(domain, calls, right, wrong)):
            return DisclosureStep(intent=0, action="misstate", fact=key, value=wrong,
                                  trigger="opening" if key in volunteered else "on_question")
    return None


def misstated_lookups(domain: Domain, calls: Sequence[GroundTruthCall], right: str,
                      wrong: str) -> list[tuple[GroundTruthCall, dict[str, object]]]:
    """The identity lookups of ``calls`` that take the value ``right``, each with its arguments as
    the user's slip makes them (``right`` replaced by ``wrong``)."""
    return [(c, {k: wrong if v == right else v for k, v in c.arguments.items()})
            for c in calls if c.name in domain.auth_tools and right in c.arguments.values()]


def _finds_nothing(env: Environment, call: GroundTruthCall, arguments: dict[str, object]) -> bool:
    try:
        env.call(call.name, arguments, actor_of(call.kind))
    except ToolError:
        return True
    return False


def labelled(chosen: Collection[Behaviour], intents: Sequence[Intent]) -> tuple[Behaviour, ...]:
    """The blueprint's behaviours: ``chosen``, and ``ends_unhappy`` for a task with an intent
    refused and none handed over (a hand-over ends the conversation before the user could say
    how they feel), in ``Behaviour``'s order."""
    outcomes = {i.outcome for i in intents}
    unhappy = {Behaviour.ends_unhappy} if "refused" in outcomes and "transferred" not in outcomes else set()
    return tuple(b for b in Behaviour if b in set(chosen) | unhappy)
