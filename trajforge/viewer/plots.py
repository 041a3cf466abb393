"""The overview's and the runs page's plots: matplotlib figures rendered to SVG, handed to the
page as ``data:`` URIs (an SVG shown through ``<img>`` runs no script, whatever its labels say).

Text is kept as SVG text rather than paths (``svg.fonttype: none``): a figure renders in about
40 ms instead of 150 and is half the size. Figures are ``matplotlib.figure.Figure`` objects, not
pyplot, so nothing is registered globally.
"""

from __future__ import annotations

import base64
import io
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from trajforge.viewer.queries import Overview, RunsPage

_RENDER = threading.Lock()  # rc_context changes matplotlib's process-wide settings for a moment
BAR = "#4c72b0"
BAD = "#c44e52"
GOOD = "#55a868"


def _figure(height: float = 2.6, width: float = 5.2, left: float = 0.13) -> tuple[Figure, Axes]:
    """A figure with fixed margins (a constrained layout would double the time to draw it)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    fig.subplots_adjust(left=left, right=0.97, top=1 - 0.32 / height, bottom=0.55 / height)
    return fig, fig.subplots()


def svg_uri(fig: Figure) -> str:
    import matplotlib

    buf = io.BytesIO()
    with _RENDER, matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "trajforge", "font.size": 9}):
        fig.savefig(buf, format="svg")
    return "data:image/svg+xml;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _barh(labels: Sequence[str], values: Sequence[float], title: str, *, xlabel: str = "",
          color: str = BAR, percent: bool = False) -> str:
    longest = max((len(label) for label in labels), default=0)
    fig, ax = _figure(height=max(1.6, 0.9 + 0.22 * len(labels)), left=min(0.55, 0.04 + 0.0135 * longest))
    ax.barh(list(labels)[::-1], list(values)[::-1], color=color)
    ax.set_title(title, loc="left")
    ax.set_xlabel(xlabel)
    if percent:
        ax.set_xlim(0, 1)
        ax.xaxis.set_major_formatter(_percent())
    ax.spines[["top", "right"]].set_visible(False)
    return svg_uri(fig)


def _percent() -> Any:
    from matplotlib.ticker import PercentFormatter

    return PercentFormatter(1.0, decimals=0)


def _integers() -> Any:
    from matplotlib.ticker import MaxNLocator

    return MaxNLocator(integer=True)


def _hist(points: Sequence[tuple[int, int]], title: str, xlabel: str) -> str:
    digits = len(f"{max((p[1] for p in points), default=0):,}")  # the widest count tick label
    fig, ax = _figure(left=min(0.3, 0.07 + 0.016 * digits))
    ax.bar([p[0] for p in points], [p[1] for p in points], width=0.85, color=BAR)
    ax.set_title(title, loc="left")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("episodes")
    ax.xaxis.set_major_locator(_integers())
    ax.spines[["top", "right"]].set_visible(False)
    return svg_uri(fig)


def overview_plots(o: Overview) -> dict[str, str]:
    """Name -> data URI for each overview plot that has data."""
    plots: dict[str, str] = {}
    plots["yield"] = _barh([y[0] for y in o.yields], [y[1] for y in o.yields], "Yield per stage", xlabel="count")
    if o.checks:
        plots["checks"] = _barh([c["check"] for c in o.checks], [c["pass_rate"] or 0 for c in o.checks],
                                "Pass rate per check", percent=True)
    if o.domains:
        plots["domains"] = _barh([d["domain"] for d in o.domains], [d["pass_rate"] or 0 for d in o.domains],
                                 "Pass rate per domain (all agents)", percent=True, color=GOOD)
    if o.faults:
        plots["faults"] = _barh([f["fault_kind"] for f in o.faults], [f["caught"] for f in o.faults],
                                "Failing episodes by injected fault kind", xlabel="episodes", color=BAD)
    if o.terminations:
        plots["terminations"] = _barh([t["termination"] for t in o.terminations],
                                      [t["episodes"] for t in o.terminations], "Episodes by termination",
                                      xlabel="episodes")
    if o.turns:
        plots["turns"] = _hist(o.turns, "User turns per episode", "user turns")
    if o.tool_calls:
        plots["tool_calls"] = _hist(o.tool_calls, "Agent tool calls per episode", "tool calls")
    if o.complexity:
        plots["complexity"] = _barh([c["bucket"] for c in o.complexity], [c["episodes"] for c in o.complexity],
                                    "Episodes by structural complexity", xlabel="episodes")
    for v in o.vendi:
        rows = [r for r in v["rows"] if r["vendi"] is not None]
        if rows:
            plots[f"vendi:{v['selection_id']}"] = _barh(
                [r["group"] for r in rows], [r["vendi"] for r in rows],
                f"Vendi (q={v['q']}) per stratum, run {v['run_id']}", xlabel="Vendi score")
    return plots


def runs_plots(page: RunsPage) -> dict[str, str]:
    plots: dict[str, str] = {}
    if page.evaluations:
        fig, ax = _figure()
        for e in page.evaluations:
            ks = sorted(e["pass_hat"])
            ax.plot(ks, [e["pass_hat"][k] for k in ks], marker="o", label=f"{e['policy']} ({e['eval_id']})"[:60])
        ax.set_title("pass^k per policy", loc="left")
        ax.set_xlabel("k")
        ax.xaxis.set_major_locator(_integers())
        ax.set_ylim(-0.05, 1.05)
        ax.yaxis.set_major_formatter(_percent())
        ax.legend(fontsize=7, loc="center right")
        plots["evaluations"] = svg_uri(fig)
    for run_id, iterations in page.loops.items():
        fig, ax = _figure()
        xs = [r["iteration"] for r in iterations]
        for key, label in (("mean_reward", "mean reward"), ("heldout_pass_at_1", "held-out pass@1"),
                           ("train_success_rate", "train success")):
            ys = [r[key] for r in iterations]
            if any(y is not None for y in ys):
                ax.plot(xs, [float("nan") if y is None else y for y in ys], marker="o", label=label)
        ax.set_title(f"Loop {run_id}", loc="left")
        ax.set_xlabel("iteration")
        ax.xaxis.set_major_locator(_integers())
        ax.legend(fontsize=7)
        plots[f"loop:{run_id}"] = svg_uri(fig)
    return plots
