"""A Hugging Face ``config.json`` on this machine -> :class:`Architecture`.

The file is input like any other (README, Security model): read through
:mod:`gpuadvisor.inputs.textio` (size limit, UTF-8, JSON with duplicate keys, NaN and
deep nesting refused), never fetched from the network, and every value that is used
checked for its type and range. A malformed or hostile file is an
:class:`~gpuadvisor.errors.InputError` naming the file, the line and the key. Nothing
but whole numbers and yes/no values is read from it, and none of its text is echoed.
"""

from __future__ import annotations

import re
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gpuadvisor.errors import InputError
from gpuadvisor.inputs.textio import locate_field, parse_json, read_text
from gpuadvisor.sizing.arch import Architecture

#: A config.json is a few kilobytes; anything over this is not one.
MAX_CONFIG_BYTES = 1024 * 1024

_REMOTE = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.\-]*://|[A-Za-z][A-Za-z0-9+.\-]*:[^\\/]|//|\\\\)")

#: (our name, config.json keys in the order they are tried, upper bound); first key found.
_WHOLE: tuple[tuple[str, tuple[str, ...], int], ...] = (
    ("layers", ("num_hidden_layers", "n_layer", "num_layers", "n_layers"), 1000),
    ("hidden", ("hidden_size", "n_embd", "d_model"), 1_000_000),
    ("heads", ("num_attention_heads", "n_head", "num_heads"), 100_000),
    ("vocab", ("vocab_size",), 100_000_000),
)
_OPTIONAL: tuple[tuple[str, tuple[str, ...], int], ...] = (
    ("kv_heads", ("num_key_value_heads", "num_kv_heads", "multi_query_group_num"), 100_000),
    ("head_dim", ("head_dim",), 65_536),
    ("intermediate", ("intermediate_size", "ffn_dim", "n_inner"), 10_000_000),
    ("experts", ("num_local_experts", "num_experts", "n_routed_experts"), 100_000),
    ("experts_per_token", ("num_experts_per_tok", "moe_top_k"), 100_000),
    ("moe_intermediate", ("moe_intermediate_size",), 10_000_000),
    ("shared_experts", ("n_shared_experts",), 100_000),
    ("dense_layers", ("first_k_dense_replace",), 1000),
    ("kv_lora_rank", ("kv_lora_rank",), 65_536),
    ("rope_head_dim", ("qk_rope_head_dim",), 65_536),
    ("q_lora_rank", ("q_lora_rank",), 65_536),
    ("nope_head_dim", ("qk_nope_head_dim",), 65_536),
    ("v_head_dim", ("v_head_dim",), 65_536),
)
#: model_type values whose MLP has two matrices (GPT-style), not three (SwiGLU/GeGLU).
_TWO_MATRIX_MLP = frozenset(
    {
        "gpt2",
        "gpt_neox",
        "gptj",
        "opt",
        "bloom",
        "falcon",
        "mpt",
        "phi",
        "starcoder2",
        "gpt_bigcode",
    }
)


def resolve_config_path(value: str, base: Path | None) -> Path:
    """Where ``hf_config`` points: a local path, relative to ``base`` (the profile's folder).

    A URL, ``hf://`` name or network share is refused: gpuadvisor never downloads.
    """
    if _REMOTE.match(value) and not re.match(r"^[A-Za-z]:[\\/]", value):
        raise InputError(
            "hf_config must be a file on this machine; gpuadvisor never downloads anything",
            field="workload.model.hf_config",
            hint="download the model's config.json and give its path, relative to the profile",
        )
    path = Path(value).expanduser() if value.startswith("~") else Path(value)
    return path if path.is_absolute() or base is None else base / path


def read_architecture(path: Path) -> Architecture:
    """The architecture a local config.json describes (see the module docstring)."""
    name = str(path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise InputError("file not found", file=name, field="workload.model.hf_config") from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", file=name) from None
    if not stat.S_ISREG(mode):
        # A device or pipe (/dev/stdin, /dev/tty) could block or never end.
        raise InputError("hf_config must name a regular file", file=name)
    text = read_text(path, max_bytes=MAX_CONFIG_BYTES)
    if not text.lstrip().startswith("{"):
        raise InputError("expected a JSON object (a Hugging Face config.json)", file=name)
    return architecture_from_config(parse_json(text, name), file=name, text=text)


def architecture_from_config(data: Any, *, file: str, text: str | None = None) -> Architecture:
    """Check the keys gpuadvisor reads from a parsed config.json and build the shape.

    Multimodal configs keep the language model's numbers under ``text_config``; they are
    read from there when the top level has none.
    """
    if not isinstance(data, dict):
        raise InputError("expected a JSON object (a Hugging Face config.json)", file=file)
    prefix: tuple[str, ...] = ()
    if not _has_any(data, _WHOLE[0][1]) and isinstance(data.get("text_config"), dict):
        data, prefix = data["text_config"], ("text_config",)
    reader = _Reader(data, file, text, prefix)
    values: dict[str, int] = {ours: reader.required(keys, bound) for ours, keys, bound in _WHOLE}
    for ours, keys, bound in _OPTIONAL:
        found = reader.optional(keys, bound)
        if found is not None:
            values[ours] = found
    heads = values["heads"]
    values.setdefault("kv_heads", heads)
    if "head_dim" not in values and values.get("kv_lora_rank"):
        # Latent attention: a query head is its non-rotary and rotary parts together.
        values["head_dim"] = values.get("nope_head_dim", 0) + values.get("rope_head_dim", 0)
    if not values.get("head_dim"):
        values.pop("head_dim", None)
        if values["hidden"] % heads:
            raise reader.error(
                "num_attention_heads",
                f"hidden_size {values['hidden']} is not a multiple of num_attention_heads "
                f"{heads}, and the file has no head_dim",
            )
        values["head_dim"] = values["hidden"] // heads
    if values["kv_heads"] > heads or heads % values["kv_heads"]:
        raise reader.error(
            "num_key_value_heads",
            f"{values['kv_heads']} KV heads cannot share {heads} attention heads evenly",
        )
    values.setdefault("intermediate", 4 * values["hidden"])
    if values.get("experts"):
        if not values.get("experts_per_token"):
            raise reader.error("num_experts_per_tok", "a mixture-of-experts config needs it")
        if values["experts_per_token"] > values["experts"]:
            raise reader.error("num_experts_per_tok", "more experts per token than experts")
        values.setdefault("moe_intermediate", values["intermediate"])
    else:
        for key in ("experts_per_token", "moe_intermediate", "shared_experts", "dense_layers"):
            values.pop(key, None)
    if values.get("dense_layers", 0) > values["layers"]:
        raise reader.error("first_k_dense_replace", "more dense layers than layers")
    model_type = data.get("model_type")
    gated = not (isinstance(model_type, str) and model_type in _TWO_MATRIX_MLP)
    tied = reader.flag("tie_word_embeddings", default=not gated)
    return Architecture(tied_embeddings=tied, gated_mlp=gated, **values)


def _has_any(data: Mapping[str, Any], keys: tuple[str, ...]) -> bool:
    return any(key in data for key in keys)


class _Reader:
    """Typed reads of config.json keys, each failure naming the key and its line."""

    def __init__(
        self, data: Mapping[str, Any], file: str, text: str | None, prefix: tuple[str, ...]
    ) -> None:
        self.data, self.file, self.text, self.prefix = data, file, text, prefix

    def error(self, key: str, message: str) -> InputError:
        path = (*self.prefix, key)
        line = locate_field(self.text, path) if self.text is not None else None
        return InputError(message, file=self.file, line=line, field=".".join(path))

    def optional(self, keys: tuple[str, ...], bound: int, minimum: int = 0) -> int | None:
        """The first of ``keys`` present, checked; 0 reads as absent (``"q_lora_rank": 0``,
        ``"n_shared_experts": 0``: the feature is not used)."""
        for key in keys:
            if key not in self.data or self.data[key] is None:
                continue
            value = self.data[key]
            if isinstance(value, bool) or not isinstance(value, int):
                raise self.error(key, f"expected a whole number, got {type(value).__name__}")
            if not minimum <= value <= bound:
                raise self.error(key, f"must be between {minimum} and {bound:,}, got {value}")
            return value or None
        return None

    def required(self, keys: tuple[str, ...], bound: int) -> int:
        value = self.optional(keys, bound, minimum=1)
        if value is None:
            raise self.error(keys[0], "missing: gpuadvisor needs it to size the model")
        return value

    def flag(self, key: str, *, default: bool) -> bool:
        value = self.data.get(key, default)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self.error(key, f"expected true or false, got {type(value).__name__}")
        return value
