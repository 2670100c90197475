"""A shared campaign folder or corpus is hostile input: no name read back from it becomes a path
outside its folder (a tampered `cause`, a linked `issues/`), and no compiler message, pass name or
stored value becomes live HTML or breaks out of its code span, comment or table cell in the
Markdown we write (issue 36, defects 1-4). A pytest export of NaN/Inf is valid Python (defect 7)."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from markdown_it import MarkdownIt

from shapefuzz import markup
from shapefuzz.campaign.report.summary import markdown, summarize
from shapefuzz.campaign.database import BucketRow, CampaignStore
from shapefuzz.campaign.outcomes import BucketState, Triage
from shapefuzz.cli import cli
from shapefuzz.corpus import Finding, load_entry, rebuild_index, save_finding, update_meta
from shapefuzz.files import UnsafeName, child, fresh_dir, real_dir, safe_name
from shapefuzz.model import Signature, Stage, Status

BIN = Path(sys.executable).parent
PAYLOAD = "ext`<img src=x onerror=alert(1)>`--->"
HOSTILE_MLIR = f"""func.func private @"{PAYLOAD}"(tensor<4xf32>) -> tensor<4xf32>
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {{
  %r = call @"{PAYLOAD}"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}}
"""


class _Tags(HTMLParser):
    """The start tags a browser would make of rendered HTML (comments are not tags)."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.injected: list[str] = []  # an event handler, or an image other than our own plot

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if any(name.startswith("on") for name, _ in attrs) or (tag == "img" and dict(attrs).get("src") != "buckets.svg"):
            self.injected.append(f"<{tag} {attrs}>")


def _parsed(markdown_text: str) -> _Tags:
    parser = _Tags()
    parser.feed(MarkdownIt("commonmark").enable("table").render(markdown_text))
    return parser


def live_tags(markdown_text: str) -> list[str]:
    """What a CommonMark + GFM-tables renderer turns the Markdown into: its HTML start tags."""
    return _parsed(markdown_text).tags


def injected(markdown_text: str) -> list[str]:
    """The tags in the rendered Markdown that came from the data: event handlers, foreign images."""
    return _parsed(markdown_text).injected


def _cli(cwd: Path, *argv: str):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(cli, list(argv))
    finally:
        os.chdir(old)


# --- the one quoting rule ----------------------------------------------------------------------


@pytest.mark.parametrize("value", ["plain", "a`b", "``", "`x", "x`", " ", "a|b", "<img src=x onerror=alert(1)>",
                                   "```\n<img src=x>", "\\`<b>"])
def test_code_spans_and_cells_hold_any_content(value):
    """A code span is one <code> holding the value whatever it holds; a cell keeps its row's columns."""
    rendered = MarkdownIt("commonmark").renderInline(markup.code(value))
    assert rendered.startswith("<code>") and rendered.endswith("</code>") and rendered.count("<code>") == 1, rendered
    row = f"| {markup.cell(value)} | {markup.code_cell(value)} | end |"
    html = MarkdownIt("commonmark").enable("table").render(f"| a | b | c |\n|---|---|---|\n{row}\n")
    assert html.count("<td>") == 3 and "<td>end</td>" in html, html
    assert "img" not in live_tags(markup.text(value)) and live_tags(f"x {markup.text(value)} y") == ["p"]


def test_code_span_content_survives_rendering():
    for value in ("a`b", "`x", "x``y`", "<img src=x>"):
        rendered = MarkdownIt("commonmark").renderInline(markup.code(value))
        assert rendered == f"<code>{value.replace('&', '&amp;').replace('<', '&lt;').replace('>', '&gt;')}</code>"
    assert markup.code("linalg.generic") == "`linalg.generic`"  # normal content looks as it did


@pytest.mark.parametrize("value", ["plain", "a`b", "`<img src=x onerror=alert(1)>` and <img src=x>", "``", "`x` `y",
                                   "\\`<b>`", "with `--iree-opt-const-eval=false`: `translation_info<pipeline = \"...\">`"])
def test_spans_are_code_and_the_rest_text(value):
    """Our evidence sentences mark flags and IR with backticks: those become code spans, nothing else
    renders as HTML, and what is read stays as it was."""
    html = MarkdownIt("commonmark").renderInline(markup.spans(value))
    assert set(live_tags(f"x {markup.spans(value)} y")) <= {"p", "code"} and not injected(markup.spans(value))
    assert html.count("<code>") == len(re.findall(r"`[^`]+`", value)), html
    plain = re.sub(r"</?code>", "", html).replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&")
    assert plain == re.sub(r"`([^`]+)`", r"\1", value)


def test_evidence_flags_render_as_code():
    said = markup.spans("with `--iree-opt-const-eval=false`: the IR `a<b>` computes right")
    assert said == "with `--iree-opt-const-eval=false`: the IR `a<b>` computes right"


@pytest.mark.parametrize("value", ["--->", "a-->b", "x --!> y", "<!-- -->", "-", "--", "trailing-"])
def test_a_comment_cannot_be_closed_by_its_content(value):
    line = f"<!-- Suggested title: {markup.comment(value)} -->"
    assert "--" not in markup.comment(value)
    assert line.index("-->") == len(line) - 3 and "--!>" not in line
    assert live_tags(line + "\n\n" + markup.text("<img src=x>")) == ["p"]


def test_fenced_block_cannot_be_closed_by_its_content():
    lines = markup.fenced("```\n<img src=x onerror=alert(1)>\n````", "text")
    html = MarkdownIt("commonmark").render("\n".join(lines))
    assert live_tags("\n".join(lines)) == ["pre", "code"] and "&lt;img" in html


# --- names read back become paths only through files.child -----------------------------------------


@pytest.mark.parametrize("name", ["..", ".", "", "../../victim", "/etc/passwd", "a/b", "a\\b", "a\x00b", "a\nb",
                                  " x", 7, None])
def test_unsafe_names_are_refused(name, tmp_path):
    with pytest.raises(UnsafeName):
        child(tmp_path, name, "cause")


def test_child_refuses_a_link_and_folders_are_replaced_never_followed(tmp_path):
    outside = tmp_path / "outside"
    (outside / "keep").mkdir(parents=True)
    (tmp_path / "camp").mkdir()
    (tmp_path / "camp" / "link").symlink_to(outside)
    with pytest.raises(UnsafeName, match="symbolic link"):
        child(tmp_path / "camp", "link", "cause")
    assert child(tmp_path / "camp", "cause-0123456789", "cause") == tmp_path / "camp" / "cause-0123456789"
    assert safe_name("cause-ab-2", "cause") == "cause-ab-2"
    real_dir(tmp_path / "camp" / "link")  # a link in a folder's place is replaced
    fresh_dir(tmp_path / "camp" / "link")
    assert not (tmp_path / "camp" / "link").is_symlink() and (outside / "keep").is_dir()
    (tmp_path / "camp" / "files").symlink_to(outside)
    fresh_dir(tmp_path / "camp" / "files")
    assert (outside / "keep").is_dir() and not (tmp_path / "camp" / "files").is_symlink()


# --- real IREE: a function name that the compiler echoes --------------------------------------------


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """`corpus add` of a module whose private function's name carries backticks, `<img onerror>`
    and `--->`: iree-compile 3.13 echoes the name in its error ('vm.import' op must reference ...)."""
    root = tmp_path_factory.mktemp("hostile")
    (root / "h.mlir").write_text(HOSTILE_MLIR)
    added = _cli(root, "corpus", "add", "h.mlir", "--backends", "llvm-cpu", "--corpus", "corpus")
    assert added.exit_code == 0, added.output
    entries = [p for p in (root / "corpus").iterdir() if p.is_dir()]
    assert len(entries) == 1 and PAYLOAD in load_entry(entries[0]).meta["detail"]
    return root, entries[0]


@pytest.mark.iree
def test_issue_export_of_a_name_the_compiler_echoes(hostile):
    root, entry = hostile
    run = _cli(root, "export", str(entry), "--format", "issue", "-o", "out.md")
    assert run.exit_code == 0, run.output
    text = (root / "out.md").read_text()
    first = text.splitlines()[0]
    assert first.startswith("<!-- Suggested title: ") and PAYLOAD[:10] in first
    assert first.index("-->") == len(first) - 3, first  # the comment is not closed early
    assert not injected(text), "a live <img onerror> in the rendered issue"
    assert text.count("onerror") >= 3  # the payload is there, quoted (in code spans and code blocks), not dropped


def _store_with_cause(folder: Path, corpus: Path, entry: Path, cause: str, failing_pass: str = "") -> None:
    sig = load_entry(entry).signature
    store = CampaignStore(folder)
    store.set_meta("config", json.dumps({"corpus": str(corpus)}))
    store.start_session([])
    store.put_bucket(BucketRow(sig=str(sig), sig_json=sig.to_json(), backend=sig.backend, stage=sig.stage.value,
                               status=sig.status.value, family="conv", count=1, first_seen=0.0, last_seen=0.0,
                               first_wall=0.0, last_wall=0.0, state=BucketState.CONFIRMED, repro_key="k",
                               repro_size=10, repro_text="x", detail="detail", corpus_entry=str(entry),
                               shrunk_size=None, cause="cause-0000000000", triage=Triage.COMPILER_BUG))
    if failing_pass:
        store.db.execute("INSERT INTO failing_passes (bucket, pass) VALUES (?, ?)", (str(sig), failing_pass))
        store.db.commit()
    store.close()
    db = sqlite3.connect(folder / "campaign.sqlite")  # what the probe did: tamper with the column
    db.execute("UPDATE buckets SET cause=?", (cause,))
    db.commit()
    db.close()


@pytest.mark.iree
@pytest.mark.parametrize("how", ["relative", "absolute"])
def test_a_tampered_cause_writes_and_deletes_nothing_outside(hostile, tmp_path, how):
    root, entry = hostile
    corpus = tmp_path / "corpus"
    mine = Path(shutil.copytree(entry, corpus / entry.name))
    victim = tmp_path / "victim"
    (tmp_path / "victim.files").mkdir()
    (tmp_path / "victim.files" / "keep.txt").write_text("keep")
    cause = "../../victim" if how == "relative" else str(victim)
    _store_with_cause(tmp_path / "camp", corpus, mine, cause)
    before = (mine / "meta.json").read_text()
    run = _cli(tmp_path, "report", "camp", "--html")
    assert run.exit_code == 0, run.output
    assert (tmp_path / "victim.files" / "keep.txt").read_text() == "keep"
    assert not (tmp_path / "victim.md").exists() and not list((tmp_path / "camp").glob("issues/*.md"))
    said = [line for line in run.output.splitlines() if "not a plain file name" in line]
    assert len(said) == 1 and "cause" in said[0], run.output
    # triage copies no tampered cause into the entry's meta.json, and says so in one line per entry
    run = _cli(tmp_path, "triage", "camp")
    assert run.exit_code == 0, run.output
    assert (mine / "meta.json").read_text() == before
    assert "could not annotate" in run.output and "not a plain file name" in run.output
    assert (tmp_path / "victim.files" / "keep.txt").exists() and not (tmp_path / "victim.md").exists()


@pytest.mark.iree
def test_issues_as_a_link_is_replaced_and_a_stored_entry_path_stays_in_the_corpus(hostile, tmp_path):
    root, entry = hostile
    corpus = tmp_path / "corpus"
    mine = Path(shutil.copytree(entry, corpus / entry.name))
    elsewhere = Path(shutil.copytree(entry, tmp_path / "elsewhere" / entry.name))
    outside = tmp_path / "outside"
    (outside / "cause-0000000000.files").mkdir(parents=True)
    (outside / "cause-0000000000.files" / "keep.txt").write_text("keep")
    _store_with_cause(tmp_path / "camp", corpus, elsewhere, "cause-0000000000")  # the store names a path outside
    (tmp_path / "camp" / "issues").symlink_to(outside)
    run = _cli(tmp_path, "report", "camp", "--html")
    assert run.exit_code == 0, run.output
    issues = tmp_path / "camp" / "issues"
    assert not issues.is_symlink() and (issues / "cause-0000000000.md").is_file()
    assert (outside / "cause-0000000000.files" / "keep.txt").read_text() == "keep"
    assert sorted(p.name for p in outside.iterdir()) == ["cause-0000000000.files"]
    before = (elsewhere / "meta.json").read_text()
    assert _cli(tmp_path, "triage", "camp").exit_code == 0
    assert (elsewhere / "meta.json").read_text() == before  # the entry inside the corpus was annotated instead
    assert load_entry(mine).meta["cause"] == "cause-0000000000"


# --- report.md and INDEX.md ----------------------------------------------------------------------


@pytest.mark.iree
def test_report_md_and_index_quote_compiler_text_and_pass_names(hostile, tmp_path):
    root, entry = hostile
    corpus = tmp_path / "corpus"
    mine = Path(shutil.copytree(entry, corpus / entry.name))
    pass_name = "iree-fold|`x` <img src=x onerror=alert(1)>"
    _store_with_cause(tmp_path / "camp", corpus, mine, "cause-0000000000", failing_pass=pass_name)
    store = CampaignStore(tmp_path / "camp", create=False)
    try:
        text = markdown(summarize(store))
    finally:
        store.close()
    assert not injected(text)
    html = MarkdownIt("commonmark").enable("table").render(text)
    rows = [row for row in html.split("<tr>") if "cause-0000000000" in row]
    assert rows and all(row.count("<td>") == 13 for row in rows), rows  # the `|` shifted no column
    update_meta(mine, cause="`<img src=x>`|x", bug={**load_entry(mine).meta["bug"], "component": "a|<b>"})
    index = rebuild_index(corpus).read_text()
    assert not injected(index) and "b" not in live_tags(index)
    table = MarkdownIt("commonmark").enable("table").render(index)
    assert all(row.count("<td>") == 17 for row in table.split("<tr>")[2:]), table  # scope, where, range are columns


# --- a pytest export of NaN and Inf --------------------------------------------------------------

DIVIDE = """func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %r = arith.divf %a, %b : tensor<4xf32>
  return %r : tensor<4xf32>
}
"""


@pytest.mark.iree
def test_pytest_export_of_nan_and_inf_shows_a_fix_as_xpass(tmp_path):
    """An entry still marked failing whose bug is gone: the exported strict-xfail test runs (no
    NameError on a bare `nan`) and passes, so pytest reports XPASS(strict)."""
    a = np.array([np.nan, 1, -1, 2], dtype=np.float32)
    b = np.array([1, 0, 0, 2], dtype=np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = a / b  # nan, inf, -inf, 1: what a right backend computes
    entry, _ = save_finding(tmp_path / "corpus", Finding(
        Signature("llvm-cpu", Stage.COMPARE, Status.MISMATCH, "result 0 differs"), DIVIDE, ("llvm-cpu",), None, 0,
        [a, b], [expected], "3.13.0", [], "result 0 differs"))
    out = tmp_path / "tests" / "test_divide.py"
    run = _cli(tmp_path, "export", str(entry), "--format", "pytest", "-o", str(out))
    assert run.exit_code == 0, run.output
    source = out.read_text()
    assert 'float("nan")' in source and 'float("-inf")' in source
    env = dict(os.environ, PATH=f"{BIN}:{os.environ['PATH']}")
    ran = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rxX", str(out)],
                         env=env, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert "XPASS(strict)" in ran.stdout and "NameError" not in ran.stdout, ran.stdout[-3000:]
