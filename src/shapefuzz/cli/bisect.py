"""`shapefuzz bisect ENTRY`: the releases where an entry's bug appeared and went away."""

from __future__ import annotations

import json

import click

from shapefuzz.cli.common import toolchain_options
from shapefuzz.cli.params import VersionSpec
from shapefuzz.corpus import DEFAULT_CORPUS


@click.command("bisect")
@click.argument("entry")
@click.option("--versions", "spec", type=VersionSpec(), default="3.1.0..", show_default=True,
              help="Releases to search: a range LOW..HIGH (inclusive, either end optional) or a list 3.11.0,3.13.0.")
@click.option("--corpus", "corpus_dir", default=DEFAULT_CORPUS, show_default=True, type=click.Path(file_okay=False),
              help="Where to look ENTRY up when it is an id.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@toolchain_options
def bisect(entry: str, spec: str, corpus_dir: str, as_json: bool) -> None:
    """Find the first release where ENTRY fails and the first where it is fixed.

    Released iree-base-compiler/iree-base-runtime wheels are installed side by side into
    ~/.cache/shapefuzz/toolchains/<version>/ (about 350 MB on disk each, once) and reused; your
    environment is never touched. Binary search over the releases `pip index versions` lists.
    Each release is judged as a campaign's regression range judges it: by the same failure (stage,
    status, failing pass); a release that fails another way cannot tell, and one that cannot parse
    the reproducer is judged on its generic form, printed by the pinned wheels. The result is recorded in the entry's meta.json ("bisect"), where `export --format issue`
    quotes it ("worked in X, fails from Y")."""
    from shapefuzz.recheck.bisect import available_versions, bisect_entry, cache_root, select_versions
    from shapefuzz.corpus import find_entry, now_text, update_meta
    from shapefuzz.recheck.regression import same_failure_check
    from shapefuzz.errors import CorpusError

    found = find_entry(entry, corpus_dir)
    versions = select_versions(spec, available_versions())
    say = (lambda line: click.echo(line, err=True))
    say(f"bisecting {found.id} over {len(versions)} releases ({versions[0]}..{versions[-1]}); cache {cache_root()}")
    result = bisect_entry(found, versions, say, check=same_failure_check())
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=2))
    else:
        for line in result.lines():
            click.echo(line)
    try:
        update_meta(found.path, bisect=result.to_meta(now_text()))
    except (CorpusError, OSError) as error:
        say(f"note: could not record the result in {found.path}/meta.json ({error})")
