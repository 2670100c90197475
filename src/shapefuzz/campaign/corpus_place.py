"""Where a campaign's corpus is, as its store records it. A corpus inside the campaign folder (the
README's `--campaign campaign-demo --corpus campaign-demo/corpus`) is kept relative to that folder
(`corpus_in_campaign`), so the folder can be moved, copied or triaged from any working directory and
its links still name its own entries; a corpus outside it is kept by its absolute path.

Stores written before this kept the path as given on the command line, relative to the directory the
campaign started in: from anywhere else `campaign-demo/corpus` named no folder, so a resume saved to
a new corpus and `triage`/`report` on a copy linked no entry and left its issue texts as they were.
Such a path is read inside the campaign folder when it does not exist from here and what follows
its first part (the campaign folder as it was named then: `corpus` of `campaign-demo/corpus`) is a
folder there."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping


def corpus_record(campaign: Path, corpus: Path) -> dict[str, Any]:
    """The config fields that say where `corpus` is."""
    folder, place = campaign.resolve(), corpus.resolve()
    try:
        inside = place.relative_to(folder)
    except ValueError:
        return {"corpus": str(place), "corpus_in_campaign": False}
    return {"corpus": str(inside) if inside.parts else ".", "corpus_in_campaign": True}


def stored_corpus(campaign: Path, config: Mapping[str, Any]) -> Path | None:
    """The corpus folder a campaign's `config` names, read from here (None for none, or for a path
    kept inside the campaign that would lead out of it)."""
    value = config.get("corpus")
    if not isinstance(value, str) or not value:
        return None
    path = Path(value)
    if config.get("corpus_in_campaign"):
        if path.is_absolute() or ".." in path.parts:
            return None
        return campaign / path
    if path.is_absolute() or path.exists():
        return path
    if ".." not in path.parts:  # an older store's path, relative to where its campaign started
        for start in range(1, len(path.parts)):
            inside = campaign.joinpath(*path.parts[start:])
            if inside.is_dir():
                return inside
    return path


__all__ = ["corpus_record", "stored_corpus"]
