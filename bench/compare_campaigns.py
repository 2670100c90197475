"""Whether two fixed-seed campaigns wrote the same store and corpus, for proving a refactor changed
no behaviour. Every table of each campaign.sqlite and every file of each corpus is compared with
what varies between runs masked: timestamps and durations (columns and JSON keys named for time,
floats inside JSON), each run's own campaign and corpus folders, and the compiler's temporary
file names in error text. Prints each table and the corpus as identical or what differed; exit 1
on any difference. Run the same campaign on two checkouts, then compare:

    .venv/bin/shapefuzz fuzz --count 30 --seed 1 --backends llvm-cpu -j 1 --no-shrink --no-bisect \
        --campaign /tmp/a-camp --corpus /tmp/a-corpus
    PYTHONPATH=/other/checkout/src .venv/bin/python -m shapefuzz fuzz ... --campaign /tmp/b-camp --corpus /tmp/b-corpus
    .venv/bin/python bench/compare_campaigns.py /tmp/a-camp /tmp/a-corpus /tmp/b-camp /tmp/b-corpus
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import sys
from pathlib import Path
from typing import Any

# (`recent`: the allocation's recent causes are discounted by the check-seconds a cell spent)
TIME = re.compile(r"seen|wall|time|seconds|started|active|created|finished|when|date|duration|recent|^at$", re.I)
ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ?")
TEMP = re.compile(r"/tmp/shapefuzz-[a-z]+-\d+-\w+")


def _text(s: str, folders: tuple[Path, Path]) -> str:
    for folder, name in zip(folders, ("<CAMPAIGN>", "<CORPUS>")):
        s = s.replace(str(folder), name)
    return ISO.sub("<ISO>", TEMP.sub("<TMP>", s))


def _json(value: Any, folders: tuple[Path, Path]) -> Any:
    if isinstance(value, dict):
        return {k: "<T>" if TIME.search(k) else _json(v, folders) for k, v in value.items()}
    if isinstance(value, list):
        return [_json(v, folders) for v in value]
    if isinstance(value, float):
        return "<F>"  # a lane's seconds
    return _text(value, folders) if isinstance(value, str) else value


def _cell(table: str, column: str, key: Any, value: Any, folders: tuple[Path, Path]) -> Any:
    if TIME.search(column) or (table == "meta" and column == "value" and (TIME.search(str(key)) or
                                                                           str(key).startswith("extra_"))):
        return "<T>"
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return json.dumps(_json(json.loads(value), folders))
        except ValueError:
            pass
    return _text(value, folders) if isinstance(value, str) else value


def tables(campaign: Path, corpus: Path) -> dict[str, list[dict[str, Any]]]:
    db = sqlite3.connect(f"file:{campaign / 'campaign.sqlite'}?mode=ro", uri=True)
    out = {}
    for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name"):
        columns = [r[1] for r in db.execute(f"PRAGMA table_info({name})")]
        rows = [{c: _cell(name, c, r[0], v, (campaign, corpus)) for c, v in zip(columns, r)}
                for r in db.execute(f"SELECT * FROM {name}")]
        out[name] = sorted(rows, key=lambda row: json.dumps(row, sort_keys=True, default=str))
    return out


def corpus_files(campaign: Path, corpus: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for path in sorted(p for p in corpus.rglob("*") if p.is_file() and p.name != ".lock"):
        data = path.read_bytes()
        if path.suffix == ".json":
            data = json.dumps(_json(json.loads(data), (campaign, corpus)))
        elif path.suffix in (".md", ".sh", ".mlir", ".gitignore") or path.name == ".gitignore":
            data = _text(data.decode(), (campaign, corpus))
        out[path.relative_to(corpus).as_posix()] = data
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("campaign_a", type=Path)
    parser.add_argument("corpus_a", type=Path)
    parser.add_argument("campaign_b", type=Path)
    parser.add_argument("corpus_b", type=Path)
    args = parser.parse_args()
    differences = 0
    a, b = tables(args.campaign_a, args.corpus_a), tables(args.campaign_b, args.corpus_b)
    for name in sorted(set(a) | set(b)):
        if a.get(name) == b.get(name):
            print(f"store table {name}: {len(a[name])} rows identical")
            continue
        differences += 1
        print(f"store table {name}: differs ({len(a.get(name, []))} vs {len(b.get(name, []))} rows)")
        for x, y in zip(a.get(name, []), b.get(name, [])):
            if x != y:
                print(f"  a: {({k: v for k, v in x.items() if y.get(k) != v})}"[:400])
                print(f"  b: {({k: v for k, v in y.items() if x.get(k) != v})}"[:400])
    a, b = corpus_files(args.campaign_a, args.corpus_a), corpus_files(args.campaign_b, args.corpus_b)
    for name in sorted(set(a) | set(b)):
        if a.get(name) != b.get(name):
            differences += 1
            print(f"corpus {name}: differs" + ("" if name in a and name in b else " (only in one)"))
    print(f"corpus: {len(a)} and {len(b)} files, {sum(a.get(k) == b.get(k) for k in a)} identical")
    print(f"differences: {differences}")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
