"""A campaign's buckets' corpus entries as the report reads them: inside the campaign's corpus, by
the names the store keeps (a tampered store names no path)."""

from __future__ import annotations

from pathlib import Path

from shapefuzz.campaign.causes.merging import entry_meta, entry_reproducer
from shapefuzz.campaign.database import BucketRow, CampaignStore
from shapefuzz.files import UnsafeName, child


def entry_of(bucket: BucketRow, corpus: Path | None) -> tuple[dict, str | None]:
    """A bucket's corpus entry: its meta.json and its reproducer ({} and None where there is none)."""
    entry = stored_entry(bucket.corpus_entry, corpus)
    return (entry_meta(entry), entry_reproducer(entry)) if entry else ({}, None)


def corpus_of(store: CampaignStore) -> Path | None:
    from shapefuzz.campaign.corpus_place import stored_corpus

    return stored_corpus(store.folder, store.meta_object("config") or {})


def stored_entry(stored: str, corpus: Path | None) -> str:
    """A bucket's corpus entry as a path to use: the entry folder named by the store, taken inside
    the campaign's corpus (`files.child`: a plain name, no link); "" when the store names none or
    names something that is not a plain entry folder (a tampered store names no path)."""
    if not stored or stored.startswith("?"):  # "?N": a save in flight
        return ""
    try:
        return str(child(corpus if corpus is not None else Path(stored).parent, Path(stored).name, "corpus entry"))
    except UnsafeName:
        return ""


__all__ = ["corpus_of", "entry_of", "stored_entry"]
