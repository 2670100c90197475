"""The campaign's causes: one bug each, its buckets tied by identity (`cause_ties`: on several
backends, its other faces on a re-run), split by localization and merged by what they are
(`merging`, over cross-trigger runs: `crosstrigger`, kept in the store: `crossings`), with a
triage verdict (`verdicts`: the most bug-like of its buckets') and its bug fields, known or not and
its regression range (`cause_facts`), as one value (`cause.Cause`) the report, the dashboard, the
issue texts and the corpus records read. Knows no IREE but through `triage/` and `recheck/`."""
