#!/usr/bin/env bash
# One short GPU session (the device tool's H200): the CUDA differential fuzzer
# (interpreter vs CPU release/debug vs CUDA) and the CUDA cases of
# tests/test_semantics.py, side by side. Logs under $OUT.
#
#   python3 -m pip install -q --no-index --no-deps --no-compile --upgrade \
#       --target /tmp/site .whl/*.whl && bash tools/gpu_final.sh SECONDS SEED
set -u
OUT=${OUT:-/tmp/numquad-gpu}
SECS=${1:-120}
SEED=${2:-2026}
mkdir -p "$OUT"
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
date -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
git log -1 --format='commit %h %s' 2>/dev/null || true
MIN=$(python3 -c "print(max(0.2, ($SECS - 60) / 60))")
timeout $((SECS + 20)) python3 -m numquad.fuzz --target cuda --minutes "$MIN" --seed "$SEED" \
    --jobs 12 --out "$OUT/fuzz" --shrink 0 --timeout 100 > "$OUT/fuzz.log" 2>&1 &
FUZZ=$!
timeout "$SECS" python3 -m pytest -q -p no:cacheprovider tests/test_semantics.py -k cuda \
    > "$OUT/semantics.log" 2>&1
echo "semantics rc=$?: $(tail -n 1 "$OUT/semantics.log")"
wait $FUZZ
echo "fuzz rc=$?"
tail -n 25 "$OUT/fuzz.log"
grep -E "FAILED|Error" "$OUT/semantics.log" | head -20
