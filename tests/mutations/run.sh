#!/usr/bin/env bash
# Apply each mutation of the seed-002 twin in turn, run the tests that pin it, list the failures,
# and revert. Run from the repository root:  bash tests/mutations/run.sh [python [patch ...]]
# Every mutation must make at least one test fail; the script exits 1 if one survives.
set -u
py=${1:-python}
shift || true
here=$(dirname "$0")
patches=("$@")
[ ${#patches[@]} -eq 0 ] && patches=("$here"/*.diff)
status=0
for patch in "${patches[@]}"; do
    name=$(basename "$patch" .diff)
    git apply "$patch" || { echo "$name: does not apply"; status=1; continue; }
    out=$(OPENBLAS_NUM_THREADS=1 "$py" -m pytest tests/test_judge_discrimination_btl.py \
          tests/test_results.py -q -p no:cacheprovider -rf 2>&1)
    git apply -R "$patch"
    failed=$(grep '^FAILED' <<<"$out" | sed 's/^FAILED tests\/[a-z_]*\.py::\([^ ]*\).*/\1/')
    echo "== $name: $(tail -n 1 <<<"$out")"
    grep -o 'AssertionError: (array.*' <<<"$out" | sed 's/^/   coverage counts: /'  # band test
    if [ -z "$failed" ]; then echo "   SURVIVED"; status=1; else sed 's/^/   /' <<<"$failed"; fi
done
exit $status
