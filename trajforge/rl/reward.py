"""The reward of one episode, from the verifiers.

``reward = passed + progress_weight * (1 - passed) * progress`` where ``progress`` is the mean of
two fractions in [0, 1]: the ground-truth state changes the episode achieved (writes recall; an
unexpected write counts against it) and the verifier checks it passed. A passing episode gets
exactly 1; a failing one gets at most ``progress_weight`` (< 1), so passing always dominates and
the progress term only orders failures (a dense signal for a weak policy).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from trajforge.schemas.blueprint import TaskBlueprint
from trajforge.schemas.ids import canonical_json
from trajforge.schemas.trajectory import Trajectory, Verdict


class RewardConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    progress_weight: float = Field(0.5, ge=0.0, lt=1.0, description="weight of the progress term in a failure")


@dataclass(frozen=True)
class EpisodeReward:
    reward: float
    passed: bool
    writes: float  # share of the expected state changes achieved, less unexpected ones
    checks: float  # share of the verifier checks passed

    @property
    def progress(self) -> float:
        return (self.writes + self.checks) / 2.0


def writes_progress(trajectory: Trajectory, blueprint: TaskBlueprint) -> float:
    """|expected ∩ achieved| / |expected ∪ achieved| over state changes (1 when both are empty)."""
    want = {canonical_json(c.model_dump(mode="json")) for c in blueprint.ground_truth.final_state_diff}
    got = {canonical_json(c.model_dump(mode="json")) for c in trajectory.final_state_diff}
    union = want | got
    return len(want & got) / len(union) if union else 1.0


def episode_reward(trajectory: Trajectory, blueprint: TaskBlueprint, verdicts: Sequence[Verdict],
                   config: RewardConfig | None = None) -> EpisodeReward:
    config = config if config is not None else RewardConfig()
    passed = bool(verdicts) and verdicts[0].trajectory_passed
    checks = sum(v.passed for v in verdicts) / len(verdicts) if verdicts else 0.0
    writes = writes_progress(trajectory, blueprint)
    reward = 1.0 if passed else config.progress_weight * (writes + checks) / 2.0
    return EpisodeReward(reward=round(reward, 6), passed=passed, writes=writes, checks=checks)
