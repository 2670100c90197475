"""The dashboard's plots, drawn with matplotlib and written as inline SVG: no script, no font or
image fetched when the page is opened. Each artist that carries data gets an id starting with
`data-`, so a test (or a person with the inspector) can tell a plot with data from an empty frame.

Uses matplotlib's object API with the SVG canvas only (never pyplot), so it runs in a background
thread of a campaign and on machines without a display."""

from __future__ import annotations

import io
import re
from typing import TYPE_CHECKING, Any

from shapefuzz.campaign.report.series import OUTCOMES, Series, Step

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType

TRIAGE_COLORS = {"compiler bug": "#c0392b", "target limit": "#7f8c8d", "suspected driver": "#e67e22",
                 "ours": "#8e44ad", "flaky": "#bdc3c7"}
OUTCOME_CMAPS = {"pass": "Greens", "bug": "Reds", "unsupported": "Greys", "driver-suspected": "Oranges",
                 "other": "Purples"}
WORKER_COLORS = {"check": "#2e86c1", "re-hits": "#85c1e9", "confirm": "#f5b041", "shrink": "#58d68d"}
_RC: dict[RcKeyType, Any] = {"svg.fonttype": "none", "svg.hashsalt": "shapefuzz", "font.size": 9,
                             "axes.spines.top": False, "axes.spines.right": False, "font.family": "sans-serif"}


def _styled(draw):
    """Draws under the dashboard's matplotlib settings (sizes, fonts as text, stable ids)."""
    import functools

    @functools.wraps(draw)
    def wrapper(*args, **kwargs):
        from matplotlib import rc_context

        with rc_context(_RC):
            return draw(*args, **kwargs)

    return wrapper


def _figure(width: float, height: float):
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def to_svg(fig, name: str) -> str:
    """The figure as an <svg> element for an HTML page: no XML prologue, and every id prefixed
    with the plot's name, so several plots on one page never share an id (clip paths included)."""
    from matplotlib.backends.backend_svg import FigureCanvasSVG

    buffer = io.StringIO()
    FigureCanvasSVG(fig).print_svg(buffer, metadata={"Date": None, "Creator": None})
    text = buffer.getvalue()
    text = text[text.index("<svg"):]
    text = re.sub(r"\s*<metadata>.*?</metadata>", "", text, flags=re.S)  # RDF boilerplate, not needed inline
    text = re.sub(r'\bid="', f'id="{name}-', text)
    text = re.sub(r"url\(#", f"url(#{name}-", text)
    text = re.sub(r'xlink:href="#', f'xlink:href="#{name}-', text)
    return text


def _minutes(seconds: float) -> float:
    return seconds / 60.0


def _empty(ax, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="#666666")
    ax.set_xticks([])
    ax.set_yticks([])


def _corners(times: tuple[float, ...], most: int = 300) -> list[tuple[float, int]]:
    """A cumulative count's corners: one point per distinct time (a compile reaches hundreds of
    coverage items at once), thinned to at most `most` points, the last always kept. Keeps a
    long campaign's page small."""
    points: list[tuple[float, int]] = []
    for n, t in enumerate(times, 1):
        if points and points[-1][0] == t:
            points[-1] = (t, n)
        else:
            points.append((t, n))
    if len(points) > most:
        step = len(points) / most
        points = [points[int(i * step)] for i in range(most)] + [points[-1]]
    return points


def _steps(ax, steps: dict[str, Step], total: float, colors: dict[str, str], what: str) -> None:
    end = _minutes(total)
    for name, step in steps.items():
        corners = _corners(step.times)
        xs = [0.0, *(_minutes(t) for t, _ in corners), end]
        ys = [0, *(n for _, n in corners), len(step)]
        (line,) = ax.step(xs, ys, where="post", color=colors.get(name), linewidth=2, label=f"{name} ({len(step)})")
        line.set_gid(f"data-{what}-{re.sub(r'[^a-z0-9]+', '-', name.lower())}")
    ax.set_xlim(0, max(end, 1e-3))
    ax.set_ylim(bottom=0)
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.set_xlabel("active minutes")
    ax.legend(loc="upper left", frameon=False, fontsize=8)


@_styled
def causes_over_time(s: Series) -> str:
    panels = 2 if s.causes_by_severity else 1
    fig = _figure(7.0 if panels == 1 else 9.5, 2.6)
    axes = fig.subplots(1, panels, squeeze=False)[0]
    if not any(len(v) for v in s.causes_by_triage.values()):
        _empty(axes[0], "no causes found yet")
    else:
        _steps(axes[0], s.causes_by_triage, s.total_seconds, TRIAGE_COLORS, "causes")
        axes[0].set_ylabel("causes")
        axes[0].set_title("by triage verdict", fontsize=9)
    if panels == 2:
        palette = dict(zip(s.causes_by_severity, ("#922b21", "#cb4335", "#e59866", "#f5cba7", "#aab7b8", "#d5dbdb")))
        _steps(axes[1], s.causes_by_severity, s.total_seconds, palette, "severity")
        axes[1].set_title("by severity", fontsize=9)
    return to_svg(fig, "causes")


@_styled
def rate_over_time(s: Series) -> str:
    fig = _figure(7.0, 2.3)
    ax = fig.subplots()
    if not s.rate:
        _empty(ax, "no candidates yet")
    else:
        xs = [_minutes(t) for t, _ in s.rate]
        ys = [r for _, r in s.rate]
        (line,) = ax.plot(xs, ys, marker="o", markersize=3, color="#2e86c1")
        line.set_gid("data-rate")
        ax.set_ylim(bottom=0, top=max(ys) * 1.15 or 1)
        ax.set_xlim(0, max(_minutes(s.total_seconds), xs[-1]))
        ax.set_xlabel("active minutes")
        ax.set_ylabel("candidates / min")
    return to_svg(fig, "rate")


@_styled
def worker_split(s: Series) -> str:
    fig = _figure(7.0, 1.3)
    ax = fig.subplots()
    total = sum(s.worker.values())
    if total <= 0:
        _empty(ax, "no worker time yet")
        return to_svg(fig, "worker")
    left = 0.0
    for name, seconds in s.worker.items():
        if seconds <= 0:
            continue
        bars = ax.barh([0], [seconds / total * 100], left=left, color=WORKER_COLORS[name],
                       label=f"{name} {seconds / total:.0%} ({seconds:.0f}s)")
        bars.patches[0].set_gid(f"data-worker-{name}")
        left += seconds / total * 100
    ax.set_xlim(0, 100)
    ax.set_yticks([])
    ax.set_xlabel("% of worker time")
    ax.spines["left"].set_visible(False)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=4, frameon=False, fontsize=8)
    return to_svg(fig, "worker")


@_styled
def outcome_matrix(s: Series) -> str:
    """One small heatmap per outcome (pass, bug, unsupported, driver-suspected, other): lanes down,
    families across, each cell the candidates with that outcome, the count written in it."""
    from matplotlib.collections import PatchCollection
    from matplotlib.patches import Rectangle

    shown = [o for o in OUTCOMES if o != "other" or any(c.get("other") for c in s.matrix.values())]
    fig = _figure(2.0 + 1.9 * len(shown) if s.families else 7.0, 0.9 + 0.28 * max(1, len(s.lanes)))
    if not s.matrix:
        _empty(fig.subplots(), "no candidates yet")
        return to_svg(fig, "matrix")
    axes = fig.subplots(1, len(shown), sharey=True, squeeze=False)[0]
    for ax, outcome in zip(axes, shown):
        grid = [[s.matrix.get((lane, family), {}).get(outcome, 0) for family in s.families] for lane in s.lanes]
        top = max(4, max(max(row) for row in grid))  # a cell of 1 stays pale next to nothing
        # vector cells (not an embedded bitmap), only those with a count: the page stays small
        cells = [(i, j, count) for i, row in enumerate(grid) for j, count in enumerate(row) if count]
        mesh = PatchCollection([Rectangle((j, i), 1, 1) for i, j, _ in cells], cmap=OUTCOME_CMAPS[outcome],
                               edgecolor="white", linewidth=0.5)
        mesh.set_array([count for _, _, count in cells])
        mesh.set_clim(0, top * 1.3)
        mesh.set_gid(f"data-matrix-{outcome}")
        ax.add_collection(mesh)
        ax.set_facecolor("#f8f9f9")
        ax.set_xlim(0, len(s.families))
        for i, j, count in cells:
            ax.text(j + 0.5, i + 0.5, str(count), ha="center", va="center", fontsize=7,
                    color="white" if count > top * 0.75 else "black")
        ax.set_ylim(len(s.lanes), 0)
        ax.set_title(outcome, fontsize=9)
        names = [f.replace("conv_transpose", "conv_t") for f in s.families]
        ax.set_xticks([j + 0.5 for j in range(len(s.families))], names, rotation=45, ha="right", fontsize=7)
        ax.set_yticks([i + 0.5 for i in range(len(s.lanes))], s.lanes, fontsize=7)
        for side in ("left", "bottom"):
            ax.spines[side].set_visible(False)
        ax.tick_params(length=0)
    return to_svg(fig, "matrix")


@_styled
def coverage_over_time(s: Series, top: int = 6) -> str | None:
    """Passes and patterns reached over time, by lane and by family (all of them, and the `top`
    that reached most); None when nothing was instrumented (the page says so instead)."""
    if s.coverage is None:
        return None
    fig = _figure(10.0, 2.8)
    axes = fig.subplots(1, 2, sharey=True)
    for ax, (what, steps) in zip(axes, s.coverage.items()):
        shown = dict(list(steps.items())[: top + 1])
        _steps(ax, shown, s.total_seconds, {"all": "#17a589"}, f"coverage-{what}")
        for line in ax.get_lines()[1:]:
            line.set_linewidth(1.0)
        ax.set_title(f"by {what}", fontsize=9)
        ax.legend(loc="upper left", frameon=False, fontsize=7)
    axes[0].set_ylabel("passes and patterns reached")
    return to_svg(fig, "coverage")
