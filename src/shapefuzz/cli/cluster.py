"""`shapefuzz backends --cluster ADDRESS`: per node of a Ray cluster, its toolchain and devices,
and which backends execute, only compile, or are unavailable there."""

from __future__ import annotations

import json

import click

from shapefuzz.cli.common import Session


def show_cluster(session: Session, address: str, as_json: bool) -> None:
    from shapefuzz.campaign.cluster.connect import connect, describe_nodes, disconnect, open_cluster
    from shapefuzz.campaign.cluster.setup import toolchain_spec

    head = session.toolchain
    spec = toolchain_spec(session.iree_bin, session.iree_version)
    owned = connect(address)
    try:
        rows = describe_nodes(open_cluster(address, spec, head, None, lambda line: None))
    finally:
        if owned:
            disconnect()
    if as_json:
        click.echo(json.dumps({"cluster": address, "head_version": head.probe.version, "nodes": rows}, indent=2))
        return
    click.echo(f"cluster {address}: {len(rows)} node(s); head: IREE {head.probe.version}")
    for row in rows:
        if row.get("version") is None:
            click.echo(f"node {row['node']}: refused: {row['refused']}")
            continue
        click.echo(f"node {row['node']}: {row['cpus']:g} CPU(s), IREE {row['version']} ({row['toolchain']})")
        if row["refused"]:
            click.echo(f"  refused:      {row['refused']}; it gets no campaign work")
        click.echo(f"  devices:      {', '.join(row['devices']) or 'none'}")
        for gpu in ("cuda", "hip"):
            if row[gpu]:
                click.echo(f"  {gpu + ':':<13} {row[gpu]}")
        for key, title in (("executes", "executes"), ("compile_only", "compile-only"), ("unavailable", "unavailable")):
            click.echo(f"  {title + ':':<13} {', '.join(row[key]) or '-'}")
