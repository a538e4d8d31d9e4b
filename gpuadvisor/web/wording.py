"""The one mapping from the command-line report's words to the page's (``wording.toml``):
labels for facts, names for sources, web actions for rules whose action names a fact
or a command, and replacements for command-line terms.

:meth:`Wording.words` is the only way a text of the decision reaches the page: it
replaces command-line terms and structured pieces (a score beside a kind of purchase),
then rule codes (with the rule's title, from the same
decision), then fact names (with their labels). A code or a name with no wording is
left as it is, and ``tests/test_web_wording.py`` fails on it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

WORDING_FILE: Final = Path(__file__).parent / "wording.toml"

#: A rule code (FIT-004, ENGINE-KEEP-001), as reports cite them.
RULE_CODE: Final = re.compile(r"\b[A-Z]+(?:-[A-Z]+)*-\d{3}\b")
#: A fact name (workload.vram_need_gib, gpu.temp_margin_c).
FACT_NAME: Final = re.compile(
    r"\b(?:workload|requirements|platform|budget|team|host|gpu|catalog|sku|option)"
    r"\.[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)*"
)


@dataclass(frozen=True)
class Wording:
    sources: Mapping[str, str]
    terms: tuple[tuple[str, str], ...]
    patterns: tuple[tuple[re.Pattern[str], str], ...]
    actions: Mapping[str, str]
    facts: Mapping[str, str]
    values: Mapping[str, str]
    assumed_values: Mapping[str, str]

    def words(self, text: str, titles: Mapping[str, str] = {}) -> str:
        """``text`` in the page's words (see the module docstring)."""
        for term, said in self.terms:
            text = text.replace(term, said)
        for pattern, said in self.patterns:
            text = pattern.sub(said, text)

        def title(found: re.Match[str]) -> str:
            name = titles.get(found.group(0))
            return f"\u201c{name}\u201d" if name else found.group(0)

        text = RULE_CODE.sub(title, text)
        return FACT_NAME.sub(lambda found: self.facts.get(found.group(0), found.group(0)), text)

    def label(self, fact: str) -> str:
        return self.facts.get(fact, fact)

    def source(self, source: str) -> str:
        """Where a value comes from: "your answers", or the captures it was read from."""
        if source in self.sources:
            return self.sources[source]
        files = [part.strip() for part in source.split(";") if part.strip()]
        shown = ", ".join(Path(part).name for part in files)
        return f"capture {shown}" if len(files) == 1 else f"captures {shown}"

    def assumed(self, fact: str, shown: str) -> str:
        """What is taken for a field answered "don't know": ``power left for the cards:
        800 W`` ("" where nothing is: the supply's rating, when the power left for the
        cards is asked instead)."""
        said = self.assumed_values.get(fact, "{value}").format(value=shown)
        return f"{self.label(fact)}: {said}" if said else ""

    def value(self, shown: str) -> str:
        return self.values.get(shown, shown)

    def action(self, rule: str, action: str, titles: Mapping[str, str]) -> str:
        """What the rule asks a buyer to do: its web action, else its own in web words."""
        return self.actions.get(rule) or self.words(action, titles)


@functools.cache
def wording(path: Path = WORDING_FILE) -> Wording:
    """The mapping in ``path`` (read once per process)."""
    from gpuadvisor.inputs.textio import parse_toml, read_text

    data = parse_toml(read_text(path), str(path))
    terms = sorted(data["terms"].items(), key=lambda item: len(item[0]), reverse=True)
    return Wording(
        sources=data["sources"],
        terms=tuple(terms),
        patterns=tuple((re.compile(k), v) for k, v in data["patterns"].items()),
        actions=data["actions"],
        facts=data["facts"],
        values=data["values"],
        assumed_values=data["assumed"],
    )
