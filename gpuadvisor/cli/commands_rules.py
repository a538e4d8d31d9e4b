"""``rules list|explain|lint|test|facts``: the rule base, inspected and checked."""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Annotated, Any

import typer

from gpuadvisor.cli.options import ListFormat, RulesOpt
from gpuadvisor.errors import InputError


def load_overlaid_rules(overlays: list[Path] | None, base: Path | None = None) -> Any:
    from gpuadvisor.engine.rules import load_rules

    return load_rules(overlays or [], base=base)


def rules_list(
    rules: RulesOpt = None,
    fmt: Annotated[ListFormat, typer.Option("--format", "-f")] = ListFormat.table,
) -> None:
    """List every rule with its category, severity and kind."""
    from gpuadvisor.engine.rulecheck import rule_doc

    base = load_overlaid_rules(rules)
    docs = [rule_doc(rule) for rule in base.rules]
    if fmt is ListFormat.json:
        typer.echo(json.dumps(docs, indent=2))
        return
    for doc in docs:
        kinds = f"{doc['id']:12} {doc['category']:15} {doc['severity']:8} {doc['kind']:11}"
        typer.echo(f"{kinds} {doc['title']}")


def rules_explain(
    rule_id: Annotated[
        str, typer.Argument(metavar="ID", help="Rule id or old alias, in any case (vram-001).")
    ],
    rules: RulesOpt = None,
) -> None:
    """Print a rule's own documentation: what it checks, why, what to do, its examples."""
    from gpuadvisor.decision.explain import explain_rule

    base = load_overlaid_rules(rules)
    typer.echo(explain_rule(base.get(rule_id_in(base, rule_id))))


def rule_id_in(base: Any, typed: str) -> str:
    """The id (or alias) of ``base`` that ``typed`` names, whatever its case; an
    InputError with the closest ids when there is none."""
    names: dict[str, str] = {}
    for rule in base.rules:
        for name in (rule.id, *rule.data.aliases):
            names.setdefault(name.upper(), name)
    wanted = typed.strip().upper()
    if wanted in names:
        return names[wanted]
    close = difflib.get_close_matches(wanted, list(names), n=3, cutoff=0.6)
    # Every id ends in -NNN, so a weak match is only the number: offer the strong ones.
    close = close[:1] + [
        c for c in close[1:] if difflib.SequenceMatcher(None, wanted, c).ratio() >= 0.8
    ]
    hint = "`gpuadvisor rules list` lists every rule."
    if close:
        others = ", ".join(f"'{names[c]}'" for c in close[1:])
        hint = f"did you mean '{names[close[0]]}'?" + (f" (or {others})" if others else "")
        hint += " `gpuadvisor rules list` lists every rule."
    raise InputError(f"no rule {typed!r}", hint=hint)


def rules_lint(
    folder: Annotated[
        Path | None, typer.Argument(metavar="DIR", help="Rules folder (default: bundled).")
    ] = None,
) -> None:
    """Refuse rules without rationale, action, category or passing examples."""
    from gpuadvisor.engine.rulecheck import lint_rules
    from gpuadvisor.engine.rules import load_rules

    base = load_rules(base=folder)
    if not base.rules:
        raise InputError("no rule files (*.toml) in this folder", file=str(folder))
    problems = lint_rules(base)
    for problem in problems:
        typer.echo(problem, err=True)
    if problems:
        raise InputError(f"{len(problems)} problem(s) in {len(base.rules)} rules")
    typer.echo(f"{len(base.rules)} rules, all well-formed and all examples pass")


def rules_test(rules: RulesOpt = None) -> None:
    """Run every rule's examples."""
    from gpuadvisor.engine.rulecheck import run_examples

    base = load_overlaid_rules(rules)
    results = run_examples(base.rules)
    failed = [r for r in results if not r.passed]
    for result in failed:
        typer.echo(f"FAIL {result.test_id}: expected {result.expected} ({result.detail})", err=True)
    typer.echo(f"{len(results) - len(failed)} passed, {len(failed)} failed")
    if failed:
        raise typer.Exit(1)


def rules_facts(
    fmt: Annotated[ListFormat, typer.Option("--format", "-f")] = ListFormat.table,
) -> None:
    """List every fact a rule may read, with type, unit and meaning."""
    from dataclasses import asdict

    from gpuadvisor.engine.factspec import ALL_FACTS

    if fmt is ListFormat.json:
        typer.echo(json.dumps([asdict(spec) for spec in ALL_FACTS], indent=2))
        return
    for spec in ALL_FACTS:
        kind = spec.type + ("?" if spec.nullable else "")
        choices = f" ({'|'.join(spec.choices)})" if spec.choices else ""
        unit = f" [{spec.unit}]" if spec.unit else ""
        typer.echo(f"{spec.name:45} {kind:8} {spec.description}{unit}{choices}")
