#!/usr/bin/env bash
# One GPU session on the lent H200 (the device tool), from the repository root:
# GPU facts, the test suite (CUDA tests included), the main job on cpu + cuda,
# the GPU benchmarks and SASS counts. Logs go to $OUT (or /tmp/numquad-gpu).
#
#   python3 -m pip install -q --no-index --no-deps --no-compile --upgrade \
#       --target /tmp/site .whl/*.whl && bash tools/gpu_session.sh [pytest args...]
set -u
OUT=${OUT:-/tmp/numquad-gpu}
mkdir -p "$OUT"
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
T0=$(date +%s)
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  python3 -c "import sys, numpy, numba, llvmlite; from numba import cuda; \
print('python', sys.version.split()[0], 'numpy', numpy.__version__, 'numba', numba.__version__, \
'llvmlite', llvmlite.__version__, 'numba-cuda', getattr(cuda, '__version__', '?'), \
'gpu', cuda.is_available() and cuda.get_current_device().name)"
  nproc
} 2>&1 | tee "$OUT/env.txt"

step() {  # name, command...
  local name=$1; shift
  local t=$(date +%s)
  "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  echo "$name rc=$rc $(( $(date +%s) - t ))s: $(tail -n 1 "$OUT/$name.log")" | tee -a "$OUT/summary.txt"
}

step pytest python3 -m pytest -q -p no:cacheprovider --full -n 12 "${@:-tests}"
step mainjob python3 -m numquad --target all --jobs 12
step bench_gpu python3 benchmarks/bench_gpu.py --json "$OUT/bench_gpu.json"
echo "---- summary ($(( $(date +%s) - T0 ))s)"
cat "$OUT/summary.txt"
grep -E "passed|failed" "$OUT/pytest.log" | tail -n 3
grep -E "FAIL|Error" "$OUT/pytest.log" | head -n 40
tail -n 3 "$OUT/mainjob.log"
grep -E "FAIL" "$OUT/mainjob.log" | head -n 20
tail -n 40 "$OUT/bench_gpu.log"
