"""What the telecom customer says about their phone (``phrasing.describe_screen`` and the replies
after each fix): the agent learns the phone's state from these words alone (the exports leave the
user's tool results out), so every setting a fix acts on must be said, and said right. The
patterns below are this test's own reading of the words, not the realiser's banks."""

from __future__ import annotations

import asyncio
import itertools
import random
import re

import pytest

from trajforge.environments.telecom import TelecomDomain
from trajforge.environments.telecom.phrasing import INSTRUCTIONS, describe_screen
from trajforge.generators.compose import generate_blueprints
from trajforge.schemas.blueprint import TaskBlueprint
from trajforge.schemas.config import GenerationConfig
from trajforge.schemas.messages import AssistantMessage, UserMessage
from trajforge.schemas.trajectory import Trajectory
from trajforge.simulation.episodes import EpisodeJob, EpisodePlayer

# a setting's state as a reader takes it from the customer's words
READ = {
    "airplane_mode": re.compile(r"(?:airplane|flight) mode(?:'s| is)(?: switched)? (on|off)"),
    "mobile_data": re.compile(r"(?:mobile|cellular) data(?: switch)? is(?: switched)? (on|off)"),
    "roaming": re.compile(r"roaming(?: toggle)? is(?: switched)? (on|off)"),
    "apn": re.compile(r"\bapn\b[^.,]*?\b(standard|custom)\b"),
    "sim": re.compile(r"\bsim\b[^.,]*?\b(ready|needs (?:a )?restart)\b"),
}
SIGNALS = ("full signal bars", "No service", "No SIM card", "airplane mode icon, no signal")


def _read(text: str) -> dict[str, str]:
    """The settings the words name, each with the state they give it (never two)."""
    low = text.lower()
    out = {}
    for key, pattern in READ.items():
        found = {m.group(1) for m in pattern.finditer(low)}
        assert len(found) <= 1, (key, text)
        if found:
            out[key] = found.pop().replace("needs a restart", "needs restart").replace(" ", "_")
    return out


# the state a phone comes in: a setting in another state is one a fix acts on
USUAL = {"airplane_mode": "off", "mobile_data": "on", "apn": "standard", "sim": "ready"}


def test_the_first_look_says_every_setting_a_fix_acts_on_and_says_it_right() -> None:
    rng = random.Random(0)
    for signal, indicator, airplane, data, roaming, apn, sim in itertools.product(
            SIGNALS, ("LTE", "no data"), ("on", "off"), ("on", "off"), ("on", "off"),
            ("standard", "custom"), ("ready", "needs_restart")):
        values = {"number": "415-555-0100", "signal": signal, "mobile_data_indicator": indicator,
                  "airplane_mode": airplane, "mobile_data": data, "roaming": roaming, "apn": apn, "sim": sim}
        for _ in range(4):
            text = describe_screen(values, rng)
            read = _read(text)
            assert all(values[k] == v for k, v in read.items()), text  # what is said is right
            assert "roaming" in read, text
            assert all(k in read for k, usual in USUAL.items() if values[k] != usual), text
            low = text.lower()
            assert ("lte" in low and "no lte" not in low) == (indicator == "LTE"), text
            assert ("no sim card" in low) == (signal == "No SIM card"), text
            assert ("no service" in low) == (signal == "No service"), text
            assert text[0].isupper() and text.endswith(".") and "  " not in text, text


def test_the_words_vary() -> None:
    values = {"number": "415-555-0100", "signal": "full signal bars", "mobile_data_indicator": "no data",
              "airplane_mode": "off", "mobile_data": "on", "roaming": "off", "apn": "custom", "sim": "ready"}
    rng = random.Random(1)
    assert len({describe_screen(values, rng) for _ in range(200)}) >= 150


@pytest.fixture(scope="module")
def played() -> list[Trajectory]:
    domain = TelecomDomain(200, 5)
    bps = [b for b in generate_blueprints(domain, GenerationConfig(), "run_screen", 0, 200)
           if isinstance(b, TaskBlueprint)]
    player = EpisodePlayer(domain_of=lambda bp: domain)
    jobs = [EpisodeJob(bp, seed) for seed, bp in enumerate(bps)]
    out = asyncio.run(player.play_all(jobs, lambda p: p.trajectory))
    return [t for t in out if t is not None]


# the fix each customer tool makes, and the state the customer must have said before being asked to
FIX_NEEDS = {"toggle_airplane_mode": ("airplane_mode", "on"), "toggle_mobile_data": ("mobile_data", "off"),
             "reset_apn_settings": ("apn", "custom"), "toggle_device_roaming": ("roaming", "off")}


def test_every_fix_the_agent_asks_for_follows_from_what_the_customer_said(played: list[Trajectory]) -> None:
    asked = dict.fromkeys([*FIX_NEEDS, "restart_device"], 0)
    for t in played:
        said = ""
        for m in t.messages:
            if isinstance(m, UserMessage) and m.content:
                said += " " + m.content.lower()
            if not isinstance(m, AssistantMessage) or not m.content:
                continue
            for tool in asked:
                if not any(a in m.content for a in INSTRUCTIONS[tool].asks):
                    continue
                asked[tool] += 1
                if tool == "restart_device":
                    assert "no sim card" in said or "needs restart" in said or "needs a restart" in said, said
                    continue
                key, wrong = FIX_NEEDS[tool]
                assert wrong in {x.group(1) for x in READ[key].finditer(said)}, (tool, said)
    assert all(asked.values()), asked
