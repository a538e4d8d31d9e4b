"""A rule's own documentation as ``gpuadvisor rules explain`` prints it.

Pure: a loaded rule in, text out (no trailing newline; the command line prints it).
"""

from __future__ import annotations

from gpuadvisor.engine.rulecheck import rule_doc
from gpuadvisor.engine.rules import Rule


def explain_rule(rule: Rule) -> str:
    """What the rule checks, what every option must meet, how it moves the decision,
    why it matters, what to do, its references, examples, old ids and file."""
    doc = rule_doc(rule)
    lines = [
        f"{doc['id']}: {doc['title']}",
        f"category: {doc['category']}   severity: {doc['severity']}   kind: {doc['kind']}",
        "",
        "## When it applies",
        f"    {doc['when']}",
    ]
    if doc["require"]:
        lines += ["", "## What every option must meet", f"    {doc['require']}"]
    effect = doc["effect"]
    moves = [f"{k} {v:+d}" for k, v in {**effect["shape"], **effect["class"]}.items()]
    if effect["fix_first"]:
        moves.append("fix before buying")
    lines += [
        "",
        "## Effect on the decision",
        "    " + (", ".join(moves) or "constraint / informational"),
    ]
    lines += ["", "## Why it matters", " ".join(doc["rationale"].split())]
    lines += ["", "## What to do", doc["action"]]
    if doc["references"]:
        lines += ["", "## References", *[f"- {u}" for u in doc["references"]]]
    lines += ["", "## Examples"]
    for example in doc["examples"]:
        facts = ", ".join(f"{k} = {v}" for k, v in example["facts"].items())
        lines.append(f"- {example['name']} ({example['expect']}): {facts}")
    if doc["aliases"]:
        lines += ["", "Old ids: " + ", ".join(doc["aliases"])]
    lines += ["", f"file: {doc['file']}"]
    return "\n".join(lines)
