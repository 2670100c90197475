"""report.html as a person sees it: a real short campaign's dashboard opened in Debian's headless
Chromium (plots drawn with data, every link a file of the campaign or its corpus, nothing
requested from outside the machine), the empty dashboard, bad input, the refresh during a
campaign, and `gen --stats --heatmap`."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from shapefuzz.campaign.report.dashboard import REPORT_HTML, Refresher, write_dashboard
from shapefuzz.campaign.database import CampaignStore, CandidateRow
from shapefuzz.campaign.outcomes import Verdict

SHAPEFUZZ = str(Path(sys.executable).parent / "shapefuzz")
CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")


def _run(*argv: str, cwd: Path, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run([SHAPEFUZZ, *argv], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def campaign(tmp_path_factory) -> tuple[Path, Path, subprocess.CompletedProcess]:
    """A real campaign of two topk candidates on llvm-cpu, every compile instrumented for
    coverage, run as a log (not a terminal). At seed 4 its first candidate (drawn before any
    result can steer the draws) hits the compiler's 'unbounded stack allocations' error."""
    root = tmp_path_factory.mktemp("dash")
    run = _run("fuzz", "--ops", "topk", "--backends", "llvm-cpu", "--count", "2", "--jobs", "2", "--seed", "4",
               "--coverage", "1", "--no-shrink", "--campaign", "camp", "--corpus", "corpus", cwd=root)
    assert run.returncode == 0, run.stderr
    return root / "camp", root / "corpus", run


def _browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1280,2000", "--no-first-run", "--disable-extensions",
                 "--disable-background-networking", "--disable-component-update"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    return webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)


def _requested(driver) -> list[str]:
    urls = []
    for record in driver.get_log("performance"):
        message = json.loads(record["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


_PLOTS_JS = """
return Array.from(document.querySelectorAll('figure.plot svg')).map(svg => {
  const box = svg.getBoundingClientRect();
  const data = Array.from(svg.querySelectorAll('[id*="-data-"]')).map(el => {
    const paths = el.matches('path') ? [el] : Array.from(el.querySelectorAll('path'));
    const numbers = paths.map(p => (p.getAttribute('d') || '').match(/-?[0-9.]+/g) || []).flat().length;
    const r = el.getBoundingClientRect();
    return {id: el.id, numbers: numbers, w: r.width, h: r.height};
  });
  return {w: box.width, h: box.height, data: data};
});
"""


@pytest.mark.iree
@pytest.mark.skipif(CHROMIUM is None or CHROMEDRIVER is None,
                    reason="Debian's chromium and chromium-driver are not installed (scripts/bootstrap.sh installs "
                           "them when run as root)")
def test_report_html_in_headless_chromium(campaign):
    folder, corpus, run = campaign
    page = folder / REPORT_HTML
    assert page.is_file(), "the campaign did not write report.html"
    driver = _browser()
    try:
        driver.get(page.as_uri())
        # The plots rendered: each <svg> has a size on screen and artists that carry data.
        plots = driver.execute_script(_PLOTS_JS)
        assert len(plots) == 5, plots  # causes, rate, worker time, lane x family, coverage
        for plot in plots:
            assert plot["w"] > 200 and plot["h"] > 50, plot
            drawn = [d for d in plot["data"] if d["numbers"] >= 4 and (d["w"] > 0 or d["h"] > 0)]
            assert drawn, f"a plot without data: {plot}"
        ids = {d["id"] for p in plots for d in p["data"]}
        assert "causes-data-causes-compiler-bug" in ids and "rate-data-rate" in ids
        assert "matrix-data-matrix-bug" in ids and "coverage-data-coverage-lane-llvm-cpu" in ids
        body = driver.find_element("tag name", "body").text
        assert "No coverage data" not in body
        rows = driver.find_elements("css selector", "#causes tr.cause")
        assert len(rows) == 1 and "compiler bug" in rows[0].text and "llvm-cpu" in rows[0].text, body
        # Every link resolves to a file: the bug report and its files in the campaign folder, the
        # corpus entry and its reproducer in the corpus the campaign wrote to.
        links = {a.text: a.get_attribute("href") for a in driver.find_elements("css selector", "a[href]")}
        assert set(links) == {"entry", "reproducer", "bug report"}, links
        for name, href in links.items():
            url = urlparse(href)
            assert url.scheme == "file", href
            path = Path(unquote(url.path))
            assert path.is_file(), f"{name} -> {href} does not resolve"
            home = folder if name == "bug report" else corpus
            assert path.resolve().is_relative_to(home.resolve()), f"{name} -> {path} is outside {home}"
        # The bug report opens as text a person can read and file.
        driver.get(links["bug report"])
        report = driver.find_element("tag name", "body").text
        assert "### What happened?" in report and "memref.alloca" in report
        # Nothing was requested from outside the machine: only the page and the files it links.
        urls = _requested(driver)
        assert any(u.startswith("file://") and u.endswith(REPORT_HTML) for u in urls), urls
        assert all(urlparse(u).scheme in ("file", "data") for u in urls), urls
        severe = [r for r in driver.get_log("browser") if r["level"] == "SEVERE"]
        assert not severe, severe  # e.g. a Content-Security-Policy violation
    finally:
        driver.quit()


@pytest.mark.iree
def test_campaign_log_stays_plain_and_report_links_issue_text(campaign):
    """Not a terminal: plain timestamped lines, no escape sequences; the bug report is the
    export's issue text with its files beside it."""
    folder, corpus, run = campaign
    assert "\x1b[" not in run.stderr and "━" not in run.stderr
    assert re.search(r"^\[ *\d+s\] campaign camp: topk on llvm-cpu", run.stderr, re.M), run.stderr
    issues = list((folder / "issues").glob("cause-*.md"))
    assert len(issues) == 1
    text = issues[0].read_text()
    assert "### Steps to reproduce your issue" in text and "llvm-cpu: fails the same way in this campaign" in text
    assert (issues[0].with_suffix(".files") / "reproducer.mlir").is_file()
    page = (folder / REPORT_HTML).read_text()
    assert "<script" not in page and "https://" not in page
    assert "http://" not in page.replace('="http://www.w3.org/', "")  # only SVG's namespace names


def _main(monkeypatch, capsys, cwd: Path, *argv: str) -> tuple[int, str, str]:
    """The command line in this process (main(), as the console script runs it): exit status,
    stdout, stderr."""
    from shapefuzz.cli import main

    monkeypatch.chdir(cwd)
    monkeypatch.setattr(sys, "argv", ["shapefuzz", *argv])
    try:
        main()
        code = 0
    except SystemExit as stop:
        code = stop.code or 0
    out, err = capsys.readouterr()
    return code, out, err


def _fake_candidate(i: int, family: str = "conv") -> CandidateRow:
    return CandidateRow(key=f"k{i}", idx=i, seed=i, family=family, features=("a",), backends=("llvm-cpu",),
                        verdict=Verdict.PASS, outcome={"llvm-cpu": ["ok", 0.5]}, payload="{}", size=10,
                        tool_seconds=0.4, task_seconds=0.5, finished=float(i))


def test_empty_campaign_renders_an_empty_dashboard(tmp_path):
    store = CampaignStore(tmp_path / "camp")
    try:
        page = write_dashboard(store).read_text()
    finally:
        store.close()
    assert "No candidates yet" in page and "<svg" not in page and "No causes" in page


def test_report_command_html_and_bad_input(tmp_path, monkeypatch, capsys):
    store = CampaignStore(tmp_path / "camp")
    session = store.start_session([])
    for i in range(5):
        store.record(_fake_candidate(i, "conv" if i % 2 else "topk"), [], session, float(i))
    store.close()
    out = tmp_path / "elsewhere" / "dash.html"
    out.parent.mkdir()
    code, _, err = _main(monkeypatch, capsys, tmp_path, "report", "camp", "--html", "-o", str(out))
    assert code == 0, err
    page = out.read_text()
    # no compile was instrumented: four plots, and the page says there is no coverage data
    assert page.count("<svg") == 4 and "5</b>candidates" in page and "No coverage data" in page
    # A folder with no store, a store from a newer format, -o without --html: one line, exit 2.
    (tmp_path / "nothing").mkdir()
    newer = tmp_path / "newer"
    CampaignStore(newer).close()
    db = sqlite3.connect(newer / "campaign.sqlite")
    db.execute("UPDATE meta SET value='99' WHERE key='format_version'")
    db.commit()
    db.close()
    for argv, says in ((["nothing", "--html"], "no campaign in"), (["newer", "--html"], "newer shapefuzz"),
                       (["camp", "-o", "x.html"], "goes with --html")):
        code, _, err = _main(monkeypatch, capsys, tmp_path, "report", *argv)
        assert code == 2 and says in err, (argv, err)
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (newer / REPORT_HTML).exists()


def test_coverage_section_from_the_coverage_map(tmp_path):
    """A store whose compiles were instrumented: the coverage plot (by lane and by family) with
    data, the passes of interest never reached; the summary keeps coverage apart from the
    cluster's nodes (a positional slip once put it in `nodes`, and the text summary crashed)."""
    from shapefuzz.campaign.report.summary import summarize, text_lines

    store = CampaignStore(tmp_path / "camp")
    session = store.start_session([])
    for i in range(3):
        store.record(_fake_candidate(i), [], session, float(i))
    with store.transaction() as db:
        db.executemany("INSERT INTO coverage VALUES (?,?,?,1,?,0,?)",
                       [("llvm-cpu", "CSEPass", "", 0.5, "k0"), ("llvm-cpu", "CSEPass", "fold", 1.5, "k1"),
                        ("vmvx", "CSEPass", "", 2.0, "k2")])
        db.executemany("INSERT INTO covered VALUES (?,?,?,?,?)", [("k0", "llvm-cpu", 1, 1, 0.5)])
    try:
        summary = summarize(store)
        assert summary.nodes == [] and summary.coverage["passes"] == 1
        assert any("never reached" in line for line in text_lines(summary))
        page = write_dashboard(store, summary=summary).read_text()
    finally:
        store.close()
    assert 'id="coverage-data-coverage-lane-llvm-cpu"' in page and 'id="coverage-data-coverage-family-conv"' in page
    assert "never reached: split reduction" in page and "No coverage data" not in page


def test_refresher_rewrites_only_when_candidates_were_added(tmp_path):
    store = CampaignStore(tmp_path / "camp")
    session = store.start_session([])
    store.record(_fake_candidate(0), [], session, 1.0)
    refresher = Refresher(tmp_path / "camp", None, every=0.2).start()
    try:
        deadline = time.monotonic() + 20
        while refresher.writes < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        first = (tmp_path / "camp" / REPORT_HTML).stat().st_mtime_ns
        time.sleep(0.6)
        assert refresher.writes == 1  # nothing new: not rewritten
        store.record(_fake_candidate(1), [], session, 2.0)
        while refresher.writes < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        refresher.stop()
        store.close()
    assert refresher.writes == 2
    assert (tmp_path / "camp" / REPORT_HTML).stat().st_mtime_ns > first
    assert "2</b>candidates" in (tmp_path / "camp" / REPORT_HTML).read_text()


def test_refresh_interval_from_the_environment(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SHAPEFUZZ_HTML_EVERY", "soon")
    code, _, err = _main(monkeypatch, capsys, tmp_path, "fuzz", "--count", "1", "--campaign", "c", "--plain")
    assert code == 2 and "SHAPEFUZZ_HTML_EVERY" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "c").exists()  # checked before the campaign folder is touched


def test_gen_stats_heatmap(tmp_path, monkeypatch, capsys):
    from PIL import Image

    out = tmp_path / "cov.png"
    code, _, err = _main(monkeypatch, capsys, tmp_path, "gen", "--stats", "30", "--op", "one_hot", "--swarm",
                         "--heatmap", str(out))
    assert code == 0, err
    image = Image.open(out)
    assert image.format == "PNG" and image.width > 300 and image.height > 300
    colors = image.convert("RGB").getcolors(maxcolors=1 << 20)
    assert colors is not None and len(colors) > 20  # a picture, not a blank canvas
    code, _, err = _main(monkeypatch, capsys, tmp_path, "gen", "--heatmap", str(out), "--op", "conv")
    assert code == 2 and "--heatmap goes with --stats" in err
