"""``schema`` and ``version``: what gpuadvisor reads and writes, and which data it uses."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from gpuadvisor import __version__
from gpuadvisor.cli.commands_catalog import load_overlaid_catalog
from gpuadvisor.cli.commands_rules import load_overlaid_rules
from gpuadvisor.cli.options import CatalogOpt, RulesOpt, SchemaName


def schema(
    name: Annotated[
        SchemaName,
        typer.Argument(metavar="DOCUMENT", help="Which document: profile, host or decision."),
    ],
) -> None:
    """Print the JSON Schema of a document gpuadvisor reads or writes."""
    model: Any
    if name is SchemaName.profile:
        from gpuadvisor.inputs.profile import Profile

        model = Profile
    elif name is SchemaName.host:
        from gpuadvisor.host.schema import HostSnapshot

        model = HostSnapshot
    elif name is SchemaName.fleet:
        from gpuadvisor.fleet.model import FleetReport

        model = FleetReport
    else:
        from gpuadvisor.decision.model import Decision

        model = Decision
    document = model.model_json_schema(by_alias=True)
    typer.echo(json.dumps(document, indent=2, sort_keys=True))


def version(catalog: CatalogOpt = None, rules: RulesOpt = None) -> None:
    """Print the version of gpuadvisor, its rules and its catalog."""
    typer.echo(f"gpuadvisor {__version__}")
    typer.echo(f"rules {load_overlaid_rules(rules).version}")
    typer.echo(f"catalog {load_overlaid_catalog(catalog).version}")
