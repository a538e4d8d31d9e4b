"""``gpuadvisor/host/v1`` JSON, as ``gpuadvisor probe`` and ``gpuadvisor import`` write it."""

from __future__ import annotations

from pydantic import ValidationError

from gpuadvisor.errors import InputError
from gpuadvisor.evidence._limits import check_gpus
from gpuadvisor.host.schema import HostSnapshot
from gpuadvisor.inputs.textio import locate_field, parse_json


def parse(text: str, name: str) -> HostSnapshot:
    data = parse_json(text, name)
    if not isinstance(data, dict):
        raise InputError("expected a JSON object", file=name)
    if isinstance(data.get("gpus"), list):
        check_gpus(len(data["gpus"]))
    try:
        return HostSnapshot.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = tuple(first["loc"])
        raise InputError(
            first["msg"],
            file=name,
            line=locate_field(text, loc),
            field=".".join(str(part) for part in loc),
        ) from None
