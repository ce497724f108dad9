#!/usr/bin/env bash
# The example programs on the GPU (the device tool's H200), default sizes, one
# after another, from the repository root; each checks its own result against
# NumPy and prints its timings. Logs under $OUT/examples.
#
#   python3 -m pip install -q --no-index --no-deps --no-compile --upgrade \
#       --target /tmp/site .whl/*.whl && bash tools/gpu_examples.sh
set -u
OUT=${OUT:-/tmp/numquad-gpu}
mkdir -p "$OUT/examples"
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
for f in stream_compaction histogram block_scan_radix stencil_2d matmul_and_warp_sum image_derivatives; do
    t=$(date +%s)
    timeout 240 python3 "examples/$f.py" --target cuda > "$OUT/examples/$f.log" 2>&1
    echo "== $f rc=$? $(( $(date +%s) - t ))s"
    grep -v -i "warning\|^ *warn\|NumbaPerformance" "$OUT/examples/$f.log" | tail -n 12
done
