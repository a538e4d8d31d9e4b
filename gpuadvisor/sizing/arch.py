"""A transformer's shape, as its config.json describes it, and what follows from the shape
alone: parameter counts (total, per token, embeddings, experts) and the KV cache one
token adds.

Pure arithmetic on whole numbers; where the shape comes from (a config.json, the model
table) is :mod:`gpuadvisor.sizing.hfconfig` and :mod:`gpuadvisor.sizing.tables`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from gpuadvisor.sizing.tables import ModelEntry


@dataclass(frozen=True)
class Architecture:
    """The numbers of a decoder-only transformer that memory and speed depend on.

    Field names follow :mod:`gpuadvisor.sizing.tables` (and the config.json keys listed
    in ``data/models.toml``). ``experts`` = 0 is a dense model; ``kv_lora_rank`` > 0 is
    multi-head latent attention (DeepSeek-V2/V3), which caches one compressed vector per
    token and layer instead of keys and values per head.

    The layout fields (norms, biases, learned positions) default to the Llama layout of
    the model table; a config.json sets them from its model_type
    (``data/architectures.toml``). ``sliding_layers`` of the layers attend only to the
    last ``sliding_window`` tokens; ``max_positions`` is the position limit (0: not known).
    """

    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    vocab: int
    tied_embeddings: bool
    gated_mlp: bool = True
    experts: int = 0
    experts_per_token: int = 0
    moe_intermediate: int = 0
    shared_experts: int = 0
    dense_layers: int = 0
    kv_lora_rank: int = 0
    rope_head_dim: int = 0
    q_lora_rank: int = 0
    nope_head_dim: int = 0
    v_head_dim: int = 0
    norm: Literal["rms", "layer"] = "rms"
    norms_per_layer: int = 2
    qkv_bias: bool = False
    out_bias: bool = False
    mlp_bias: bool = False
    position_rows: int = 0
    max_positions: int = 0
    sliding_window: int = 0
    sliding_layers: int = 0
    model_type: str = field(default="", compare=False)
    """The config.json's model_type ("" for the table or a type gpuadvisor does not know)."""
    limit_key: str = field(default="", compare=False)
    """Where ``max_positions`` comes from, as the error names it (max_position_embeddings)."""
    defaulted: tuple[str, ...] = field(default=(), compare=False)
    """config.json keys the file leaves out that took their model_type's default."""

    @classmethod
    def of_entry(cls, entry: ModelEntry) -> Architecture:
        return cls(
            layers=entry.layers,
            hidden=entry.hidden,
            heads=entry.heads,
            kv_heads=entry.kv_heads,
            head_dim=entry.head_dim,
            intermediate=entry.intermediate,
            vocab=entry.vocab,
            tied_embeddings=entry.tied_embeddings,
            gated_mlp=entry.gated_mlp,
            experts=entry.experts,
            experts_per_token=entry.experts_per_token,
            moe_intermediate=entry.moe_intermediate,
            shared_experts=entry.shared_experts,
            dense_layers=entry.dense_layers,
            kv_lora_rank=entry.kv_lora_rank,
            rope_head_dim=entry.rope_head_dim,
            q_lora_rank=entry.q_lora_rank,
            nope_head_dim=entry.nope_head_dim,
            v_head_dim=entry.v_head_dim,
            sliding_window=entry.sliding_window,
            sliding_layers=entry.sliding_layers,
        )

    # -- the KV cache --------------------------------------------------------------

    @property
    def latent_attention(self) -> bool:
        return self.kv_lora_rank > 0

    @property
    def kv_values_per_layer(self) -> int:
        """Values one layer caches for one token: keys and values of each KV head,
        2 x kv_heads x head_dim (vLLM paper, section 3); with latent attention the
        compressed vector and the rotary key part, kv_lora_rank + rope_head_dim
        (DeepSeek-V2, section 2.1)."""
        if self.latent_attention:
            return self.kv_lora_rank + self.rope_head_dim
        return 2 * self.kv_heads * self.head_dim

    @property
    def kv_values_per_token(self) -> int:
        """Values the KV cache holds for one token of one sequence, over all layers."""
        return self.layers * self.kv_values_per_layer

    def kv_values_windowed(self, tokens: int) -> int:
        """Values one sequence of ``tokens`` keeps when the sliding-window layers hold
        only the last ``sliding_window`` tokens and the others the whole sequence."""
        kept = min(tokens, self.sliding_window) if self.sliding_window else tokens
        full_layers = self.layers - self.sliding_layers
        return self.kv_values_per_layer * (full_layers * tokens + self.sliding_layers * kept)

    # -- parameters ----------------------------------------------------------------

    @property
    def q_dim(self) -> int:
        return self.heads * self.head_dim

    @property
    def moe(self) -> bool:
        return self.experts > 0

    @property
    def moe_layers(self) -> int:
        return self.layers - self.dense_layers if self.moe else 0

    def _attention_params(self) -> int:
        h = self.hidden
        if self.latent_attention:
            q_head = self.nope_head_dim + self.rope_head_dim
            q = (
                h * self.q_lora_rank + self.q_lora_rank + self.q_lora_rank * self.heads * q_head
                if self.q_lora_rank
                else h * self.heads * q_head
            )
            kv = h * (self.kv_lora_rank + self.rope_head_dim) + self.kv_lora_rank
            kv += self.kv_lora_rank * self.heads * (self.nope_head_dim + self.v_head_dim)
            return q + kv + self.heads * self.v_head_dim * h
        kv_dim = self.kv_heads * self.head_dim
        biases = (self.q_dim + 2 * kv_dim if self.qkv_bias else 0) + (h if self.out_bias else 0)
        return 2 * h * self.q_dim + 2 * h * kv_dim + biases

    def _mlp_params(self, inner: int) -> int:
        matrices = (3 if self.gated_mlp else 2) * self.hidden * inner
        if not self.mlp_bias:
            return matrices
        return matrices + (2 if self.gated_mlp else 1) * inner + self.hidden

    @property
    def _norm_params(self) -> int:
        """One normalisation layer: a weight per unit, and a bias for LayerNorm."""
        return (2 if self.norm == "layer" else 1) * self.hidden

    @property
    def expert_params(self) -> int:
        """Parameters of one routed expert, summed over the layers that have experts."""
        return self._mlp_params(self.moe_intermediate) * self.moe_layers

    @property
    def embedding_params(self) -> int:
        """Token embedding plus the output head (one matrix when they are tied)."""
        return self.vocab * self.hidden * (1 if self.tied_embeddings else 2)

    @property
    def input_embedding_params(self) -> int:
        """The token-embedding table alone, of which decoding reads one row per token."""
        return 0 if self.tied_embeddings else self.vocab * self.hidden

    def _layer_params(self, *, active_only: bool) -> int:
        norms = self.norms_per_layer * self._norm_params
        attention = self._attention_params()
        dense = self._mlp_params(self.intermediate)
        if not self.moe:
            return self.layers * (attention + dense + norms)
        experts = self.experts_per_token if active_only else self.experts
        moe_mlp = (experts + self.shared_experts) * self._mlp_params(self.moe_intermediate)
        moe_mlp += self.hidden * self.experts  # the router
        return (
            self.layers * (attention + norms)
            + self.dense_layers * dense
            + self.moe_layers * (moe_mlp)
        )

    @property
    def _outside_layers(self) -> int:
        """Embeddings, the final norm and a learned position table."""
        return self.embedding_params + self._norm_params + self.position_rows * self.hidden

    @property
    def total_params(self) -> int:
        return self._layer_params(active_only=False) + self._outside_layers

    @property
    def active_params(self) -> int:
        """Parameters one token passes through (all of them for a dense model)."""
        return self._layer_params(active_only=True) + self._outside_layers

    # -- LoRA adapters ---------------------------------------------------------------

    def lora_params(self, rank: int) -> int:
        """Adapter parameters of rank ``rank`` on every linear layer of every block:
        r x (inputs + outputs) per adapted matrix (LoRA, Hu et al. 2021, section 4).
        Experts' MLPs count once per expert, as PEFT adapts each of them."""
        h = self.hidden
        if self.latent_attention:
            attention = rank * (h + self.heads * self.v_head_dim) * 2  # q and o, roughly
        else:
            kv_dim = self.kv_heads * self.head_dim
            attention = rank * (2 * (h + self.q_dim) + 2 * (h + kv_dim))
        matrices = 3 if self.gated_mlp else 2
        dense = matrices * rank * (h + self.intermediate)
        if not self.moe:
            return self.layers * (attention + dense)
        per_expert = matrices * rank * (h + self.moe_intermediate)
        experts = (self.experts + self.shared_experts) * per_expert
        return self.layers * attention + self.dense_layers * dense + self.moe_layers * experts

    # -- activations ---------------------------------------------------------------

    @property
    def active_intermediate(self) -> int:
        """The MLP inner width one token goes through (experts it is routed to included)."""
        if not self.moe:
            return self.intermediate
        return (self.experts_per_token + self.shared_experts) * self.moe_intermediate
