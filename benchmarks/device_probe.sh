#!/usr/bin/env bash
# Device check for `gpuadvisor probe`, for a machine with an NVIDIA GPU. Run from anywhere:
#
#   OUT=/some/dir benchmarks/device_probe.sh        (OUT defaults to ./out/device-probe)
#
# 1. Installs nvidia-ml-py with pip if `import pynvml` fails, and nothing else: gpuadvisor's
#    own dependencies (pydantic, typer, defusedxml) must already be importable; if they are
#    not, it says which are missing and stops (carry them as wheels on PYTHONPATH).
# 2. Puts a small load on the GPU when torch or cupy is there (bf16/fp32 matrix products for
#    about 40 s); otherwise it probes an idle GPU and says so.
# 3. Runs `python -m gpuadvisor probe --seconds 20 --interval 1 -o $OUT/probe.json` and, still
#    under load, `nvidia-smi -q -x > $OUT/smi.xml`.
# 4. Compares the two field by field (benchmarks/compare_probe_smi.py -> $OUT/compare.txt) and
#    times one sample through real NVML against one nvidia-smi --query-gpu run
#    (benchmarks/bench_probe.py --real -> $OUT/bench.txt).
# Exit status: the probe's, else 1 when the comparison found a mismatch.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT="${OUT:-$PWD/out/device-probe}"
PY="${PYTHON:-python3}"
export PYTHONUNBUFFERED=1
mkdir -p "$OUT"
say() { echo "== $*"; }

say "$("$PY" --version 2>&1); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -4 | tr '\n' ';')"

if ! "$PY" -c "import pynvml" 2>/dev/null; then
    say "nvidia-ml-py missing: pip install nvidia-ml-py"
    "$PY" -m pip install --quiet nvidia-ml-py || say "pip could not install nvidia-ml-py; the probe will report NVML missing"
fi
missing=$("$PY" -c 'import importlib.util as u; print(" ".join(m for m in ("pydantic", "typer", "defusedxml") if u.find_spec(m) is None))')
if [ -n "$missing" ]; then
    say "gpuadvisor needs these Python packages, not installed here: $missing"
    say "carry them as wheels and put them on PYTHONPATH; this script installs only nvidia-ml-py"
    exit 3
fi

load_pid=""
if "$PY" -c "import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
    say "load: torch bf16 8192x8192 matrix products for 40 s"
    "$PY" - >"$OUT/load.log" 2>&1 <<'EOF' &
import time
import torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
end = time.time() + 40
while time.time() < end:
    for _ in range(20):
        b = a @ a
    torch.cuda.synchronize()
print("load done")
EOF
    load_pid=$!
elif "$PY" -c "import cupy; cupy.cuda.runtime.getDeviceCount()" 2>/dev/null; then
    say "load: cupy fp32 8192x8192 matrix products for 40 s"
    "$PY" - >"$OUT/load.log" 2>&1 <<'EOF' &
import time
import cupy
a = cupy.random.rand(8192, 8192, dtype=cupy.float32)
end = time.time() + 40
while time.time() < end:
    for _ in range(5):
        b = a @ a
    cupy.cuda.Device().synchronize()
print("load done")
EOF
    load_pid=$!
else
    say "no torch or cupy that sees a GPU: probing without load (idle clocks; PCIe Gen may read below max)"
fi
[ -n "$load_pid" ] && sleep 3  # let clocks and the PCIe link come up

say "gpuadvisor probe --seconds 20 --interval 1"
"$PY" -m gpuadvisor probe --seconds 20 --interval 1 -o "$OUT/probe.json" 2> >(tee "$OUT/probe.log" >&2)
probe_rc=$?
nvidia-smi -q -x >"$OUT/smi.xml" 2>&1 || say "nvidia-smi -q -x failed (see $OUT/smi.xml)"
if [ -n "$load_pid" ]; then
    kill "$load_pid" 2>/dev/null
    wait "$load_pid" 2>/dev/null
fi

compare_rc=0
if [ "$probe_rc" -eq 0 ]; then
    say "probe vs nvidia-smi -q -x"
    "$PY" benchmarks/compare_probe_smi.py "$OUT/probe.json" "$OUT/smi.xml" | tee "$OUT/compare.txt"
    compare_rc=${PIPESTATUS[0]}
fi
say "cost of one sample"
"$PY" -m benchmarks.bench_probe --gpus 1 8 --real | tee "$OUT/bench.txt"

say "probe exit $probe_rc, comparison exit $compare_rc; files in $OUT"
if [ "$probe_rc" -ne 0 ]; then exit "$probe_rc"; fi
[ "$compare_rc" -eq 0 ] || exit 1
