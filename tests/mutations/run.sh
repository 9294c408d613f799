#!/usr/bin/env bash
# Apply each mutation of a twin (BTL; mc_: misclassification; sc_: score calibration) to a scratch copy of the checkout, run the tests that pin
# the twins there, and list the failures. The checkout itself is never modified.
# Run from the repository root:  bash tests/mutations/run.sh [python [patch ...]]
# Every mutation must make at least one test fail; the script exits 1 if one survives.
set -u
py=${1:-python}
shift || true
here=$(dirname "$0")
patches=("$@")
[ ${#patches[@]} -eq 0 ] && patches=("$here"/*.diff)
tests=(tests/test_judge_discrimination_btl.py tests/test_order_effect_btl.py tests/test_cluster.py
       tests/test_results.py)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
status=0
for patch in "${patches[@]}"; do
    name=$(basename "$patch" .diff)
    rm -rf "$scratch/repo" && mkdir "$scratch/repo"
    # tracked and new files as they are in the checkout (uncommitted edits included)
    git ls-files -co --exclude-standard -z | xargs -0 cp --parents -t "$scratch/repo"
    patch_abs=$(cd "$(dirname "$patch")" && pwd)/$(basename "$patch")
    (cd "$scratch/repo" && git apply "$patch_abs") || { echo "$name: does not apply"; status=1; continue; }
    # the label and rating twins have their own test files (prefixes mc_, sc_)
    case "$name" in
        mc_*) run=(tests/test_misclassification.py tests/test_judge_mean.py) ;;
        sc_*) run=(tests/test_score_calibration.py) ;;
        *) run=("${tests[@]}") ;;
    esac
    out=$(cd "$scratch/repo" && PYTHONPATH=$PWD OPENBLAS_NUM_THREADS=1 "$py" -m pytest \
          "${run[@]}" -q -p no:cacheprovider -rf 2>&1)
    failed=$(grep '^FAILED' <<<"$out" | sed 's/^FAILED tests\/\([a-z_]*\)\.py::\([^ ]*\).*/\1::\2/')
    echo "== $name: $(tail -n 1 <<<"$out")"
    grep -o 'AssertionError: (array.*' <<<"$out" | sed 's/^/   coverage counts: /'  # band test
    if [ -z "$failed" ]; then echo "   SURVIVED"; status=1; else sed 's/^/   /' <<<"$failed"; fi
done
exit $status
