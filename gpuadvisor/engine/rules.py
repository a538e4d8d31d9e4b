"""Rules as data: the file format, compiling a rule's conditions, and loading rule folders.

One TOML file per rule under ``rules/<kind>/<ID>.toml``, the folder being the rule's kind
(``preference``, ``constraint``, ``fix-first``; see ``rules/README.md``). A rule reads facts (see
:mod:`gpuadvisor.engine.factspec`) through a checked condition and, when it fires, records a
finding and moves the decision:

- ``when``: the condition, over profile, host and catalog facts.
- ``require`` (constraint rules only): a condition over ``sku.*`` / ``option.*`` that every
  purchase option must meet while ``when`` holds; an option for which it is not proven
  true is eliminated, and the rule is named as the reason.
- ``[effect]``: ``shape`` and ``class`` weights (positive prefers, negative avoids) and
  ``fix_first = true`` for "fix this before buying".

A rule's examples, its lint and its documentation are :mod:`gpuadvisor.engine.rulecheck`.
"""

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from gpuadvisor.engine.expr import Expression, ExpressionError, compile_expression
from gpuadvisor.engine.factspec import FACTS_BY_NAME, FactSpec, schema_for
from gpuadvisor.engine.option import CARD_IS_KEPT
from gpuadvisor.engine.policy import POLICY_FILE, Policy, bundled_policy, read_policy
from gpuadvisor.errors import InputError, did_you_mean
from gpuadvisor.inputs.cache import Document, bundled_documents
from gpuadvisor.inputs.textio import load_document, locate_field
from gpuadvisor.inputs.validation import input_error
from gpuadvisor.resources import data_dir
from gpuadvisor.vocabulary import (
    RULE_FOLDERS,
    Category,
    GpuClass,
    RuleKind,
    Severity,
    Shape,
)

RULES_VERSION = "2026.12.1"


_ID = re.compile(r"^[A-Z][A-Z0-9]*(-[A-Z0-9]+)*-\d{3}$")
#: ``{fact.name}`` in a rule's rationale or action (filled by the decision's phrasing).
PLACEHOLDER = re.compile(r"\{([a-z_]+(?:\.[a-z0-9_]+)+)\}")


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class Effect(_Strict):
    shape: dict[Shape, int] = Field(default_factory=dict)
    class_: dict[GpuClass, int] = Field(default_factory=dict, alias="class")
    fix_first: bool = False

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    @field_validator("shape", "class_")
    @classmethod
    def _weights(cls, value: dict[str, int]) -> dict[str, int]:
        for key, weight in value.items():
            if not -10 <= weight <= 10 or weight == 0:
                raise ValueError(f"weight of {key} must be a non-zero integer in -10..10")
        return value


class Example(_Strict):
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    expect: Literal["fire", "no-fire"]
    facts: dict[str, float | int | bool | str | None] = Field(default_factory=dict)


class RuleData(_Strict):
    """The file format of one rule."""

    id: str
    title: str = Field(min_length=10, max_length=140)
    category: Category
    severity: Severity
    when: str = Field(min_length=1)
    require: str | None = None
    effect: Effect = Field(default_factory=Effect)
    rationale: str = Field(min_length=40)
    action: str = Field(min_length=10)
    references: tuple[str, ...] = ()
    evidence: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    examples: tuple[Example, ...] = ()

    @field_validator("id")
    @classmethod
    def _check_id(cls, value: str) -> str:
        if not _ID.match(value):
            raise ValueError("must look like AREA-001 (capitals, digits, hyphens, 3-digit number)")
        return value


def rule_kind(rule: RuleData) -> RuleKind:
    """What the rule does, read from its content; also the folder it sits in."""
    if rule.require is not None:
        return "constraint"
    return "fix-first" if rule.effect.fix_first else "preference"


@dataclass(frozen=True)
class Rule:
    data: RuleData
    when: Expression
    require: Expression | None
    path: str
    #: ``data.id``, kept as a plain attribute: the engine reads it in its inner loops.
    id: str = field(init=False)
    #: Decision-wide facts the ``require`` condition reads (not sku.* / option.*).
    require_reads: tuple[str, ...] = field(init=False)
    #: Whether ``require`` reads an ``option.*`` fact (else it is judged once per SKU and
    #: per kept-or-bought, the one option fact such a rule may read).
    require_per_option: bool = field(init=False)
    #: Facts named by ``{placeholders}`` in the rationale and the action.
    placeholders: tuple[str, ...] = field(init=False)
    #: The option.* and sku.* facts ``require`` reads (what it sees of one option).
    require_local_names: tuple[str, ...] = field(init=False)
    #: Facts shown as the evidence of a finding: those read, then those listed.
    fact_names: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "id", self.data.id)
        reads: tuple[str, ...] = ()
        if self.require is not None:
            reads = tuple(n for n in self.require.names if FACTS_BY_NAME[n].scope == "global")
        object.__setattr__(self, "require_reads", reads)
        # A require that reads of the option only whether the card judged is kept is
        # judged once per card model and that flag, not once per option.
        per_option = self.require is not None and any(
            n.startswith("option.") and n != CARD_IS_KEPT for n in self.require.names
        )
        object.__setattr__(self, "require_per_option", per_option)
        local = () if self.require is None else self.require.names
        object.__setattr__(
            self,
            "require_local_names",
            tuple(n for n in local if n.startswith(("option.", "sku."))),
        )
        shown = [*self.when.names, *reads, *self.data.evidence]
        object.__setattr__(self, "fact_names", tuple(dict.fromkeys(shown)))
        texts = self.data.rationale + self.data.action
        object.__setattr__(self, "placeholders", tuple(dict.fromkeys(PLACEHOLDER.findall(texts))))

    @property
    def is_constraint(self) -> bool:
        return self.require is not None

    @property
    def kind(self) -> RuleKind:
        return rule_kind(self.data)


@dataclass(frozen=True)
class RuleBase:
    rules: tuple[Rule, ...]
    version: str
    sources: tuple[str, ...]
    #: The numbers the engine's arithmetic uses (``rules/_policy.toml`` and overlays').
    policy: Policy = field(default_factory=bundled_policy)

    def get(self, rule_id: str) -> Rule:
        for rule in self.rules:
            if rule.id == rule_id or rule_id in rule.data.aliases:
                return rule
        raise InputError(
            f"no rule {rule_id!r}",
            hint=did_you_mean(rule_id, [r.id for r in self.rules]),
        )

    @cached_property
    def constraints(self) -> tuple[Rule, ...]:
        return tuple(r for r in self.rules if r.is_constraint)

    @cached_property
    def preferences(self) -> tuple[Rule, ...]:
        return tuple(r for r in self.rules if not r.is_constraint)


#: Layers a ``require`` condition reads: (option facts, SKU facts, decision facts).
OPTION_LAYER, SKU_LAYER, DECISION_LAYER = 0, 1, 2


def option_layer(name: str) -> int:
    if name.startswith("option."):
        return OPTION_LAYER
    if name.startswith("sku."):
        return SKU_LAYER
    return DECISION_LAYER


def _compile(rule: RuleData, path: Path, text: str) -> Rule:
    def fail(key: str, exc: ExpressionError) -> InputError:
        return InputError(
            f"rule {rule.id}: {exc.message}",
            file=str(path),
            line=locate_field(text, (key,)),
            field=key,
            hint=exc.hint,
        )

    try:
        when = compile_expression(rule.when, schema_for("global"))
    except ExpressionError as exc:
        raise fail("when", exc) from None
    require = None
    if rule.require is not None:
        try:
            require = compile_expression(rule.require, schema_for("option"), option_layer)
        except ExpressionError as exc:
            raise fail("require", exc) from None
    for key in ("action", "rationale"):
        for name in PLACEHOLDER.findall(getattr(rule, key)):
            if name not in FACTS_BY_NAME:
                raise InputError(
                    f"rule {rule.id}: placeholder {{{name}}} names no fact",
                    file=str(path),
                    field=key,
                    hint=did_you_mean(name, FACTS_BY_NAME),
                )
    for name in rule.evidence:
        if name not in FACTS_BY_NAME:
            raise InputError(
                f"rule {rule.id}: evidence names unknown fact {name!r}",
                file=str(path),
                field="evidence",
                hint=did_you_mean(name, FACTS_BY_NAME),
            )
    for example in rule.examples:
        for name in example.facts:
            if name not in FACTS_BY_NAME:
                raise InputError(
                    f"rule {rule.id}: example {example.name!r} sets unknown fact {name!r}",
                    file=str(path),
                    field=f"examples.{example.name}",
                    hint=did_you_mean(name, FACTS_BY_NAME),
                )
            wrong = _wrong_type(FACTS_BY_NAME[name], example.facts[name])
            if wrong:
                raise InputError(
                    f"rule {rule.id}: example {example.name!r} gives {name!r} {wrong}",
                    file=str(path),
                    field=f"examples.{example.name}",
                    hint="leave a fact out of the example for 'unknown'",
                )
    return Rule(data=rule, when=when, require=require, path=str(path))


def _wrong_type(spec: FactSpec, value: object) -> str:
    """What is wrong with an example's value for a fact of this type ("" when nothing)."""
    if spec.type == "number":
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif spec.type == "bool":
        ok = isinstance(value, bool)
    else:
        ok = isinstance(value, str)
        if ok and spec.choices is not None and value not in spec.choices:
            return f"{value!r}, not one of its values ({', '.join(spec.choices)})"
    if ok:
        return ""
    return f"the {type(value).__name__} {value!r}; it is a {spec.type} fact"


def load_rule_file(
    path: Path,
    read: Callable[[Path], Document] = load_document,
    folder_kind: RuleKind | None = None,
) -> Rule:
    """One rule file; ``folder_kind`` is the kind its folder declares, if it sits in one."""
    data, text = read(path)
    try:
        rule = RuleData.model_validate(data)
    except ValidationError as exc:
        rule_id = data.get("id") if isinstance(data.get("id"), str) else path.stem
        raise input_error(
            exc,
            file=str(path),
            text=text,
            known_names=lambda loc: [*RuleData.model_fields, "class", "shape", "fix_first"],
            prefix=f"rule {rule_id}: ",
        ) from None
    if rule.id != path.stem:
        raise InputError(
            f"rule id {rule.id!r} differs from the file name; name the file {rule.id}.toml",
            file=str(path),
            field="id",
        )
    if folder_kind is not None and rule_kind(rule) != folder_kind:
        raise _misfiled(rule, folder_kind, path, text)
    return _compile(rule, path, text)


_WHY_KIND: dict[RuleKind, str] = {
    "constraint": "it has `require`",
    "fix-first": "its effect has fix_first = true",
    "preference": "it has no `require` and no effect.fix_first",
}
_KIND_FIELD: dict[RuleKind, tuple[str, ...]] = {
    "constraint": ("require",),
    "fix-first": ("effect", "fix_first"),
    "preference": ("effect",),
}
_FOLDERS_HINT = (
    "a rule's folder is its kind: "
    f"{RULE_FOLDERS['preference']}/ (moves shape and class weights), "
    f"{RULE_FOLDERS['constraint']}/ (has `require`), "
    f"{RULE_FOLDERS['fix-first']}/ (effect.fix_first = true)"
)


def _misfiled(rule: RuleData, folder_kind: RuleKind, path: Path, text: str) -> InputError:
    kind = rule_kind(rule)
    # The field that makes the rule what it is, or (a preference) the one its folder wants.
    decisive = folder_kind if kind == "preference" else kind
    key = _KIND_FIELD[decisive]
    line = locate_field(text, key) or locate_field(text, key[:1])
    return InputError(
        f"rule {rule.id} is a {kind} rule ({_WHY_KIND[kind]}) but sits in "
        f"{RULE_FOLDERS[folder_kind]}/; it belongs in {RULE_FOLDERS[kind]}/",
        file=str(path),
        line=line,
        field=".".join(key),
        hint=_FOLDERS_HINT,
    )


_KIND_OF_FOLDER: dict[str, RuleKind] = {folder: kind for kind, folder in RULE_FOLDERS.items()}


def _rule_files(folder: Path, *, bundled: bool) -> list[tuple[Path, RuleKind | None]]:
    """Each rule file (``*.toml``) with the kind its folder declares.

    A rule file sits in a kind folder (``preference/``, ``constraint/``, ``fix-first/``);
    in an overlay it may also sit directly in the folder given (kind ``None``: read from
    the rule). Any other place is refused before the file is read.
    """
    if not folder.is_dir():
        raise InputError("rules folder not found", file=str(folder))
    files: list[tuple[Path, RuleKind | None]] = []
    for path in sorted(folder.rglob("*.toml")):
        parts = path.relative_to(folder).parts
        if parts == (POLICY_FILE,):
            continue  # the policy numbers, read by load_rules (engine.policy)
        if len(parts) == 2 and parts[0] in _KIND_OF_FOLDER:
            files.append((path, _KIND_OF_FOLDER[parts[0]]))
        elif len(parts) == 1 and not bundled:
            files.append((path, None))
        else:
            where = (
                f"rule file in {'/'.join(parts[:-1])}/, which is not a rule kind"
                if len(parts) > 1
                else "rule file directly in the bundled rules folder"
            )
            place = "directly in the overlay folder or in " if not bundled else "in "
            raise InputError(
                f"{where}; rule files sit "
                f"{place}{', '.join(f + '/' for f in RULE_FOLDERS.values())}",
                file=str(path),
                hint=_FOLDERS_HINT,
            )
    return files


def load_rules(overlays: Sequence[Path] = (), base: Path | None = None) -> RuleBase:
    """Bundled rules (or ``base``), then each overlay folder: same id replaces.

    The bundled rules must each sit in their kind's folder; ``base`` and overlays may
    also hold rule files directly (see :func:`_rule_files`).
    """
    folders = [base or data_dir("rules"), *overlays]
    by_id: dict[str, Rule] = {}
    # The bundled rules' parsed TOML is cached per user (validation still runs).
    documents = bundled_documents() if base is None else None
    for number, folder in enumerate(folders):
        read = documents.read if documents is not None and number == 0 else load_document
        for path, kind in _rule_files(folder, bundled=base is None and number == 0):
            rule = load_rule_file(path, read, kind)
            by_id[rule.id] = rule
    base_policy, policy = _policy(
        folders[0], documents.read if documents is not None else load_document
    )
    if overlays:
        policy = read_policy(base_policy, tuple(overlays))
    if documents is not None:
        documents.flush()
    _check_aliases(by_id)
    rules = tuple(sorted(by_id.values(), key=lambda r: r.id))
    version = RULES_VERSION + ("+" + "+".join(p.name for p in overlays) if overlays else "")
    return RuleBase(
        rules=rules,
        version=version,
        sources=tuple(str(f) for f in folders),
        policy=policy,
    )


def _policy(
    folder: Path, read: Callable[[Path], Document]
) -> tuple[tuple[dict[str, object], str, str], Policy]:
    """The base folder's policy file (its data, for overlays to merge into) and the
    policy; a base folder without one (a test's own rules) uses the bundled policy."""
    path = folder / POLICY_FILE
    if not path.is_file():
        path = data_dir("rules") / POLICY_FILE
        read = load_document
    data, text = read(path)
    base = (dict(data), text, str(path))
    return base, read_policy(base)


def _check_aliases(by_id: Mapping[str, Rule]) -> None:
    seen: dict[str, str] = {}
    for rule in by_id.values():
        for alias in rule.data.aliases:
            if alias in by_id or alias in seen:
                raise InputError(
                    f"alias {alias!r} of rule {rule.id} is already used; ids are never reused",
                    file=rule.path,
                    field="aliases",
                )
            seen[alias] = rule.id
