"""The ranking judgements of ``rules/_policy.toml`` ``[ranking]``: what meeting a latency
target means, which cost differences are too small to outweigh a faster card, and when a
card of unknown availability is too old for a long service life, and when a card of
one class outclasses the pick of another so that class points do not decide.

Judgements, so data with their reasons, sources and worked examples
(``tests/test_policy.py`` runs them); this module only validates them and does the
arithmetic the ranking (:mod:`gpuadvisor.engine.ranking`) and the pair order use.
"""

from pydantic import Field

from gpuadvisor.engine.policy_base import StrictSection as _Strict


class TargetExample(_Strict):
    name: str
    latency_slo_ms: float = Field(gt=0)
    prefill_s: float = Field(ge=0)
    decode_ms_per_token: float = Field(gt=0)
    answer_tokens: int = Field(ge=0)
    meets: bool


class CostBandExample(_Strict):
    name: str
    cheapest_usd: float = Field(ge=0)
    cost_usd: float = Field(ge=0)
    in_band: bool


class StaleExample(_Strict):
    name: str
    status: str | None = None
    launch_year: int
    as_of_year: int
    lifecycle_years: float
    fleet: bool
    stale: bool


class OutclassExample(_Strict):
    name: str
    gpu_class: str
    other_class: str
    cost_usd: float = Field(ge=0)
    other_cost_usd: float = Field(ge=0)
    #: The other card's compute and memory bandwidth as a share of this one's.
    compute_ratio: float = Field(gt=0)
    bandwidth_ratio: float = Field(gt=0)
    ecc: bool
    other_ecc: bool
    outclassed: bool


class RankingPolicy(_Strict):
    why: str = Field(min_length=40)
    #: Answer tokens a card must leave within the target after a full-length prompt.
    min_answer_tokens: int = Field(ge=1, le=100_000)
    #: Lifecycle costs within this share of the cheapest option of a kind tie on cost.
    cost_band: float = Field(ge=0, le=0.5)
    #: Kinds of work whose speed follows memory bandwidth (LLM serving is found from the
    #: described model instead).
    bandwidth_bound_kinds: tuple[str, ...] = ()
    #: A card of unknown availability launched this many years before the decision ...
    stale_after_years: int = Field(ge=1, le=20)
    #: ... is stale for a service life of at least this many years (or a fleet).
    long_life_years: float = Field(gt=0, le=20)
    #: Classes whose preference points may not buy a card that one of the other listed
    #: classes beats on compute, memory bandwidth and lifecycle cost alike.
    outclass_classes: tuple[str, ...] = ()
    sources: tuple[str, ...] = Field(min_length=1)
    target_examples: tuple[TargetExample, ...] = ()
    cost_band_examples: tuple[CostBandExample, ...] = ()
    stale_examples: tuple[StaleExample, ...] = ()
    outclass_examples: tuple[OutclassExample, ...] = ()

    def meets_target(self, answer_tokens: int) -> bool:
        """Whether a card that leaves ``answer_tokens`` within the target meets it."""
        return answer_tokens >= self.min_answer_tokens

    def in_cost_band(self, cost_usd: float, cheapest_usd: float) -> bool:
        """Whether ``cost_usd`` is close enough to the cheapest to tie with it."""
        return cost_usd <= cheapest_usd * (1.0 + self.cost_band) + 1e-6

    def long_life(self, lifecycle_years: float, fleet: bool) -> bool:
        """Whether the service must outlast a card's time on the market."""
        return fleet or lifecycle_years >= self.long_life_years

    def stale(
        self,
        status: str | None,
        launch_year: int,
        as_of_year: int,
        lifecycle_years: float,
        fleet: bool,
    ) -> bool:
        """A card nobody can say is still made, launched long enough ago that it likely
        is not, bought for a long service or a fleet."""
        return (
            status is None
            and as_of_year - launch_year >= self.stale_after_years
            and self.long_life(lifecycle_years, fleet)
        )

    def outclasses(
        self,
        gpu_class: str,
        other_class: str,
        cost_usd: float,
        other_cost_usd: float,
        compute_ratio: float,
        bandwidth_ratio: float,
        ecc: bool,
        other_ecc: bool,
    ) -> bool:
        """Whether a card of ``other_class`` outclasses one of ``gpu_class`` that serves
        the need alike: both classes listed, the other at least as fast in compute and in
        memory bandwidth, with ECC where this one has it, and cheaper over its life by
        more than the cost band (so a difference of electricity alone does not count)."""
        return (
            gpu_class != other_class
            and gpu_class in self.outclass_classes
            and other_class in self.outclass_classes
            and compute_ratio >= 1.0 - 1e-9
            and bandwidth_ratio >= 1.0 - 1e-9
            and (other_ecc or not ecc)
            and not self.in_cost_band(cost_usd, other_cost_usd)
            and other_cost_usd < cost_usd
        )
