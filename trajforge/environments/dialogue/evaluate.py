"""Measures the recognisers on a labelled bank and on the generator's own phrases (used by the
tests and by benchmarks/dialogue_acts.py)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from trajforge.environments.dialogue import classify_agent, classify_user

if TYPE_CHECKING:
    from trajforge.environments.base import Domain

FILLS_PER_TEMPLATE = 4


def expand(rows: Sequence[dict[str, str]]) -> list[dict[str, str]]:
    """The bank's measurable entries: each ``{action}`` template filled with the bank's first
    ``FILLS_PER_TEMPLATE`` ``action_fill`` clauses (each fill a confirmation request)."""
    fills = [r["text"] for r in rows if r["label"] == "action_fill"][:FILLS_PER_TEMPLATE]
    out: list[dict[str, str]] = []
    for r in rows:
        if r["label"] == "action_fill":
            continue
        if r.get("phenomenon") == "template":
            out.extend(dict(r, text=r["text"].replace("{action}", a)) for a in fills)
        else:
            out.append(r)
    return out


def predict(row: dict[str, str]) -> str:
    act = classify_agent(row["text"]) if row["role"] == "agent" else classify_user(row["text"])
    return act.label


def binary(pairs: Iterable[tuple[bool, bool]]) -> dict[str, Any]:
    tp = fp = fn = n = 0
    for truth, guess in pairs:
        n += 1
        tp += truth and guess
        fp += guess and not truth
        fn += truth and not guess
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"n": n, "positives": tp + fn, "tp": tp, "fp": fp, "fn": fn,
            "precision": precision, "recall": recall, "f1": f1}


def per_class(rows: Sequence[dict[str, str]]) -> dict[str, dict[str, Any]]:
    """The measured classes. ``confirm_request`` and ``anything_else`` against all other agent
    messages; ``consent`` and ``non_consent`` among the replies to a confirmation request (the
    bank's consents and non-consents: a reply that is not consent is non-consent);
    ``closing`` against all other user messages."""
    agent = [(r["label"], predict(r)) for r in rows if r["role"] == "agent"]
    user = [(r["label"], predict(r)) for r in rows if r["role"] == "user"]
    replies = [(y, p) for y, p in user if y in ("consent", "non_consent")]
    return {
        "confirm_request": binary((y == "confirm_request", p == "confirm_request") for y, p in agent),
        "anything_else": binary((y == "anything_else", p == "anything_else") for y, p in agent),
        "consent": binary((y == "consent", p == "consent") for y, p in replies),
        "non_consent": binary((y == "non_consent", p != "consent") for y, p in replies),
        "closing": binary((y == "closing", p == "closing") for y, p in user),
    }


def confusion(rows: Sequence[dict[str, str]]) -> dict[str, dict[str, int]]:
    counts: Counter[tuple[str, str]] = Counter((f"{r['role']}:{r['label']}", predict(r)) for r in rows)
    out: dict[str, dict[str, int]] = {}
    for (truth, guess), n in sorted(counts.items()):
        out.setdefault(truth, {})[guess] = n
    return out


def is_right(row: dict[str, str], label: str) -> bool:
    if row["label"] == "non_consent":
        return label != "consent"
    return label == row["label"]


def by_phenomenon(rows: Sequence[dict[str, str]]) -> dict[str, dict[str, Any]]:
    tally: dict[str, list[int]] = {}
    for r in rows:
        key = f"{r['label']}/{r.get('phenomenon', '')}"
        t = tally.setdefault(key, [0, 0])
        t[0] += is_right(r, predict(r))
        t[1] += 1
    return {k: {"right": a, "n": n, "accuracy": a / n} for k, (a, n) in sorted(tally.items())}


class _Values(dict[str, str]):
    """Stand-in values for a phrase's placeholders, by the placeholder's name (no domain's own)."""

    def __missing__(self, key: str) -> str:
        for part, value in STAND_INS:
            if part in key:
                return value
        return "12.50"


# (part of a placeholder's name, the value it gets), first match wins
STAND_INS = (("email", "li.ma@example.com"), ("name", "Li Ma"), ("address", "17 Ash Road, Dayton, OH 45402"),
             ("date", "2024-05-03"), ("code", "45402"), ("id", "#A2918352"),
             ("status", "pending"), ("reason", "no longer needed"), ("error", "that is not allowed"),
             ("item", "the red mug"), ("option", "color: blue"), ("value", "#A2918352"))


def generator_phrases(domains: Sequence[type[Domain]] | None = None) -> list[dict[str, str]]:
    """The scripted policies' phrases, with every installed domain's (or ``domains``') intent,
    slot and identity phrases filled with stand-in values, and the act each must be recognised
    as. Imported here, at call time: the generator may change its wording."""
    from trajforge.environments.registry import domain_names, load_domain_class
    from trajforge.simulation import agents, user

    if domains is None:
        domains = [load_domain_class(name) for name in domain_names()]
    values = _Values()
    intents = [spec for d in domains for spec in d.intents.values()]
    slots = [slot for d in domains for slot in d.slots.values()]
    identity_asks = [ask for d in domains for ask in d.identity.asks]
    rows: list[dict[str, str]] = []

    def add(text: str, role: str, label: str, source: str) -> None:
        rows.append({"text": text.format_map(values) if "{" in text else text, "role": role,
                     "label": label, "phenomenon": source})

    actions = [a for spec in intents for a in spec.actions]
    for template in agents.CONFIRM:
        for a in actions:
            filled = template.replace("{action}", a.format_map(values))
            add(filled, "agent", "confirm_request", "agents.CONFIRM")
    for spec in intents:  # what the agent found, then the confirmation (one action per kind)
        for found in spec.found:
            for template in agents.CONFIRM_AFTER_FOUND[:: max(1, len(agents.CONFIRM_AFTER_FOUND) // 12)]:
                add(f"{found} {template.replace('{action}', spec.actions[0])}", "agent", "confirm_request",
                    "phrasing.found+agents.CONFIRM_AFTER_FOUND")
    for answers_behaviour in agents.ON_BEHAVIOUR.values():  # said before the next question or confirmation
        for aside in answers_behaviour:
            add(f"{aside} {agents.CONFIRM[0].replace('{action}', actions[0])}", "agent", "confirm_request",
                "agents.ON_BEHAVIOUR+agents.CONFIRM")
            add(f"{aside} {slots[0].questions[0]}", "agent", "other", "agents.ON_BEHAVIOUR+phrasing.questions")
    for text in agents.ANYTHING_ELSE:
        add(text, "agent", "anything_else", "agents.ANYTHING_ELSE")
    for text in identity_asks:
        add(text, "agent", "other", "agents.ASK_IDENTITY")
    for name in ("APOLOGY", "GOODBYE"):
        for text in getattr(agents, name):
            add(text, "agent", "other", f"agents.{name}")
    for slot in slots:
        for ack in agents.ACK:
            for q in slot.questions:
                add(ack + q, "agent", "other", "phrasing.questions")
        for q in slot.clarify:  # which one is meant, naming what the tools showed
            add(q.replace("{candidates}", "#A2918352 and #A2918353"), "agent", "other", "phrasing.clarify")
    for spec in intents:
        for report in spec.reports:
            add(report, "agent", "other", "phrasing.reports")
    for style in user.YES.values():
        for text in style:
            add(text, "user", "consent", "user.YES")
    answers = [a for slot in slots for a in slot.answers]
    requests = [r for spec in intents for r in spec.requests]
    for text in user.REVISE:
        for a in answers:
            add(text.replace("{answer}", a), "user", "non_consent", "user.REVISE")
    for text in user.REDIRECT:
        for r in requests:
            add(text.replace("{request}", r), "user", "non_consent", "user.REDIRECT")
    for text in user.BYE:
        add(text, "user", "closing", "user.BYE")
    for text in user.UNHAPPY:
        add(text, "user", "closing", "user.UNHAPPY")
    for text in user.PRICE:  # second thoughts on a price, then the revision or redirect
        add(f"{text.format(price='$54.20')} {user.REVISE[0].replace('{answer}', answers[0])}", "user",
            "non_consent", "user.PRICE+user.REVISE")
        add(f"{text.format(price='$54.20')} {user.REDIRECT[0].replace('{request}', requests[0])}", "user",
            "non_consent", "user.PRICE+user.REDIRECT")
    return rows


def generator_fragments(domains: Sequence[type[Domain]] | None = None) -> list[str]:
    """The scripted policies' own fragments and templates, verbatim (lead-ins such as "Of
    course.", the user's revisions and closings, the agent's acknowledgements, every installed
    domain's or ``domains``' requests, actions, reports, slot and identity phrases): no bank may
    hold one of them as a row."""
    from trajforge.environments.registry import domain_names, load_domain_class
    from trajforge.simulation import agents, user

    if domains is None:
        domains = [load_domain_class(name) for name in domain_names()]
    out: list[str] = []
    for d in domains:
        out += [*d.identity.asks, *(t for group in d.identity.answers for t in group)]
        for slot in d.slots.values():
            out += [*slot.questions, *slot.answers]
        for spec in d.intents.values():
            out += [*spec.requests, *spec.actions, *spec.reports]
    for name in ("GREET", "CONFIRM", "ANYTHING_ELSE", "APOLOGY", "GOODBYE", "ACK"):
        out += list(getattr(agents, name))
    for name in ("GREETINGS", "LEADS", "THANKS", "YES"):
        out += [t for group in getattr(user, name).values() for t in group]
    for name in ("REVISE", "REDIRECT", "NEXT", "BYE", "LOST"):
        out += list(getattr(user, name))
    return out


def action_grid(templates: Sequence[str], label: str,
                domains: Sequence[type[Domain]] | None = None) -> dict[str, Any]:
    """Whether a message is read the same whatever action it names: each ``{action}`` template
    filled with every action phrasing of every installed domain's (or ``domains``') intents
    (stand-in values), alone and after one of the intent's found lines (the agent says what it
    found, then asks), each expected to be read as ``label``. The generator's actions are never
    in a training bank, so with templates from outside it this measures invariance to the action.
    Returns counts per domain and form (``bare``, ``found``) and the misses per template."""
    from trajforge.environments.registry import domain_names, load_domain_class

    if domains is None:
        domains = [load_domain_class(name) for name in domain_names()]
    values = _Values()
    cells: dict[str, dict[str, int]] = {}
    misses: Counter[str] = Counter()
    for domain in domains:
        for spec in domain.intents.values():
            founds = [f.format_map(values) for f in spec.found]
            for k, action in enumerate(spec.actions):
                filled = action.format_map(values)
                for j, template in enumerate(templates):
                    text = template.replace("{action}", filled)
                    forms = [("bare", text)]
                    if founds:  # a fixed, varied choice of found line per (action, template)
                        forms.append(("found", f"{founds[(j + k) % len(founds)]} {text}"))
                    for form, message in forms:
                        cell = cells.setdefault(f"{domain.name}/{form}", {"n": 0, "right": 0})
                        read_right = classify_agent(message).label == label
                        cell["n"] += 1
                        cell["right"] += read_right
                        misses[template] += not read_right
    n = sum(c["n"] for c in cells.values())
    right = sum(c["right"] for c in cells.values())
    return {"label": label, "templates": len(templates), "n": n, "right": right,
            "accuracy": right / n if n else 1.0, "cells": dict(sorted(cells.items())),
            "misses": {t: m for t, m in misses.most_common() if m}}
