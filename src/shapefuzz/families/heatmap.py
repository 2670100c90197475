"""`gen --stats N --heatmap FILE.png`: the generator's coverage as a picture. One panel per family,
features down and across (sorted by name, so a knob's values sit together); the diagonal is how
often each feature appeared, the cell below it how often the two appeared together, as a share
of the draws. A rare conjunction of common features shows as a pale cell between dark rows."""

from __future__ import annotations

from pathlib import Path

from shapefuzz.families.generate import Coverage


def _grid(c: Coverage) -> tuple[list[str], list[list[float]]]:
    names = sorted(c.features)
    index = {n: i for i, n in enumerate(names)}
    nan = float("nan")
    grid = [[nan] * len(names) for _ in names]
    for name, count in c.features.items():
        grid[index[name]][index[name]] = count / c.draws
    for pair, count in c.pairs.items():
        a, _, b = pair.partition("&")
        if a in index and b in index:
            i, j = sorted((index[a], index[b]), reverse=True)  # below the diagonal
            grid[i][j] = count / c.draws
    for i in range(len(names)):  # pairs never seen (below the diagonal) are zero, not blank
        for j in range(i):
            if grid[i][j] != grid[i][j]:
                grid[i][j] = 0.0
    return names, grid


def write_heatmap(coverages: list[Coverage], path: str | Path) -> Path:
    """One PNG with a panel per family; written atomically."""
    import io

    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.colors import PowerNorm
    from matplotlib.figure import Figure

    from shapefuzz.files import atomic_write

    sizes = [max(4.0, 1.5 + 0.11 * len(c.features)) for c in coverages]
    fig = Figure(figsize=(max(sizes) + 1.2, sum(sizes) + 0.4 * len(coverages)), layout="constrained")
    axes = fig.subplots(len(coverages), 1, squeeze=False, height_ratios=sizes)[:, 0]
    image = None
    for ax, c in zip(axes, coverages):
        names, grid = _grid(c)
        # square-root scale: pairs are rarer than features, and the rare ones are the point
        image = ax.imshow(grid, cmap="viridis", norm=PowerNorm(0.5, vmin=0.0, vmax=1.0), interpolation="nearest")
        ax.set_title(f"{c.family}: {c.draws} draws, {len(c.features)} features, {len(c.pairs)} pairs seen",
                     fontsize=9)
        font = 7 if len(names) <= 45 else 5
        ax.set_xticks(range(len(names)), names, rotation=90, fontsize=font)
        ax.set_yticks(range(len(names)), names, fontsize=font)
        ax.tick_params(length=0)
        for side in ax.spines.values():
            side.set_visible(False)
    if image is not None:
        fig.colorbar(image, ax=list(axes), shrink=0.3, label="share of draws (diagonal: feature; below: pair)")
    buffer = io.BytesIO()
    FigureCanvasAgg(fig).print_png(buffer, metadata={"Software": None})
    atomic_write(path, buffer.getvalue())
    return Path(path)
