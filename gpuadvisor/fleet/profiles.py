"""The ``--profiles`` file: which hosts form a group (a label selector) and which
workload profile the group runs, plus the fleet's budget.

```toml
schema = "gpuadvisor/fleet-profiles/v1"
budget_usd = 250000            # optional: the fleet's budget for every purchase
host_label = "instance"        # optional: the label naming a host in dcgm-exporter's series
node_host_label = "instance"   # optional: the same in node-exporter's series

[[groups]]
name = "training"
selector = '{cluster="a", role="train"}'
profile = "training.toml"      # relative to this file
budget_usd = 100000            # optional: this group's budget
```

A host belongs to the first group whose selector matches its dcgm-exporter series.
Profiles are read, validated and sized here, once, like ``advise``'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from gpuadvisor.errors import InputError
from gpuadvisor.fleet.promql import Selector, parse_selector
from gpuadvisor.inputs.textio import load_document, locate_field
from gpuadvisor.inputs.validation import input_error

if TYPE_CHECKING:
    from gpuadvisor.inputs.profile import Profile
    from gpuadvisor.sizing.estimate import MemoryEstimate

PROFILES_SCHEMA: Final = "gpuadvisor/fleet-profiles/v1"
MAX_GROUPS: Final = 200
_LABEL = r"^[a-zA-Z_][a-zA-Z0-9_]*$"


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False, strict=True)


class GroupEntry(_Strict):
    name: str = Field(min_length=1, max_length=100, description="The group's name in the report.")
    selector: str = Field(max_length=2000, description='PromQL label matchers, e.g. {cluster="a"}.')
    profile: str = Field(min_length=1, max_length=1000, description="Workload profile file.")
    budget_usd: float | None = Field(None, gt=0, le=1e12, description="This group's budget.")


class ProfilesFile(_Strict):
    schema_: Literal["gpuadvisor/fleet-profiles/v1"] = Field(PROFILES_SCHEMA, alias="schema")
    budget_usd: float | None = Field(None, gt=0, le=1e12, description="The fleet's budget.")
    host_label: str = Field("instance", pattern=_LABEL)
    node_host_label: str = Field("instance", pattern=_LABEL)
    groups: list[GroupEntry] = Field(min_length=1, max_length=MAX_GROUPS)

    @field_validator("groups")
    @classmethod
    def _distinct_names(cls, groups: list[GroupEntry]) -> list[GroupEntry]:
        names = [g.name for g in groups]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"group names must differ; {', '.join(twice)} appears twice")
        return groups


@dataclass(frozen=True)
class Group:
    """One group, its selector parsed and its profile read."""

    name: str
    selector: Selector
    selector_text: str
    profile_path: Path
    profile: Profile
    profile_sha256: str
    sizing: MemoryEstimate | None
    budget_usd: float | None


@dataclass(frozen=True)
class Fleet:
    groups: tuple[Group, ...]
    budget_usd: float | None
    host_label: str
    node_host_label: str
    file: str


def _known(loc: tuple[str | int, ...]) -> list[str]:
    if len(loc) == 1:
        return [f.alias or n for n, f in ProfilesFile.model_fields.items()]
    return list(GroupEntry.model_fields) if loc[0] == "groups" else []


def load_profiles(path: Path) -> Fleet:
    """The groups of ``path``, every profile validated (errors name the file and line)."""
    from gpuadvisor.pipeline import read_profile, size_profile

    data, text = load_document(path)
    data = {"schema": PROFILES_SCHEMA, **data} if isinstance(data, dict) else data
    try:
        spec = ProfilesFile.model_validate(data)
    except ValidationError as exc:
        raise input_error(exc, file=str(path), text=text, known_names=_known) from None
    groups = []
    for number, entry in enumerate(spec.groups):
        line = locate_field(text, ("groups", number, "selector"))
        selector = parse_selector(
            entry.selector,
            field=f"groups[{number}].selector",
            file=f"{path}:{line}" if line else str(path),
        )
        profile_path = (path.parent / entry.profile).resolve()
        if not profile_path.is_file():
            raise InputError(
                f"the profile {entry.profile!r} of group {entry.name!r} does not exist "
                f"(looked for {profile_path})",
                file=str(path),
                line=locate_field(text, ("groups", number, "profile")),
                field=f"groups[{number}].profile",
                hint="a profile's path is relative to the profiles file",
            )
        profile, digest = read_profile(profile_path)
        groups.append(
            Group(
                name=entry.name,
                selector=selector,
                selector_text=selector.text(),
                profile_path=profile_path,
                profile=profile,
                profile_sha256=digest,
                sizing=size_profile(profile, profile_path),
                budget_usd=entry.budget_usd,
            )
        )
    return Fleet(
        groups=tuple(groups),
        budget_usd=spec.budget_usd,
        host_label=spec.host_label,
        node_host_label=spec.node_host_label,
        file=str(path),
    )
