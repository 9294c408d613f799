#!/usr/bin/env bash
# Apply each mutation of a frequentist twin in turn, run the tests that pin that twin (the
# contract test for its stem and the twin's own test file), list the failing tests, and revert.
# A patch is named <stem>--<mutation>.diff. Run from the repository root:
#     bash tests/mutations/run.sh [python [patch ...]]
# Every mutation must make at least one test fail; the script exits 1 if one survives.
set -u
py=${1:-python}
shift || true
here=$(dirname "$0")
patches=("$@")
[ ${#patches[@]} -eq 0 ] && patches=("$here"/*--*.diff)
status=0
for patch in "${patches[@]}"; do
    name=$(basename "$patch" .diff)
    stem=${name%%--*}
    git apply "$patch" || { echo "$name: does not apply"; status=1; continue; }
    out=$(OPENBLAS_NUM_THREADS=1 "$py" -m pytest tests/test_contract.py -k "$stem" \
          "tests/test_$stem.py" -q -p no:cacheprovider -rf 2>&1)
    git apply -R "$patch"
    failed=$(grep '^FAILED' <<<"$out" | sed 's/^FAILED tests\/\([a-z_]*\)\.py::\([^ ]*\).*/\1::\2/')
    echo "== $name: $(tail -n 1 <<<"$out")"
    if [ -z "$failed" ]; then echo "   SURVIVED"; status=1; else sed 's/^/   /' <<<"$failed"; fi
done
exit $status
