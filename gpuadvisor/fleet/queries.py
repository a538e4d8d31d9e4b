"""The PromQL the fleet is judged from: one expression per host/v1 value, each an
aggregate over the window computed by Prometheus, so a few numbers per GPU come back,
never the raw samples.

Which ``DCGM_FI_*`` field fills which host/v1 value is the dcgm-exporter parser's table
(:data:`gpuadvisor.evidence.dcgm.METRICS`); this module adds only how each is
aggregated over the window (:data:`AGGREGATION`): a mean for what varies (utilisation,
clocks, power), the highest for what must not get near a limit (temperatures, memory
used, error counters, which only grow), the last for a setting (limits, thresholds,
the link's maximum), the narrowest for a link width. Besides those:

- utilisation's 95th percentile and minimum over the window;
- a series of sub-window means (:data:`SERIES_METRICS`, a range query of
  ``SUBWINDOWS`` steps), which the rules need to see that utilisation was measured over
  time and how the busy clocks held;
- the share of the window each clock-event reason was active, from the reasons bitmask:
  its highest value over the window first (cheap), and for the GPUs where that shows a
  reason could have been active, a subquery that takes the bit from each sample and
  averages it (:func:`reason_queries`, the one costly query);
- the last and highest Xid each GPU reported;
- the PCIe replay counter's growth per minute over the window (:data:`REPLAY_METRIC`,
  ``rate`` times 60: the mean rate, which a counter reset does not upset);
- node-exporter's CPU, iowait, disk and network figures per host.

Every query carries a short ``name`` (``avg_over_time(DCGM_FI_DEV_GPU_UTIL[7d])``): the
evidence each snapshot cites, listed in full beside its PromQL in the fleet report.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal

from gpuadvisor.evidence.dcgm import METRICS, REASON_METRICS
from gpuadvisor.fleet.promql import PHYSICAL, Matcher, Selector, by, duration, over_window, vector
from gpuadvisor.host.schema import THROTTLE_BITS, ThrottleReason

Aggregation = Literal["avg", "max", "min", "last"]

#: How each dcgm-exporter field is aggregated over the window (see the module docstring).
AGGREGATION: Final[dict[str, Aggregation]] = {
    "DCGM_FI_DEV_GPU_UTIL": "avg",
    "DCGM_FI_DEV_MEM_COPY_UTIL": "avg",
    "DCGM_FI_DEV_ENC_UTIL": "avg",
    "DCGM_FI_DEV_DEC_UTIL": "avg",
    "DCGM_FI_DEV_SM_CLOCK": "avg",
    "DCGM_FI_DEV_MEM_CLOCK": "avg",
    "DCGM_FI_DEV_MAX_SM_CLOCK": "last",
    "DCGM_FI_DEV_MAX_MEM_CLOCK": "last",
    "DCGM_FI_DEV_GPU_TEMP": "max",
    "DCGM_FI_DEV_MEMORY_TEMP": "max",
    "DCGM_FI_DEV_SLOWDOWN_TEMP": "last",
    "DCGM_FI_DEV_SHUTDOWN_TEMP": "last",
    "DCGM_FI_DEV_GPU_MAX_OP_TEMP": "last",
    "DCGM_FI_DEV_POWER_USAGE": "avg",
    "DCGM_FI_DEV_POWER_MGMT_LIMIT": "last",
    "DCGM_FI_DEV_ENFORCED_POWER_LIMIT": "last",
    "DCGM_FI_DEV_FB_TOTAL": "last",
    "DCGM_FI_DEV_FB_USED": "max",
    "DCGM_FI_DEV_FB_RESERVED": "last",
    # A link that trained below its generation at some point but reached it under load
    # is not degraded: the highest generation seen counts. Width does not drop to save
    # power, so the narrowest width seen counts.
    "DCGM_FI_DEV_PCIE_LINK_GEN": "max",
    "DCGM_FI_DEV_PCIE_MAX_LINK_GEN": "last",
    "DCGM_FI_DEV_PCIE_LINK_WIDTH": "min",
    "DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH": "last",
    "DCGM_FI_DEV_PCIE_REPLAY_COUNTER": "max",
    "DCGM_FI_DEV_PSTATE": "last",
    "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL": "max",
    "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL": "max",
    "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL": "max",
    "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL": "max",
    "DCGM_FI_DEV_RETIRED_SBE": "max",
    "DCGM_FI_DEV_RETIRED_DBE": "max",
    "DCGM_FI_DEV_RETIRED_PENDING": "max",
    "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS": "max",
    "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS": "max",
    "DCGM_FI_DEV_ROW_REMAP_PENDING": "max",
    "DCGM_FI_DEV_ROW_REMAP_FAILURE": "max",
}

#: The sub-window series: metric -> (aggregation within a step, field of host/v1 Sample).
SERIES_METRICS: Final[dict[str, tuple[Aggregation, str]]] = {
    "DCGM_FI_DEV_GPU_UTIL": ("avg", "util_pct"),
    "DCGM_FI_DEV_SM_CLOCK": ("avg", "sm_clock_mhz"),
    "DCGM_FI_DEV_GPU_TEMP": ("max", "temp_c"),
    "DCGM_FI_DEV_POWER_USAGE": ("avg", "power_w"),
}
#: Steps of the sub-window series; the utilisation rules want five or more readings.
SUBWINDOWS: Final = 12
#: Reasons whose share of the window is asked for: those that hold a busy card's clocks
#: down (gpuadvisor.engine.hostfacts reads no other).
REASONS: Final[tuple[ThrottleReason, ...]] = (
    "sw_power_cap",
    "hw_slowdown",
    "sw_thermal_slowdown",
    "hw_thermal_slowdown",
    "hw_power_brake_slowdown",
)
#: A bitmask below this never held a bit of REASONS (their lowest bit is 0x4).
HOLDING_FROM: Final = min(THROTTLE_BITS[r] for r in REASONS)
#: The bitmask is sampled this many times over the window for the share of each reason.
REASON_SAMPLES: Final = 240
#: Hosts named in one share query (their names go into a regular expression).
HOSTS_PER_QUERY: Final = 200
XID_METRIC: Final = "DCGM_FI_DEV_XID_ERRORS"
REPLAY_METRIC: Final = "DCGM_FI_DEV_PCIE_REPLAY_COUNTER"
#: The host/v1 field (in gpus.pcie) the replay rate fills.
REPLAY_RATE: Final = "replays_per_min"
#: Metrics whose series tell which GPUs a host has (the first that answers for a GPU).
IDENTITY_METRICS: Final = ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_FB_USED")
IDENTITY_LABELS: Final = ("UUID", "modelName", "pci_bus_id", "DCGM_FI_DRIVER_VERSION")
GPU_LABEL: Final = "gpu"

Scope = Literal["gpu", "host", "core", "disk", "net"]
Kind = Literal["instant", "range"]


@dataclass(frozen=True)
class Query:
    """One PromQL expression and where its answer goes.

    ``target`` names the value: a dcgm metric (``scope`` gpu, ``role`` value), a Sample
    field (role sample), a throttle reason (role reason), ``xid``, or a node-exporter
    figure (``scope`` host, core, disk or net)."""

    name: str
    expr: str
    scope: Scope
    role: Literal["value", "sample", "mask", "reason", "xid", "identity", "node"]
    target: str
    part: str
    kind: Kind = "instant"
    #: Its answer names only some hosts by design (the saturated CPUs): a host it does
    #: not name is not missing the series.
    sparse: bool = False


@dataclass(frozen=True)
class Plan:
    """Everything asked of Prometheus for one run."""

    window_s: int
    step_s: int
    queries: tuple[Query, ...]

    @property
    def window(self) -> str:
        return duration(self.window_s)


def step_of(window_s: int) -> int:
    return max(1, window_s // SUBWINDOWS)


def identity_query(selector: Selector, window_s: int, host_label: str) -> Query:
    """Which GPUs each host has, with the labels that name them."""
    labels = (host_label, GPU_LABEL, *IDENTITY_LABELS)
    gpus = selector.and_(Selector((PHYSICAL,)))
    expr = " or ".join(
        by(labels, "group", over_window("last_over_time", metric, gpus, window_s))
        for metric in IDENTITY_METRICS
    )
    name = f"GPUs seen over {duration(window_s)} ({', '.join(IDENTITY_METRICS)})"
    return Query(name, expr, "gpu", "identity", "identity", "gpus.index")


def plan(selector: Selector, window_s: int, host_label: str, node_host_label: str) -> Plan:
    """The queries of one run, over ``selector``'s series and ``window_s`` seconds."""
    w = duration(window_s)
    step = step_of(window_s)
    keys = (host_label, GPU_LABEL)
    gpus = selector.and_(Selector((PHYSICAL,)))
    found: list[Query] = []
    for metric, aggregation in AGGREGATION.items():
        place = METRICS[metric][0]
        part = f"gpus.{place[0]}"
        function = f"{aggregation}_over_time"
        expr = by(keys, "max", over_window(function, metric, gpus, window_s))
        found.append(Query(f"{function}({metric}[{w}])", expr, "gpu", "value", metric, part))
    util = "DCGM_FI_DEV_GPU_UTIL"
    for function, field in (
        ("quantile_over_time(0.95, ", "gpu_p95_pct"),
        ("min_over_time(", "gpu_min_pct"),
    ):
        inner = f"{function}{vector(util, gpus)}[{w}])"
        name = f"{function}{util}[{w}])"
        found.append(Query(name, by(keys, "max", inner), "gpu", "value", field, "gpus.utilisation"))
    for metric, (aggregation, field) in SERIES_METRICS.items():
        function = f"{aggregation}_over_time"
        expr = by(keys, "max", over_window(function, metric, gpus, step))
        name = f"{function}({metric}[{duration(step)}]) every {duration(step)} over {w}"
        found.append(Query(name, expr, "gpu", "sample", field, "gpus.samples", kind="range"))
    found.append(
        Query(
            f"rate({REPLAY_METRIC}[{w}]) * 60",
            by(keys, "max", f"{over_window('rate', REPLAY_METRIC, gpus, window_s)} * 60"),
            "gpu",
            "value",
            REPLAY_RATE,
            "gpus.pcie",
        )
    )
    found += _mask_queries(gpus, keys, window_s)
    for function in ("max_over_time", "last_over_time"):
        expr = by(keys, "max", over_window(function, XID_METRIC, gpus, window_s))
        found.append(
            Query(f"{function}({XID_METRIC}[{w}])", expr, "gpu", "xid", function, "events")
        )
    found += _node_queries(selector, window_s, node_host_label)
    return Plan(window_s=window_s, step_s=step, queries=tuple(found))


def _mask_queries(gpus: Selector, keys: tuple[str, ...], window_s: int) -> list[Query]:
    """The highest reasons bitmask each GPU reported over the window, under either name:
    below :data:`HOLDING_FROM` no reason of :data:`REASONS` was ever active."""
    w = duration(window_s)
    return [
        Query(
            f"max_over_time({metric}[{w}])",
            by(keys, "max", over_window("max_over_time", metric, gpus, window_s)),
            "gpu",
            "mask",
            metric,
            "gpus.throttle_reasons",
        )
        for metric in REASON_METRICS
    ]


def reason_queries(
    selector: Selector, window_s: int, host_label: str, flagged: dict[str, list[str]]
) -> list[Query]:
    """The share of the window each reason was active, for the hosts whose bitmask
    reached :data:`HOLDING_FROM` (``flagged``: metric -> values of the host label).

    The bit is taken from each sample and averaged over the window, a subquery sampled
    :data:`REASON_SAMPLES` times: the one costly query, so it is asked only for the
    GPUs that can need it, :data:`HOSTS_PER_QUERY` hosts at a time.
    """
    w = duration(window_s)
    resolution = duration(max(1, window_s // REASON_SAMPLES))
    keys = (host_label, GPU_LABEL)
    found = []
    for metric, hosts in sorted(flagged.items()):
        batches = [hosts[i : i + HOSTS_PER_QUERY] for i in range(0, len(hosts), HOSTS_PER_QUERY)]
        for number, batch in enumerate(batches, 1):
            pattern = "|".join(_literal(h) for h in batch)
            gpus = selector.and_(Selector((PHYSICAL, Matcher(host_label, "=~", pattern))))
            part = f", hosts {number} of {len(batches)}" if len(batches) > 1 else ""
            for reason in REASONS:
                bit = THROTTLE_BITS[reason]
                inner = (
                    f"avg_over_time((floor({vector(metric, gpus)} / {bit}) % 2)[{w}:{resolution}])"
                )
                name = f"share of {w} with {reason} (bit {bit:#x} of {metric}){part}"
                found.append(
                    Query(
                        name,
                        by(keys, "max", inner),
                        "gpu",
                        "reason",
                        reason,
                        "gpus.throttle_reasons",
                        sparse=True,
                    )
                )
    return found


def _node_queries(selector: Selector, window_s: int, host: str) -> list[Query]:
    w = duration(window_s)

    def cpu(mode: str) -> str:
        return over_window("rate", "node_cpu_seconds_total", selector.and_(_mode(mode)), window_s)

    per_core = f"100 * (1 - {by((host, 'cpu'), 'max', cpu('idle'))})"
    idle = 'node_cpu_seconds_total{mode="idle"}'
    rows: list[tuple[str, str, Scope, str, str]] = [
        (
            f"count of CPUs in {idle} over {w}",
            by(
                (host,),
                "count",
                over_window(
                    "last_over_time",
                    "node_cpu_seconds_total",
                    selector.and_(_mode("idle")),
                    window_s,
                ),
            ),
            "host",
            "logical_cpus",
            "host.cpu",
        ),
        (
            f"100 * (1 - rate({idle}[{w}])), mean over CPUs",
            f"100 * (1 - {by((host,), 'avg', cpu('idle'))})",
            "host",
            "mean_busy_pct",
            "host.cpu_util",
        ),
        (
            f'100 * rate(node_cpu_seconds_total{{mode="iowait"}}[{w}]), mean over CPUs',
            f"100 * {by((host,), 'avg', cpu('iowait'))}",
            "host",
            "iowait_pct",
            "host.cpu_util",
        ),
        (
            f"CPUs with 100 * (1 - rate({idle}[{w}])) >= 95",
            f"{per_core} >= 95",
            "core",
            "busy_pct",
            "host.cpu_util",
        ),
        (
            f"the least busy CPU by 100 * (1 - rate({idle}[{w}]))",
            f"bottomk by ({host}) (1, {per_core})",
            "core",
            "busy_pct",
            "host.cpu_util",
        ),
    ]
    disk = ("device",)
    busy = by((host, *disk), "max", over_window("rate", _IO_TIME, selector, window_s))
    rows.append(
        (
            f"100 * rate({_IO_TIME}[{w}])",
            f"clamp_max(100 * {busy}, 100)",
            "disk",
            "util_pct",
            "host.disks",
        )
    )
    for direction, field in (("read", "r_await"), ("write", "w_await")):
        spent = by(
            (host, *disk),
            "max",
            over_window("rate", f"node_disk_{direction}_time_seconds_total", selector, window_s),
        )
        done = by(
            (host, *disk),
            "max",
            over_window("rate", f"node_disk_{direction}s_completed_total", selector, window_s),
        )
        name = (
            f"1000 * rate(node_disk_{direction}_time_seconds_total[{w}]) "
            f"/ rate(node_disk_{direction}s_completed_total[{w}])"
        )
        rows.append((name, f"1000 * {spent} / {done}", "disk", field, "host.disks"))
    nics = selector.and_(Selector((Matcher("device", "!=", "lo"),)))
    for metric, field, function in (
        ("node_network_receive_bytes_total", "rx_Bps", "rate"),
        ("node_network_transmit_bytes_total", "tx_Bps", "rate"),
        ("node_network_speed_bytes", "speed_Bps", "last_over_time"),
    ):
        expr = by((host, "device"), "max", over_window(function, metric, nics, window_s))
        rows.append((f"{function}({metric}[{w}])", expr, "net", field, "host.net"))
    return [
        Query(name, expr, scope, "node", field, part, sparse=expr.endswith(">= 95"))
        for name, expr, scope, field, part in rows
    ]


_IO_TIME: Final = "node_disk_io_time_seconds_total"
#: What RE2 (Prometheus's regular expressions) reads as other than itself.
_RE2_SPECIAL: Final = re.compile(r"([\\.+*?()|\[\]{}^$])")


def _literal(text: str) -> str:
    """``text`` as an RE2 pattern matching exactly it."""
    return _RE2_SPECIAL.sub(r"\\\1", text)


def _mode(mode: str) -> Selector:
    return Selector((Matcher("mode", "=", mode),))


#: What a query's answer is for, in words (the report's list of missing series).
def purpose(query: Query) -> str:
    if query.role == "node":
        return {"host": "CPU", "core": "CPU", "disk": "disk", "net": "network"}[query.scope]
    if query.role == "sample":
        return "the sub-window series"
    if query.role in ("mask", "reason"):
        return "clock event reasons"
    if query.role == "xid":
        return "Xid errors"
    return query.part.removeprefix("gpus.").replace("_", " ")
