"""``gpuadvisor fleet`` at scale: 1,000 hosts x 8 GPUs in a real Prometheus.

Not a unit test. From the repository root, with Debian's ``prometheus`` installed::

    python benchmarks/bench_fleet.py                  # 1,000 hosts x 8 GPUs
    python benchmarks/bench_fleet.py --hosts 200      # a smaller fleet
    python benchmarks/bench_fleet.py --judge 10000    # also judge 10,000 hosts

The series are the test fleet's (tests/fleet_support.py: made from the real T4 scrape
and the repository's A5000 scrape, with node-exporter beside them), one sample every
five minutes over the last 65 minutes, loaded into TSDB blocks with ``promtool tsdb
create-blocks-from openmetrics`` and served by Prometheus on 127.0.0.1. The fleet run
happens in a child process so that its peak memory is its own (and its workers').

Figures: query time (every PromQL query, answers read and folded per host), judging
time (every host through the engine, in worker processes over the machine's cores),
total, and peak memory (max RSS of the run and of its largest worker). ``--judge N``
judges N hosts made from the queried ones (their readings repeated under new names):
the target is 10,000 hosts judged in under 60 s on a 2-core machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests import fleet_support  # noqa: E402

GPUS = 8
STEP_S = 300
SAMPLES = 14
WINDOW = "1h"
JUDGE_TARGET_S = 60.0
JUDGE_TARGET_HOSTS = 10_000
#: Out of every hundred hosts: how many of each kind.
MIX = {
    "healthy": 69,
    "idle": 10,
    "cpu-bound": 5,
    "io-bound": 4,
    "throttling": 3,
    "xid": 2,
    "ecc": 2,
    "remap": 1,
    "pcie": 2,
    "replays": 1,
    "no-node": 1,
}
PROFILES = """\
schema = "gpuadvisor/fleet-profiles/v1"
budget_usd = 5000000

[[groups]]
name = "inference"
selector = '{cluster="a"}'
profile = "t4.toml"

[[groups]]
name = "training"
selector = '{cluster="b"}'
profile = "a5000.toml"
"""


def hosts(count: int) -> list[fleet_support.Host]:
    kinds = [kind for kind, n in MIX.items() for _ in range(n)]
    found = []
    for i in range(count):
        kind = kinds[i % len(kinds)]
        template, cluster = ("t4", "a") if i % 2 == 0 else ("a5000", "b")
        found.append(fleet_support.Host(f"node{i:05d}", kind, template, GPUS, {"cluster": cluster}))
    return found


def measure(url: str, profiles: Path, end: int, judge: int) -> dict[str, object]:
    """In the child: one fleet run, then (with ``judge``) N hosts judged again."""
    from gpuadvisor.fleet.build import Options, assemble, context_of
    from gpuadvisor.fleet.build import judge as judge_hosts
    from gpuadvisor.fleet.client import Client
    from gpuadvisor.fleet.collect import collect
    from gpuadvisor.fleet.judge import Job, Setup, judge_all
    from gpuadvisor.fleet.profiles import load_profiles
    from gpuadvisor.fleet.promql import EVERYTHING, parse_window

    fleet = load_profiles(profiles)
    options = Options(EVERYTHING, "{}", parse_window(WINDOW), float(end))
    client = Client(url, timeout_s=600)
    started = time.perf_counter()
    collection = collect(client, fleet, options.selector, options.window_s, options.at)
    queried = time.perf_counter()
    cpu = _judging_cpu()
    verdicts = judge_hosts(collection, fleet, client.url, options)
    cpu = _judging_cpu() - cpu
    judged = time.perf_counter()
    report = assemble(collection, fleet, client.url, options, verdicts)
    total = time.perf_counter() - started
    slowest = sorted(collection.answers.values(), key=lambda a: -a.seconds)[:3]
    figures: dict[str, object] = {
        "hosts": report.totals.hosts,
        "gpus": report.totals.gpus,
        "queries": len(collection.answers),
        "query_s": queried - started,
        "judge_s": judged - queried,
        "total_s": total,
        "judge_cpu_s": cpu,
        "max_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "slowest": [(round(a.seconds, 2), a.query[:90]) for a in slowest],
        "report_json_mib": len(report.to_json()) / 2**20,
    }
    if judge:
        jobs = []
        members = [(g, h) for g, names in collection.members.items() for h in names]
        for n in range(judge):
            group, host = members[n % len(members)]
            reading = collection.hosts[host]
            copy = type(reading)(**{**reading.__dict__, "host": f"{host}-{n // len(members)}"})
            jobs.append(Job(group, copy, collection.missing_for(host)))
        setup = Setup(groups=fleet.groups, context=context_of(collection, url))
        cpu = _judging_cpu()
        started = time.perf_counter()
        verdicts = judge_all(jobs, setup)
        figures["judge_n"] = len(verdicts)
        figures["judge_n_s"] = time.perf_counter() - started
        figures["judge_n_cpu_s"] = _judging_cpu() - cpu
    return figures


def _judging_cpu() -> float:
    """CPU seconds of this process and of its finished children (the workers)."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hosts", type=int, default=1000, help="hosts in Prometheus (8 GPUs each)")
    parser.add_argument("--judge", type=int, default=0, help="also judge this many hosts")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument(
        "--measure", nargs=3, metavar=("URL", "PROFILES", "END"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.measure:
        url, profiles, end = args.measure
        print(json.dumps(measure(url, Path(profiles), int(end), args.judge)))
        return 0
    missing = fleet_support.tools_missing()
    if missing or fleet_support.real_fixtures() is None:
        print(f"bench_fleet: skipped: {missing or '../shared/fixtures/real not found'}")
        return 0
    folder = Path(tempfile.mkdtemp(prefix="gpuadvisor-bench-fleet-"))
    end = int(time.time()) // STEP_S * STEP_S
    started = time.perf_counter()
    openmetrics = folder / "fleet.om"
    with openmetrics.open("w") as out:
        lines = fleet_support.write_openmetrics(out, hosts(args.hosts), end, SAMPLES, STEP_S)
    generated = time.perf_counter() - started
    started = time.perf_counter()
    fleet_support.create_blocks(openmetrics, folder / "data")
    openmetrics.unlink()
    loaded = time.perf_counter() - started
    profiles = fleet_support.write_profiles(folder / "profiles")
    profiles.write_text(PROFILES)
    running = fleet_support.start(folder / "data", folder)
    try:
        child = subprocess.run(
            [
                sys.executable,
                __file__,
                "--judge",
                str(args.judge),
                "--measure",
                running.url,
                str(profiles),
                str(end),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
    finally:
        fleet_support.stop(running)
        shutil.rmtree(folder, ignore_errors=True)  # the blocks of 1,000 hosts: hundreds of MB
    if child.returncode != 0:
        print(child.stderr, file=sys.stderr)
        return 1
    figures: dict[str, Any] = json.loads(child.stdout.strip().splitlines()[-1])
    figures.update(samples=lines, generate_s=generated, promtool_s=loaded)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"machine: {platform.machine()}, {cores} cores, Python {platform.python_version()}")
    print(
        f"fleet: {figures['hosts']} hosts, {figures['gpus']} GPUs in Prometheus ({lines:,} samples; generated in {generated:.1f} s, promtool {loaded:.1f} s)"
    )
    print(
        f"  query time          {figures['query_s']:8.2f} s   (every query, answers folded per host)"
    )
    print(
        f"  judging time        {figures['judge_s']:8.2f} s   ({figures['hosts'] / figures['judge_s']:.0f} hosts/s over {cores} cores;"
        f" CPU {figures['judge_cpu_s']:.1f} s, {1000 * figures['judge_cpu_s'] / figures['hosts']:.1f} ms a host)"
    )
    print(f"  total               {figures['total_s']:8.2f} s   (queries, judging, plan, report)")
    print(
        f"  peak memory         {figures['max_rss_mib']:8.1f} MiB (max RSS of the run; the JSON report is {figures['report_json_mib']:.1f} MiB)"
    )
    for seconds, query in figures["slowest"]:
        print(f"    slowest queries   {seconds:8.2f} s   {query}")
    if args.judge:
        ok = figures["judge_n"] >= JUDGE_TARGET_HOSTS and figures["judge_n_s"] < JUDGE_TARGET_S
        print(
            f"  judged {figures['judge_n']:,} hosts   {figures['judge_n_s']:8.2f} s   target: {JUDGE_TARGET_HOSTS:,} in under {JUDGE_TARGET_S:.0f} s"
            f"{'  ok' if ok else ('  MISSED' if figures['judge_n'] >= JUDGE_TARGET_HOSTS else '')} (CPU {figures['judge_n_cpu_s']:.1f} s, {1000 * figures['judge_n_cpu_s'] / figures['judge_n']:.1f} ms a host)"
        )
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"  load average at the end: {load:.1f} (other work on this machine slows every figure)")
    if args.json:
        print(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
