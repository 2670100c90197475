"""The allocation's table (campaign/allocation.py: where check time went and what it found, per
cell), as the text summary, report.md and the dashboard show it."""

from __future__ import annotations

from typing import Any, Mapping

from shapefuzz.markup import cell, text

ALLOCATION_TOP = 12  # cells the text summary lists (report.md lists every one)


def share_text(x: float | None) -> str:
    return "-" if x is None else f"{x:.1%}" if x < 0.1 else f"{x:.0%}"


def allocation_rows(allocation: Mapping[str, Any], top: int | None = None) -> list[tuple[str, ...]]:
    """The allocation table: a header, then one row per draw cell (the most drawn now first)."""
    rows: list[tuple[str, ...]] = [("cell", "checks", "check time", "causes", "per check-hour", "estimate/h",
                                    "draws now")]
    for r in (allocation.get("cells") or [])[:top]:
        rows.append((r["cell"], str(r["checks"]), share_text(r["time_share"]), f"{r['causes']:g}",
                     "-" if r["per_hour"] is None else f"{r['per_hour']:.0f}", f"{r['estimate_per_hour']:.0f}",
                     share_text(r["weight"])))
    return rows


def allocation_lines(allocation: Mapping[str, Any]) -> list[str]:
    """The per-cell table of the text summary ([] for a campaign with no candidates)."""
    if not allocation.get("cells"):
        return []
    how = "by yield" if allocation.get("on") else "off (--no-allocate): weights not used"
    cells = allocation["cells"]
    table = allocation_rows(allocation, ALLOCATION_TOP)
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    lines = [f"allocation {how}: {len(cells)} cell(s) (family/shape), new compiler-bug causes per check-hour"
             + (f"; the {ALLOCATION_TOP} drawn most shown" if len(cells) > ALLOCATION_TOP else "")]
    lines += ["  " + "  ".join(c.ljust(widths[i]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(row))
              for row in table]
    lanes = allocation.get("lanes") or []
    if lanes:
        lines.append("  lanes: " + ", ".join(f"{r['lane']} {share_text(r['time_share'])} ({r['causes']:g})" for r in lanes))
    return lines


def allocation_markdown(allocation: Mapping[str, Any]) -> list[str]:
    """report.md's allocation section ([] for a campaign with no candidates)."""
    out: list[str] = []
    if allocation.get("cells"):
        table = allocation_rows(allocation)
        how = ("drawn by yield" if allocation.get("on") else
               "kept only: this campaign drew with --no-allocate (least-tried families, lanes in rotation)")
        out += ["", "## Allocation", "", f"Where check time went and what it found, per cell (family/shape: `bare` the op "
                f"alone, `chain` inside a producer/consumer chain, `large` large shapes on the compile-only lanes), {text(how)}: new compiler-bug causes per check-hour "
                "over the campaign and as the allocation estimates them now (old finds discounted), and the share of "
                "draws each gets now.", "", "| " + " | ".join(table[0]) + " |", "|" + "---|" * len(table[0])]
        out += ["| " + " | ".join(cell(c) for c in r) + " |" for r in table[1:]]
        lanes = allocation.get("lanes") or []
        if lanes:
            out += ["", "| lane | checks | lane time | causes | per check-hour |", "|---|---|---|---|---|"]
            out += ["| " + " | ".join(cell(c) for c in (r["lane"], r["checks"], share_text(r["time_share"]),
                                                          f"{r['causes']:g}", "-" if r["per_hour"] is None
                                                          else f"{r['per_hour']:.0f}")) + " |" for r in lanes]
    return out
