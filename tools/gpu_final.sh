#!/usr/bin/env bash
# One short GPU session (the device tool's H200): the CUDA differential fuzzer
# (interpreter vs CPU release[/debug] vs CUDA) and CUDA tests, side by side.
# Logs under $OUT.
#
#   python3 -m pip install -q --no-index --no-deps --no-compile --upgrade \
#       --target /tmp/site .whl/*.whl && bash tools/gpu_final.sh SECONDS SEED
#
# Environment: JOBS (fuzz child processes, default 12), FUZZ_ARGS (extra fuzz
# options, e.g. --no-debug), TESTS (test files, default tests/test_semantics.py;
# "none" runs no tests), TESTK (their -k expression, default "cuda"), TEST_JOBS (pytest
# workers, default auto).
# .whl/ may carry a numba wheel too (numquad needs numba >= 0.68.1).
set -u
OUT=${OUT:-/tmp/numquad-gpu}
SECS=${1:-120}
SEED=${2:-2026}
JOBS=${JOBS:-12}
FUZZ_ARGS=${FUZZ_ARGS:-}
TESTS=${TESTS:-tests/test_semantics.py}
TESTK=${TESTK:-cuda}
mkdir -p "$OUT"
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
date -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nproc
git log -1 --format='commit %h %s' 2>/dev/null || true
python3 -c "import sys, numba, numpy; print(sys.version.split()[0], 'numba', numba.__version__, 'numpy', numpy.__version__)"
# stop generating early enough that the kernels in flight (--timeout 100, and a
# run alone for one without an answer) finish before the timeout below
MIN=$(python3 -c "print(max(0.2, ($SECS - 170) / 60))")
timeout $((SECS + 20)) python3 -m numquad.fuzz --target cuda --minutes "$MIN" --seed "$SEED" \
    --jobs "$JOBS" --out "$OUT/fuzz" --shrink 0 --timeout 100 $FUZZ_ARGS > "$OUT/fuzz.log" 2>&1 &
FUZZ=$!
if [ "$TESTS" != "none" ]; then
    timeout "$SECS" python3 -m pytest -q -p no:cacheprovider --full -n "${TEST_JOBS:-auto}" $TESTS -k "$TESTK" > "$OUT/tests.log" 2>&1
    echo "tests rc=$?: $(tail -n 1 "$OUT/tests.log")"
fi
wait $FUZZ
echo "fuzz rc=$?"
tail -n 25 "$OUT/fuzz.log"
[ "$TESTS" != "none" ] && grep -E "FAILED|Error" "$OUT/tests.log" | head -20
tar czf "$OUT/fuzz-repros.tgz" -C "$OUT" fuzz 2>/dev/null && rm -rf "$OUT/fuzz"
exit 0
