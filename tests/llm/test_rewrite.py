"""A model re-words the scripted agent's turns under guards (``simulation/rewrite.py``): the guards
on their own, and a whole build whose rewriter is a loopback server over real HTTP."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from aiohttp import web

from tests.llm.conftest import ScriptServer, ok
from trajforge.config import load_config
from trajforge.environments.retail import RetailDomain
from trajforge.flows.build import build as build_flow
from trajforge.simulation.llm import quiet_provider_logs
from trajforge.simulation.rewrite import rewrite_problem
from trajforge.store import query

DOMAIN = RetailDomain(40, 0)


def test_a_rewrite_that_keeps_values_act_and_questions_is_accepted() -> None:
    original = "Order #W1234567 shows as pending. Shall I cancel order #W1234567 and refund $54.20?"
    assert rewrite_problem(original, "Your order #W1234567 is still pending. Do you want me to cancel "
                                     "order #W1234567 and refund the $54.20?", DOMAIN) is None


def test_a_rewrite_that_changes_a_value_is_refused() -> None:
    original = "Order #W1234567 shows as pending. Shall I cancel it and refund $54.20?"
    dropped = rewrite_problem(original, "The order is pending. Shall I cancel it and refund $54.20?", DOMAIN)
    assert dropped is not None and "w1234567" in dropped
    added = rewrite_problem(original, "Order #W1234567 shows as pending since May 3. Shall I cancel "
                                      "it and refund $54.20?", DOMAIN)
    assert added is not None and "adds 3" in added
    changed = rewrite_problem(original, "Order #W1234567 shows as pending. Shall I cancel it and refund "
                                        "$45.20?", DOMAIN)
    assert changed is not None


def test_a_rewrite_that_changes_the_act_or_the_question_is_refused() -> None:
    ask = "I can cancel order #W1234567 for you. Would you like me to go ahead?"
    assert "permission" in (rewrite_problem(ask, "I have cancelled order #W1234567.", DOMAIN) or "")
    report = "Order #W1234567 is cancelled."
    assert rewrite_problem(report, "Shall I cancel order #W1234567?", DOMAIN) is not None
    question = "Could you tell me the email address on your account?"
    assert rewrite_problem(question, "Could you tell me which order it is about?", DOMAIN) is not None
    assert rewrite_problem(question, "What email address is on your account, please?", DOMAIN) is None
    assert rewrite_problem(question, "Agent: What email address is on your account?", DOMAIN) is not None
    assert rewrite_problem(question, "", DOMAIN) is not None


# how the loopback "model" re-words: contractions spelt out and a few phrases swapped (values, act
# and key words kept); every fourth request first gets a rewrite that drops a value or adds one
SWAPS = (("I've", "I have"), ("I'll", "I will"), ("Would you like me to", "Do you want me to"),
         ("Let me know if", "Tell me if"), ("Is there anything else", "Anything else"), ("It's", "It is"),
         ("can't", "cannot"), ("I'm", "I am"), ("you'd", "you would"))


def reword(text: str) -> str:
    for a, b in SWAPS:
        text = text.replace(a, b)
    return text


class RewriterServer(ScriptServer):
    def __init__(self) -> None:
        super().__init__()
        self.bad = 0

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body: dict[str, Any] = await request.json()
        self.requests.append(body)
        last = body["messages"][-1]["content"]
        if last.startswith("Rejected:"):  # the retry after a refused rewrite: a good one
            original = body["messages"][1]["content"].split("The agent's next message:\n", 1)[1]
            return web.json_response(ok(reword(original))["body"])
        original = last.split("The agent's next message:\n", 1)[1]
        if len(self.requests) % 4 == 0:
            self.bad += 1
            values = re.findall(r"#?\w*\d[\w.]*", original)
            bad = original.replace(values[0], "") if values else original + " It ships on May 3."
            return web.json_response(ok(bad)["body"])
        return web.json_response(ok(reword(original))["body"])


def test_a_build_with_a_rewriter_verifies_like_the_scripted_build(tmp_path: Path, prefect_api: str) -> None:
    server = RewriterServer().start()
    try:
        config = tmp_path / "run.yaml"
        config.write_text(yaml.safe_dump({
            "domain": {"size": 80}, "generation": {"n_blueprints": 20},
            "simulation": {"rewrite": {"model": {"model": "openai/rewriter", "api_base": server.url}},
                           "gateway": {"call_timeout_s": 10, "episode_timeout_s": 300}}}))
        quiet_provider_logs()
        rewritten = build_flow(load_config(config, {"store.out": str(tmp_path / "rw")}), quiet=True)
        scripted = build_flow(load_config(None, {"store.out": str(tmp_path / "scripted"),
                                                 "generation.n_blueprints": 20, "domain.size": 80}), quiet=True)
    finally:
        server.stop()
    sql = ("SELECT t.blueprint_id, t.fault_kind IS NULL, o.passed, t.agent FROM trajectories t "
           "JOIN outcomes o ON o.trajectory_id = t.id ORDER BY 1, 2")
    rows, base = query(rewritten.out, sql)[1], query(scripted.out, sql)[1]
    assert [r[:3] for r in rows] == [r[:3] for r in base], "the same episodes pass and fail as scripted"
    assert all(r[2] for r in rows if r[1]) and rows, "every oracle episode passes"
    assert all(r[3].endswith("+rewrite:openai/rewriter") for r in rows)
    usage = query(rewritten.out, "SELECT u.role, sum(u.calls) FROM trajectories, unnest(usage) AS x(u) "
                                 "GROUP BY 1")[1]
    assert dict(usage).get("rewriter", 0) > 40
    texts = {r[0] for r in query(rewritten.out, "SELECT m.content FROM trajectories, unnest(messages) AS "
                                                "x(m) WHERE m.role = 'assistant' AND m.content <> ''")[1]}
    assert any("I have " in t or "Do you want me to" in t for t in texts), "the rewrites are used"
    assert server.bad > 5 and not any(t.endswith("It ships on May 3.") for t in texts), "refused ones are not"
