"""`shapefuzz backends`: the toolchain and what each backend can do here."""

from __future__ import annotations

import dataclasses
import json

import click

from shapefuzz.iree.backends import BACKENDS
from shapefuzz.iree.vulkan_drivers import no_vulkan_device_note
from shapefuzz.families.gates import release_gates
from shapefuzz.families.registry import FAMILY_MODULES
from shapefuzz.cli.common import Session, toolchain_options
from shapefuzz.cli.params import ClusterAddress


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--cluster", type=ClusterAddress(), default=None, metavar="ADDRESS",
              help="Per node of a Ray cluster ('auto', HOST:PORT, ray://HOST:PORT): what compiles and executes there.")
@toolchain_options
@click.pass_obj
def backends(session: Session, as_json: bool, cluster: str | None) -> None:
    """The toolchain and, for each backend, whether it compiles and executes here."""
    if cluster is not None:
        from shapefuzz.cli.cluster import show_cluster

        show_cluster(session, cluster, as_json)
        return
    toolchain = session.toolchain
    probe = toolchain.probe
    rows = [b.describe(probe) for b in BACKENDS.values()]
    gated = release_gates(toolchain, FAMILY_MODULES)
    if as_json:
        click.echo(json.dumps({
            "toolchain": {"source": toolchain.source, "iree_compile": str(toolchain.compile_bin),
                          "iree_run_module": str(toolchain.run_bin) if toolchain.run_bin else None,
                          "version": probe.version},
            "devices": list(probe.devices),
            "cuda": {"arch": probe.cuda_arch, "runs": list(probe.cuda_runs), "note": probe.cuda_note},
            "backends": rows,
            "off_for_release": [dataclasses.asdict(c) for c in gated.closed],
        }, indent=2))
        return
    click.echo(f"toolchain: {toolchain.source} ({toolchain.compile_bin})")
    click.echo(f"version:   {probe.version}")
    click.echo(f"devices:   {', '.join(probe.devices) or 'none'}")
    if probe.cuda_note:
        click.echo(f"cuda:      {probe.cuda_note}")
    width = max(30, *(len(row["name"]) for row in rows))
    for row in rows:
        mark = "*" if row["default"] else " "
        click.echo(f" {mark}{row['name']:<{width}} {row['availability']:<40} {row['description']}")
    click.echo("(* in the default set)")
    for line in gated.lines() or ["every op family and form parses with this release"]:
        click.echo(f"families:  {line}")
    if not probe.has_device("vulkan"):
        click.echo(f"note: no Vulkan device: {no_vulkan_device_note()}", err=True)
