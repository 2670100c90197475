"""`shapefuzz fuzz`: run or resume a campaign."""

from __future__ import annotations

import sys

import click

from shapefuzz.process import interrupts
from shapefuzz.cli.common import EXIT_FOUND, EXIT_OK, Session, toolchain_options
from shapefuzz.cli.params import SEED, BackendList, ClusterAddress, Duration, Seconds, array_cap_option
from shapefuzz.corpus import DEFAULT_CORPUS
from shapefuzz.families.registry import DEFAULT_FAMILIES


@click.command()
@click.option("--ops", default=None, help=f"Comma-separated op families (default: {', '.join(DEFAULT_FAMILIES)}).")
@click.option("--backends", "backend_names", type=BackendList(), default=None,
              help="Backends or aliases (default: the default set, marked * by `shapefuzz backends`).")
@click.option("--time", "time_budget", type=Duration(), default=None,
              help="Active time for the whole campaign: 45s, 90m, 8h, 1h30m.")
@click.option("--count", type=int, default=None, help="Candidates in the whole campaign.")
@click.option("--until-saturated", "until_saturated", default=None, metavar="P",
              help="Also stop once more time stops paying: the Good-Turing chance that a candidate finds a new "
                   "compiler-bug cause (causes seen once / candidates) has stayed below P over the last 3/P "
                   "candidates and the last tenth of the active time, both (e.g. 0.001; 0 < P < 1).")
@click.option("--jobs", "-j", type=int, default=None, help="Parallel workers (default: the cores).")
@click.option("--seed", type=SEED, default=None, help="Campaign seed (default 0; a resumed campaign keeps its own).")
@click.option("--campaign", "campaign_dir", default=None, help="Campaign folder (default: ./shapefuzz-campaign).")
@click.option("--corpus", "corpus_dir", default=None,
              help=f"Corpus folder (default: ./{DEFAULT_CORPUS}, as for every command; a resumed campaign keeps its own).")
@click.option("--compile-timeout", type=Seconds(), default=None, help="Seconds per compile (default 120).")
@click.option("--no-shrink", is_flag=True, help="Do not shrink new buckets in the background.")
@click.option("--shrink-time", type=Duration(), default=None,
              help="Once the budget is spent, shrink what is still pending for up to this long (default: keep it "
                   "pending for the next session).")
@click.option("--shrink-share", type=float, default=None,
              help="Most of the worker time background shrinking may take (default 0.25).")
@click.option("--memory-cap", default=None,
              help="Address-space cap for candidate checks (default 2GiB; a new out-of-memory bucket is "
                   "confirmed once under the full 8GiB).")
@click.option("--saturate-after", type=int, default=None,
              help="Hits before a bucket is saturated and its features are drawn less (default 3).")
@click.option("--explore", type=float, default=None,
              help="Least chance a candidate carrying a saturated bucket's features is still drawn (default 0.05).")
@click.option("--lanes-per-candidate", type=int, default=None,
              help="Backends per candidate: the reference plus a rotating share of the others (default 2; "
                   "--backends checks every candidate on every named backend).")
@click.option("--coverage", "coverage_share", type=float, default=None,
              help="Share of candidates compiled with the action log: the campaign's map of passes and "
                   "patterns reached, and each failing compile's pass (default 0.05, 0.15 with --steer; 0: off).")
@click.option("--steer", is_flag=True,
              help="Let that coverage steer drawing (neighbours of candidates that reached something new, "
                   "yields) and lane choice; measured, it has not paid in short campaigns (see README).")
@click.option("--context-share", type=float, default=None,
              help="Share of candidates whose op is drawn inside a chain of producers and consumers (pad, "
                   "transpose, reshapes, slices, dequantize... before it; bias, activations, casts, reductions "
                   "after it), where the bugs between ops are (default 0.5; 0: off).")
@click.option("--allocate/--no-allocate", "allocate", default=None,
              help="Spend check time on families, shapes (alone, in a chain, large) and lanes by the new "
                   "compiler-bug causes a second of each found lately, every one keeping a floor (default); "
                   "--no-allocate: least-tried families and lanes in rotation. A resume keeps the campaign's.")
@click.option("--without", default=None, metavar="GROUP,...",
              help="Leave form groups out of the draw, to measure what they add: stablehlo, operands, quantized, "
                   "lanes (see docs/campaigns.md). A resume keeps the campaign's.")
@click.option("--fail-on", default=None, help="'new': exit 1 when a new compiler-bug cause was found (default: never).")
@click.option("--bisect-time", type=Duration(), default=None,
              help="After the budget, take the regression ranges of new compiler-bug causes not taken during the "
                   "campaign, over the releases in the toolchain cache, for up to this long (default 2m, or a tenth "
                   "of a longer --time).")
@click.option("--localize-time", type=Duration(), default=None,
              help="After the budget, localize each new wrong value or run-time failure (the phase and pass where "
                   "it starts, by executing intermediate IR) for up to this long in all (default 3m).")
@click.option("--no-localize", is_flag=True, help="No localization step (see `shapefuzz triage --localize`).")
@click.option("--no-bisect", is_flag=True, help="No regression-range phase (see `shapefuzz triage --bisect`).")
@click.option("--fetch-releases", type=int, default=None, metavar="N",
              help="Older releases to have for the regression ranges (the oldest usable, the newest before this "
                   "one, the rest between), fetched into the toolchain cache in the background if missing "
                   "(default 3; 0: only what is cached).")
@click.option("--fetch-disk", default=None, metavar="SIZE",
              help="The most those downloads may add to the toolchain cache (default 1.5G; about 350 MB a release).")
@click.option("--cluster", type=ClusterAddress(), default=None, metavar="ADDRESS",
              help="Run checks, confirmations and shrinks as tasks on a Ray cluster: 'auto' (the running local "
                   "cluster), 'local' (one started for this campaign, reachable from this machine only), HOST:PORT "
                   "or ray://HOST:PORT. Needs shapefuzz[ray]; --jobs defaults to its CPUs.")
@click.option("--cluster-bind", "cluster_bind", default=None, metavar="IP",
              help="With --cluster local: the address of this machine its Ray head listens on (default 127.0.0.1; "
                   "another lets other machines join with `ray start --address`, and run code on it).")
@click.option("--force", is_flag=True,
              help="Resume even where --ops, --backends, --seed, --context-share or --lanes-per-candidate differ "
                   "from the campaign's own (refused by default: the draws of both would mix in one campaign).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
@click.option("--plain", is_flag=True, help="Plain progress lines, also on a terminal (default there: a live view).")
@toolchain_options
@array_cap_option
@click.pass_obj
def fuzz(session: Session, ops, backend_names, time_budget, count, until_saturated, jobs, seed, campaign_dir, corpus_dir,
         compile_timeout, no_shrink, shrink_time, shrink_share, memory_cap, saturate_after, explore,
         lanes_per_candidate, coverage_share, steer, context_share, allocate, without, fail_on, cluster, cluster_bind, bisect_time, localize_time, no_localize, no_bisect,
         fetch_releases, fetch_disk, force, as_json, plain) -> None:
    """Run (or resume) a campaign until its budget is spent or Ctrl-C; bucket and save findings."""
    from shapefuzz.campaign.report import live
    from shapefuzz.campaign.report.summary import json_text, text_lines
    from shapefuzz.campaign.run import FuzzRequest, run_campaign

    request = FuzzRequest(ops, backend_names, time_budget, count, jobs, seed, campaign_dir, corpus_dir,
                          not no_shrink, compile_timeout, tuple(sys.argv[1:]), shrink_time, memory_cap,
                          shrink_share, saturate_after, explore, lanes_per_candidate, fail_on, cluster,
                          session.iree_bin, session.iree_version, coverage=coverage_share,
                          coverage_steer=steer, bisect_time=0.0 if no_bisect else bisect_time,
                          localize_time=0.0 if no_localize else localize_time, fetch_releases=fetch_releases, fetch_disk=fetch_disk,
                          until_saturated=until_saturated, context_share=context_share, force=force,
                          cluster_bind=cluster_bind, allocate=allocate, without=without)
    view = None
    if live.wanted(plain):
        from shapefuzz.campaign.run import DEFAULT_CAMPAIGN

        view = live.CampaignView(campaign_dir or DEFAULT_CAMPAIGN)
    try:
        summary = run_campaign(request, session.toolchain, progress=view)
    finally:
        if view is not None:
            view.close()
    if as_json:
        click.echo(json_text(summary))
    else:
        for line in text_lines(summary):
            click.echo(line)
    if summary.reason == "interrupted":  # stopped gracefully, but stopped: 130 (Ctrl-C) or 143 (SIGTERM)
        sys.exit(interrupts.exit_code())
    sys.exit(EXIT_FOUND if fail_on == "new" and summary.new_findings else EXIT_OK)
