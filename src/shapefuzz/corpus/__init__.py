"""The regression corpus: one self-contained folder per failure bucket, plain files that diff well.

    corpus/
      INDEX.md                              regenerated from the folders (rebuild_index)
      llvm-cpu-compile-error-3f9a0c1d2e4b/  entry id: backend-stage-status-<12 hex of the signature>
        meta.json                           signature, params, seed, versions, counts, expected state
        reproducer.mlir                     the smallest reproducer seen (with its case header if generated)
        inputs/arg0.npy ...                 the function's arguments, where numbers matter
        expected/result0.npy ...            the NumPy reference results
        repro.sh                            one command that reproduces it

Ids come from the normalized signature only, so the same bug found on two machines lands in the
same folder and different bugs never clash. Nothing in an entry names a path on the machine that
wrote it. The package, by concern:

    entry.py    the values: Finding (to save), CorpusEntry (loaded), ids, sizes, constants
    schema.py   meta.json checked field by field as it is read
    views.py    repro.sh, and text made safe to store (scrub, comment_text)
    store.py    save / update / load / find, under a lock, with atomic writes and folder swaps
    listing.py  every entry's checked meta, fast at thousands (list, INDEX.md, campaign summaries)
    index.py    INDEX.md

Every name other modules use is re-exported here: `from shapefuzz.corpus import save_finding`.
"""

from shapefuzz.corpus.entry import (
    CORPUS_FORMAT, DEFAULT_CORPUS, EXPECTED_DIR, EXPECTED_FAILING, EXPECTED_FIXED, EXPECTED_STATES, INDEX, INPUTS_DIR,
    MAX_DETAIL, META, MODULE, REPRO_SCRIPT, REPRODUCER, CorpusEntry, Finding, Sizes, UnreadableEntry, entry_id,
    make_finding, now_text, reproducer_sizes,
)
from shapefuzz.corpus.index import rebuild_index
from shapefuzz.corpus.listing import list_entries
from shapefuzz.corpus.schema import check_meta
from shapefuzz.corpus.store import find_entry, iter_entries, load_entry, save_finding, update_meta
from shapefuzz.corpus.views import comment_text, repro_script, scrub, strip_paths
from shapefuzz.files import atomic_write

__all__ = [
    "Finding", "make_finding", "CorpusEntry", "UnreadableEntry", "Sizes", "entry_id", "reproducer_sizes",
    "save_finding", "load_entry", "iter_entries", "list_entries", "find_entry", "rebuild_index", "update_meta", "repro_script",
    "check_meta", "atomic_write", "comment_text", "scrub", "strip_paths", "now_text",
    "EXPECTED_FAILING", "EXPECTED_FIXED", "EXPECTED_STATES", "CORPUS_FORMAT", "DEFAULT_CORPUS", "META", "REPRODUCER",
    "MODULE", "REPRO_SCRIPT", "INDEX", "INPUTS_DIR", "EXPECTED_DIR", "MAX_DETAIL",
]
