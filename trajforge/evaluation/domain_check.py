"""``trajforge domains check NAME``: does a domain give the checks what they need?

Plays ``n`` blueprints of a domain as the build does (``simulation.batch.simulate_batch``: one
oracle and one fault-injected episode each, the same seeds, ``choose_fault`` over every fault
kind), runs every check on each episode, and tallies:

- per check, how many oracle episodes it failed (a correct domain: none);
- per fault kind (and form), how often it was drawn and how often its named check caught it;
- what the domain does not declare that a check or a scripted side needs (``undeclared``).

A fault kind drawn fewer than ``min_drawn`` times is reported as under-drawn: its recall says
little. The same tally is what ``benchmarks/verifier_quality.py`` reports for one domain.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from trajforge.environments.base import Domain
from trajforge.environments.tasks import DEFAULT_IDENTITY, DEFAULT_PROSE
from trajforge.schemas.blueprint import BlueprintRejection, TaskBlueprint
from trajforge.schemas.trajectory import FaultKind, Trajectory, Verdict

RUN_ID = "domain-check"
MIN_DRAWN = 30


@dataclass(frozen=True)
class Played:
    """One checked episode: its blueprint, trajectory and verdicts by check name."""

    blueprint: TaskBlueprint
    trajectory: Trajectory
    verdicts: dict[str, Verdict]

    @property
    def failed(self) -> list[str]:
        return [name for name, v in self.verdicts.items() if not v.passed]


def play_and_verify(domain: Domain, blueprints: list[TaskBlueprint],
                    chunk: int = 250) -> Iterator[Played]:
    """An oracle and a fault-injected episode per blueprint (as the build plays them), each
    with every check's verdict, in blueprint order."""
    from trajforge.schemas.config import RunConfig, SimulationConfig
    from trajforge.simulation.batch import simulate_batch
    from trajforge.simulation.worker_state import SimulationContext

    config = RunConfig(simulation=SimulationConfig(agents=("oracle", "faulty")))
    for start in range(0, len(blueprints), chunk):
        part = blueprints[start:start + chunk]
        ctx = SimulationContext(config, domain)
        try:
            simulated = simulate_batch(config, part, part[-1].provenance.index + 1, ctx)
        finally:
            ctx.close()
        by_id = {bp.id: bp for bp in part}
        checked: dict[str, dict[str, Verdict]] = {}
        for verdict in simulated.verdicts:  # checked as each episode ended
            checked.setdefault(verdict.trajectory_id, {})[verdict.check] = verdict
        for trajectory in simulated.trajectories:
            yield Played(by_id[trajectory.blueprint_id], trajectory, checked[trajectory.id])


def undeclared(domain: Domain) -> list[str]:
    """What the domain leaves at its default that a check or a scripted side needs, one line
    each: which check is blind without it, and the declaration that fixes it."""
    cls = type(domain)
    out: list[str] = []

    def overrides(method: str) -> bool:
        return getattr(cls, method) is not getattr(Domain, method)

    if not domain.auth_tools:
        out.append("authentication: no auth_tools, so no call counts as identifying the user")
    if not overrides("account_owner"):
        out.append("authentication, policy (own_account): account_owner is not defined, so no call "
                   "is seen to touch an account")
    if domain.account_params == Domain.account_params:
        out.append("authentication: account_params left at the default (user_id)")
    if domain.entity_params is None:
        out.append("grounded_ids: entity_params not declared; only parameters named *_id/*_ids "
                   "are checked")
    if not domain.claim_attributes or not overrides("claim_records"):
        out.append("grounded_claims: no claim_attributes or claim_records, so no statement is checked")
    if not overrides("report_facts"):
        out.append("outputs (oracle): report_facts is not defined, so the scripted oracle cannot "
                   "fill reports from its tools")
    if domain.transfer_tool is None:
        out.append("termination, premature_end/transfer: no transfer_tool")
    if domain.identity is DEFAULT_IDENTITY:
        out.append("scripted user and agent: identity left at the default (a user id)")
    if domain.prose is DEFAULT_PROSE:
        out.append("blueprint prose: prose left at the default (a neutral role)")
    if domain.entity_pattern is None:
        out.append("user simulator: no entity_pattern, so a model user inventing an id is not caught")
    if not domain.policy_rules:
        out.append("policy: no policy_rules")
    return out


@dataclass
class DomainCheck:
    """The tallies of one ``check_domain`` run (see the module docstring)."""

    domain: str
    size: int
    seed: int
    blueprints: int = 0
    rejections: Counter[str] = field(default_factory=Counter)
    checks: tuple[str, ...] = ()
    oracle_episodes: int = 0
    oracle_passing: int = 0
    oracle_failures: Counter[str] = field(default_factory=Counter)
    drawn: Counter[str] = field(default_factory=Counter)  # fault kind -> episodes
    caught: Counter[str] = field(default_factory=Counter)  # fault kind -> caught by its named check
    forms_drawn: Counter[str] = field(default_factory=Counter)  # "kind/form"
    forms_caught: Counter[str] = field(default_factory=Counter)
    skipped_faulty: int = 0  # blueprints that admit no fault
    undeclared: list[str] = field(default_factory=list)
    examples: list[dict[str, Any]] = field(default_factory=list)  # oracle failures and misses
    min_drawn: int = MIN_DRAWN

    @property
    def oracle_pass_rate(self) -> float | None:
        return self.oracle_passing / self.oracle_episodes if self.oracle_episodes else None

    def under_drawn(self) -> list[str]:
        return [k.value for k in FaultKind if self.drawn[k.value] < self.min_drawn]

    def missed(self) -> dict[str, int]:
        return {k: n - self.caught[k] for k, n in self.drawn.items() if self.caught[k] < n}

    @property
    def ok(self) -> bool:
        """Every oracle episode passes, every fault kind was drawn ``min_drawn`` times and
        every injected fault was caught by its named check."""
        return (self.oracle_episodes > 0 and self.oracle_pass_rate == 1.0 and not self.under_drawn()
                and not self.missed())

    def as_dict(self) -> dict[str, Any]:
        return {
            "domain": self.domain, "size": self.size, "seed": self.seed,
            "blueprints": self.blueprints, "rejections": dict(self.rejections),
            "oracle": {"episodes": self.oracle_episodes, "pass_rate": self.oracle_pass_rate,
                       "failures": {c: self.oracle_failures[c] for c in self.checks}},
            "faults": {k.value: {"drawn": self.drawn[k.value], "caught": self.caught[k.value]}
                       for k in FaultKind},
            "forms": {f: {"drawn": n, "caught": self.forms_caught[f]}
                      for f, n in sorted(self.forms_drawn.items())},
            "skipped_faulty": self.skipped_faulty, "min_drawn": self.min_drawn,
            "under_drawn": self.under_drawn(), "missed": self.missed(),
            "undeclared": self.undeclared, "ok": self.ok, "examples": self.examples,
        }


def check_domain(domain: Domain, n_blueprints: int, *, chunk: int = 250,
                 min_drawn: int = MIN_DRAWN, max_examples: int = 10) -> DomainCheck:
    """Generate ``n_blueprints`` blueprints of ``domain`` (default generation config), play
    and verify an oracle and a faulty episode of each, and tally them."""
    from trajforge.generators import generate_blueprints
    from trajforge.schemas.config import GenerationConfig
    from trajforge.simulation.faults import FAULT_CHECKS
    from trajforge.simulation.worker_state import adopt_domain
    from trajforge.verifiers.checks import CHECKS

    domain = adopt_domain(domain)
    report = DomainCheck(domain.name, domain.size, domain.seed, checks=tuple(CHECKS),
                         undeclared=undeclared(domain), min_drawn=min_drawn)
    blueprints = []
    for item in generate_blueprints(domain, GenerationConfig(), RUN_ID, 0, n_blueprints):
        if isinstance(item, BlueprintRejection):
            report.rejections[item.reason] += 1
        else:
            blueprints.append(item)
    report.blueprints = len(blueprints)
    faulty_played = 0
    for played in play_and_verify(domain, blueprints, chunk):
        failed = played.failed
        fault = played.trajectory.episode.fault
        if fault is None:
            report.oracle_episodes += 1
            report.oracle_passing += not failed
            report.oracle_failures.update(failed)
            if failed and len(report.examples) < max_examples:
                report.examples.append({"trajectory_id": played.trajectory.id, "agent": "oracle",
                                        "failed": {c: played.verdicts[c].reason for c in failed}})
            continue
        faulty_played += 1
        named = FAULT_CHECKS[fault.kind]
        report.drawn[fault.kind.value] += 1
        report.forms_drawn[f"{fault.kind.value}/{fault.form}"] += 1
        if named in failed:
            report.caught[fault.kind.value] += 1
            report.forms_caught[f"{fault.kind.value}/{fault.form}"] += 1
        elif len(report.examples) < max_examples:
            report.examples.append({"trajectory_id": played.trajectory.id, "agent": "faulty",
                                    "fault": fault.model_dump(mode="json"), "named_check": named,
                                    "reason": played.verdicts[named].reason})
    report.skipped_faulty = len(blueprints) - faulty_played
    return report
