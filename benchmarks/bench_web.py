"""The web page's resident memory under twenty people at once (issue #31).

Not a unit test. From the repository root, with gpuadvisor installed (README set-up)::

    python benchmarks/bench_web.py            # full: 2 minutes' warm-up, then 10 minutes
    python benchmarks/bench_web.py --quick    # CI: 60 s warm-up, then 60 s
    python benchmarks/bench_web.py --quick --report-only   # figures, exit 0

It starts ``gpuadvisor serve --port 0`` (the installed program, in a process of its own)
and runs twenty simulated people against it, each in a loop: every question answered
(a profile of its own each time: kind, objective, memory and budget vary), a capture
uploaded, the report page, its PDF. The server's resident memory (``VmRSS`` of
``/proc/PID/status``; Linux) is read every few seconds. The figure is the growth over
the run after the warm-up: the largest reading of the run against the reading when the
warm-up ended. Target: under 10 %. Also printed: sessions finished, requests failed
(must be 0) and the store of kept captures, as the page reports it nowhere else.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
CAPTURE = ROOT / "examples" / "evidence" / "thermal-throttled-workstation" / "nvidia-smi-q.txt"
USERS = 20
TARGET_GROWTH = 0.10
KINDS = ("training", "inference", "rendering", "simulation", "mixed", "cad-cae")
OBJECTIVES = ("latency", "throughput", "correctness")
_FIELD = re.compile(r'data-field="([^"]+)"')
_WALK = re.compile(r'name="walk" value="([^"]+)"')
_UPLOAD = re.compile(r'action="(/report\?w=[^"]+)"')
_DECISION = re.compile(r'name="decision" value="([^"]+)"')


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def start_server() -> tuple[subprocess.Popen[str], str]:
    program = Path(sys.executable).parent / "gpuadvisor"
    command = [str(program)] if program.exists() else [sys.executable, "-m", "gpuadvisor"]
    child = subprocess.Popen(
        [*command, "serve", "--port", "0"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stderr is not None
    found = re.search(r"on (http://127\.0\.0\.1:\d+)/", child.stderr.readline())
    if found is None:
        child.kill()
        raise RuntimeError("gpuadvisor serve did not start")
    return child, found.group(1)


def answers(rng: random.Random) -> dict[str, str]:
    """One person's answers: every session a profile of its own."""
    return {
        "meta.title": f"Load session {rng.randrange(10**6)}",
        "workload.kind": rng.choice(KINDS),
        "workload.objective": rng.choice(OBJECTIVES),
        "workload.vram_need_gib": f"{rng.uniform(4, 120):.1f}",
        "workload.concurrent_jobs": str(rng.randint(1, 8)),
        "platform.chassis": rng.choice(("tower", "workstation", "rack-2u", "unknown")),
        "budget.max_usd": f"{rng.randint(2, 200)}k",
    }


def session(client: httpx.Client, rng: random.Random, pdf: bool = True) -> int:
    """One person from the first question to the PDF; the requests it made."""
    typed = answers(rng)
    page = client.post("/start", follow_redirects=True)
    requests = 1
    for _ in range(80):
        field = _FIELD.search(page.text)
        if field is None:
            break
        walk = _WALK.search(page.text)
        assert walk is not None, page.text
        data = {"walk": walk.group(1), "go": "next", "answer": typed.get(field.group(1), "")}
        page = client.post("/answer", data=data, follow_redirects=True)
        requests += 1
        page.raise_for_status()
    upload = _UPLOAD.search(page.text)
    assert upload is not None, page.text
    files = [("evidence", (f"capture-{rng.randrange(100)}.txt", CAPTURE.read_bytes()))]
    report = client.post(upload.group(1).replace("&amp;", "&"), files=files, follow_redirects=True)
    report.raise_for_status()
    decision = _DECISION.search(report.text)
    assert decision is not None, report.text[:2000]
    if not pdf:
        return requests + 2
    made = client.post("/download/pdf", data={"decision": decision.group(1)})
    made.raise_for_status()
    assert made.content.startswith(b"%PDF")
    return requests + 3


class Load:
    """Twenty people in threads, each starting a new session when one ends."""

    def __init__(self, url: str, users: int, pdf: bool = True) -> None:
        self.url = url
        self.pdf = pdf
        self.users = users
        self.stop = threading.Event()
        self.sessions = 0
        self.requests = 0
        self.failures: list[str] = []
        self._lock = threading.Lock()
        self._threads = [
            threading.Thread(target=self._person, args=(n,), daemon=True) for n in range(users)
        ]

    def _person(self, number: int) -> None:
        rng = random.Random(number)
        with httpx.Client(base_url=self.url, timeout=120) as client:
            while not self.stop.is_set():
                try:
                    made = session(client, rng, self.pdf)
                except Exception as exc:  # counted, and the person goes on
                    with self._lock:
                        self.failures.append(f"{type(exc).__name__}: {exc}"[:300])
                    continue
                with self._lock:
                    self.sessions += 1
                    self.requests += made

    def __enter__(self) -> Load:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop.set()
        for thread in self._threads:
            thread.join(180)


def measure(warmup_s: float, run_s: float, every_s: float, pdf: bool = True) -> dict[str, Any]:
    child, url = start_server()
    readings: list[tuple[float, float]] = []
    try:
        started_mib = rss_mib(child.pid)
        with Load(url, USERS, pdf) as load:
            begun = time.monotonic()
            while time.monotonic() - begun < warmup_s:
                time.sleep(every_s)
                print(f"  warm-up {time.monotonic() - begun:5.0f} s: {rss_mib(child.pid):6.1f} MiB",
                      flush=True)  # fmt: skip
            baseline = rss_mib(child.pid)
            sessions_before = load.sessions
            while (elapsed := time.monotonic() - begun - warmup_s) < run_s:
                time.sleep(every_s)
                readings.append((elapsed, rss_mib(child.pid)))
                print(f"  run     {elapsed:5.0f} s: {readings[-1][1]:6.1f} MiB", flush=True)
            sessions = load.sessions - sessions_before
        peak = max(mib for _, mib in readings)
        return {
            "users": USERS,
            "warmup_s": warmup_s,
            "run_s": run_s,
            "rss_at_start_mib": round(started_mib, 1),
            "rss_after_warmup_mib": round(baseline, 1),
            "rss_peak_mib": round(peak, 1),
            "rss_at_end_mib": round(readings[-1][1], 1),
            "growth": round(peak / baseline - 1, 4),
            "sessions_in_run": sessions,
            "sessions_per_minute": round(sessions / run_s * 60, 1),
            "pdf": pdf,
            "failures": len(load.failures),
            "first_failures": load.failures[:3],
        }
    finally:
        child.terminate()
        try:
            child.wait(30)
        except subprocess.TimeoutExpired:
            child.kill()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="60 s warm-up, 60 s run (CI)")
    parser.add_argument("--report-only", action="store_true", help="print, always exit 0")
    parser.add_argument("--warmup", type=float, help="seconds of warm-up (default 120)")
    parser.add_argument("--seconds", type=float, help="seconds measured (default 600)")
    parser.add_argument(
        "--without-pdf", action="store_true", help="no PDF downloads (what the rest holds)"
    )
    args = parser.parse_args()
    warmup = args.warmup if args.warmup is not None else (60.0 if args.quick else 120.0)
    seconds = args.seconds if args.seconds is not None else (60.0 if args.quick else 600.0)
    figures = measure(
        warmup, seconds, every_s=5.0 if args.quick else 10.0, pdf=not args.without_pdf
    )
    print(json.dumps(figures, indent=2))
    met = figures["growth"] < TARGET_GROWTH and figures["failures"] == 0
    print(
        f"resident memory grew {figures['growth']:.1%} over {seconds:.0f} s of {USERS} users "
        f"after {warmup:.0f} s of warm-up (target under {TARGET_GROWTH:.0%}); "
        f"{figures['failures']} failed sessions: {'met' if met else 'MISSED'}"
    )
    return 0 if met or args.report_only else 1


if __name__ == "__main__":
    sys.exit(main())
