"""The loop's per-iteration plot: pool, boundary, variants, and held-out pass@1.

Four panels over the iteration: (1) the active pool stacked by origin (seeds, resynthesized
variants); (2) boundary tasks found and tasks retired (saturated, hopeless); (3) variants
proposed, accepted by validation, and admitted to the pool; (4) held-out pass@1 and the mean
training reward, with the cumulative trajectories consumed on the top axis. matplotlib is
imported lazily (the ``train`` extra); without it no plot is written and ``None`` is returned.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from trajforge.schemas.loop import LoopIteration


def plot_loop(rows: Sequence[LoopIteration], path: Path) -> Path | None:
    """Write the PNG of one loop run's iterations to ``path``; returns it (None: no matplotlib)."""
    if not rows:
        raise ValueError("no loop iterations to plot")
    if len({r.run_id for r in rows}) != 1:
        raise ValueError(f"rows of several runs: {sorted({r.run_id for r in rows})}")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    rows = sorted(rows, key=lambda r: r.iteration)
    x = [r.iteration for r in rows]
    fig, axes = plt.subplots(2, 2, figsize=(10, 6.5), sharex=True)
    (pool, bound), (var, score) = axes

    pool.stackplot(x, [r.pool_seed for r in rows], [r.pool_resynthesized for r in rows],
                   labels=["seed", "resynthesized"], alpha=0.8)
    pool.set_ylabel("active tasks")
    pool.set_title("pool")
    pool.legend(loc="upper left", fontsize=8)

    bound.plot(x, [r.boundary_count for r in rows], marker="o", label="boundary")
    bound.plot(x, [r.saturated_retired for r in rows], marker="^", label="retired: saturated")
    bound.plot(x, [r.hopeless_retired for r in rows], marker="v", label="retired: hopeless")
    bound.set_ylabel("tasks")
    bound.set_title("boundary and retirements")
    bound.legend(fontsize=8)

    var.plot(x, [r.variants_proposed for r in rows], marker="o", label="proposed")
    var.plot(x, [r.variants_accepted for r in rows], marker="s", label="accepted")
    var.plot(x, [r.variants_admitted for r in rows], marker="x", label="admitted")
    var.set_ylabel("variants")
    var.set_xlabel("iteration")
    var.set_title("resynthesis")
    var.legend(fontsize=8)

    held = [(r.iteration, r.heldout_pass_at_1) for r in rows if r.heldout_pass_at_1 is not None]
    if held:
        score.plot(*zip(*held, strict=True), marker="o", label="held-out pass@1")
    reward = [(r.iteration, r.mean_reward) for r in rows if r.mean_reward is not None]
    if reward:
        score.plot(*zip(*reward, strict=True), linestyle="--", label="mean rollout reward")
    score.set_ylim(-0.02, 1.02)
    score.set_xlabel("iteration")
    score.set_title("policy")
    score.legend(fontsize=8)
    top = score.secondary_xaxis("top")
    top.set_xticks(x, [str(r.trajectories_total) for r in rows], fontsize=7)
    top.set_xlabel("trajectories consumed", fontsize=8)

    for ax in axes.flat:
        ax.grid(alpha=0.3)
    fig.suptitle(f"loop {rows[0].run_id}")
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
