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
from gpuadvisor.sizing.tables import Layout, layouts

#: A config.json is a few kilobytes; anything over this is not one.
MAX_CONFIG_BYTES = 1024 * 1024

_REMOTE = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.\-]*://|[A-Za-z][A-Za-z0-9+.\-]*:[^\\/]|//|\\\\)")

#: (our name, config.json keys in the order they are tried, upper bound); first key found.
_WHOLE: tuple[tuple[str, tuple[str, ...], int], ...] = (
    ("layers", ("num_hidden_layers", "n_layer", "num_layers", "n_layers"), 1000),
    ("hidden", ("hidden_size", "n_embd", "d_model", "n_embed"), 1_000_000),
    ("heads", ("num_attention_heads", "n_head", "num_heads"), 100_000),
    ("vocab", ("vocab_size",), 100_000_000),
)
_OPTIONAL: tuple[tuple[str, tuple[str, ...], int], ...] = (
    ("head_dim", ("head_dim",), 65_536),
    ("intermediate", ("intermediate_size", "ffn_dim", "n_inner", "ffn_hidden_size"), 10_000_000),
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
#: Key/value heads by count: grouped-query attention in its several spellings.
_KV_HEADS = ("num_key_value_heads", "num_kv_heads", "n_head_kv", "multi_query_group_num")
#: The position limit, in the order vLLM looks for it (its max_model_len).
_LIMIT = (
    "max_position_embeddings",
    "n_positions",
    "max_seq_len",
    "seq_length",
    "max_sequence_length",
)
_MAX_TOKENS = 100_000_000
#: rope_scaling types whose max_position_embeddings already is the extended limit; any
#: other type with a factor multiplies it (vLLM's max_model_len rule).
_LIMIT_INCLUDES_ROPE = frozenset({"default", "llama3", "longrope", "su", "mrope"})
#: model_type values whose MLP has two matrices, for a type the layout table lacks.
_TWO_MATRIX_MLP = frozenset(
    {"gpt2", "gpt_neox", "gptj", "opt", "bloom", "falcon", "mpt", "phi", "starcoder2"}
    | {"gpt_bigcode"}
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

    A key the file leaves out takes its model_type's default (``data/architectures.toml``),
    as transformers does; a null means "none". Multimodal configs keep the language
    model's numbers under ``text_config``; they are read from there when the top level
    has none.
    """
    if not isinstance(data, dict):
        raise InputError("expected a JSON object (a Hugging Face config.json)", file=file)
    prefix: tuple[str, ...] = ()
    if not _has_any(data, _WHOLE[0][1]) and isinstance(data.get("text_config"), dict):
        data, prefix = data["text_config"], ("text_config",)
    model_type = data.get("model_type")
    model_type = model_type if isinstance(model_type, str) else ""
    layout = layouts().model_type.get(model_type)
    reader = _Reader(data, file, text, prefix, layout.defaults if layout else {})
    values: dict[str, Any] = {ours: reader.required(keys, bound) for ours, keys, bound in _WHOLE}
    for ours, keys, bound in _OPTIONAL:
        found = reader.optional(keys, bound)
        if found is not None:
            values[ours] = found
    heads = values["heads"]
    values["kv_heads"] = _kv_heads(reader, heads)
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
    _check_experts(reader, values)
    gated = layout.mlp == "gated" if layout else model_type not in _TWO_MATRIX_MLP
    tied = reader.flag("tie_word_embeddings", default=not gated)
    limit, limit_key = _position_limit(reader)
    window, sliding = _sliding(reader, layout, values["layers"])
    return Architecture(
        tied_embeddings=tied,
        gated_mlp=gated,
        **values,
        **_layout_fields(reader, layout, limit),
        max_positions=limit,
        sliding_window=window,
        sliding_layers=sliding,
        model_type=model_type if layout else "",
        limit_key=limit_key,
        defaulted=tuple(reader.defaulted),
    )


def _check_experts(reader: _Reader, values: dict[str, Any]) -> None:
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


def _kv_heads(reader: _Reader, heads: int) -> int:
    """Key/value heads as transformers' attention projects them: one shared head for
    multi-query attention (Falcon-7B, GPT-BigCode: ``multi_query``) unless Falcon's
    ``new_decoder_architecture`` gives ``num_kv_heads``; else the grouped-query count."""
    if reader.flag("multi_query", default=False) and not reader.flag(
        "new_decoder_architecture", default=False
    ):
        return 1
    return reader.optional(_KV_HEADS, 100_000) or heads


def _position_limit(reader: _Reader) -> tuple[int, str]:
    """The longest sequence the model takes, and the key it comes from (0 and "" when the
    file gives none). A rope_scaling factor extends it the way vLLM's max_model_len does."""
    key = reader.present(_LIMIT)
    limit = reader.optional(_LIMIT, _MAX_TOKENS) if key else None
    if not limit or key is None:
        return 0, ""
    scaling = reader.data.get("rope_scaling") or reader.data.get("rope_parameters")
    if not isinstance(scaling, dict):
        return limit, key
    kind = scaling.get("rope_type", scaling.get("type"))
    kind = kind if isinstance(kind, str) else ""
    factor = scaling.get("factor")
    if kind in _LIMIT_INCLUDES_ROPE or factor is None:
        return limit, key
    where = "rope_scaling" if "rope_scaling" in reader.data else "rope_parameters"
    if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not 0 < factor <= 1024:
        raise reader.error(where, "factor must be a number between 0 and 1,024")
    original = scaling.get("original_max_position_embeddings")
    if kind == "yarn" and isinstance(original, int) and not isinstance(original, bool):
        if not 0 < original <= _MAX_TOKENS:
            raise reader.error(where, "original_max_position_embeddings is out of range")
        return int(original * factor), f"original_max_position_embeddings x {where} factor"
    return int(limit * factor), f"{key} x {where} factor"


def _sliding(reader: _Reader, layout: Layout | None, layers: int) -> tuple[int, int]:
    """The sliding window and how many layers use it (0, 0 for none)."""
    window = reader.optional(("sliding_window",), _MAX_TOKENS)
    if not window or not reader.flag("use_sliding_window", default=True):
        return 0, 0
    kinds = reader.data.get("layer_types")
    if kinds is not None:
        if not isinstance(kinds, list) or len(kinds) != layers:
            raise reader.error("layer_types", f"expected a list of {layers} layer types")
        return window, sum(1 for kind in kinds if kind == "sliding_attention")
    pattern = layout.sliding if layout else "none"
    sliding = {"all": layers, "alternate": (layers + 1) // 2, "none": 0}[pattern]
    return (window, sliding) if sliding else (0, 0)


def _layout_fields(reader: _Reader, layout: Layout | None, limit: int) -> dict[str, Any]:
    """Norms, biases and learned positions, as the model_type's layout gives them."""
    if layout is None:
        return {}
    norms = layout.norms_per_layer
    if reader.present(("parallel_attn", "new_decoder_architecture")):
        # FalconDecoderLayer: the new decoder normalises attention and MLP inputs apart
        # (num_ln_in_parallel_attn, 2); parallel attention shares one norm; else two.
        if reader.flag("new_decoder_architecture", default=False):
            norms = reader.optional(("num_ln_in_parallel_attn",), 8) or 2
        elif reader.flag("parallel_attn", default=False):
            norms = 1
    switches = {
        part: value if isinstance(value, bool) else reader.flag(value, default=False)
        for part, value in (
            ("qkv_bias", layout.bias.qkv),
            ("out_bias", layout.bias.out),
            ("mlp_bias", layout.bias.mlp),
        )
    }
    rows = limit + layout.position_offset if layout.learned_positions and limit else 0
    return {"norm": layout.norm, "norms_per_layer": norms, "position_rows": rows, **switches}


def _has_any(data: Mapping[str, Any], keys: tuple[str, ...]) -> bool:
    return any(key in data for key in keys)


class _Reader:
    """Typed reads of config.json keys, each failure naming the key and its line; a key
    the file omits takes the model_type's default, and is remembered in ``defaulted``."""

    def __init__(
        self,
        data: Mapping[str, Any],
        file: str,
        text: str | None,
        prefix: tuple[str, ...],
        defaults: Mapping[str, int | bool],
    ) -> None:
        self.data, self.file, self.text, self.prefix = data, file, text, prefix
        self.defaults = defaults
        self.defaulted: list[str] = []

    def error(self, key: str, message: str) -> InputError:
        path = (*self.prefix, key)
        line = locate_field(self.text, path) if self.text is not None else None
        return InputError(message, file=self.file, line=line, field=".".join(path))

    def present(self, keys: tuple[str, ...]) -> str | None:
        """The first of ``keys`` the file or the model_type's defaults have."""
        for key in keys:
            if key in self.data:
                return key
        return next((key for key in keys if key in self.defaults), None)

    def _value(self, keys: tuple[str, ...]) -> tuple[str, Any] | None:
        for key in keys:
            if key in self.data:
                return key, self.data[key]
        for key in keys:
            if key in self.defaults:
                if key not in self.defaulted:
                    self.defaulted.append(key)
                return key, self.defaults[key]
        return None

    def optional(self, keys: tuple[str, ...], bound: int, minimum: int = 0) -> int | None:
        """The first of ``keys`` present, checked; null and 0 read as absent
        (``"q_lora_rank": null``, ``"n_shared_experts": 0``: the feature is not used)."""
        found = self._value(keys)
        if found is None or found[1] is None:
            return None
        key, value = found
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(key, f"expected a whole number, got {type(value).__name__}")
        if not minimum <= value <= bound:
            raise self.error(key, f"must be between {minimum} and {bound:,}, got {value}")
        return value or None

    def required(self, keys: tuple[str, ...], bound: int) -> int:
        value = self.optional(keys, bound, minimum=1)
        if value is None:
            raise self.error(keys[0], "missing: gpuadvisor needs it to size the model")
        return value

    def flag(self, key: str, *, default: bool) -> bool:
        found = self._value((key,))
        value = default if found is None or found[1] is None else found[1]
        if not isinstance(value, bool):
            raise self.error(key, f"expected true or false, got {type(value).__name__}")
        return value
