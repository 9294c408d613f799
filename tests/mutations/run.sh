#!/usr/bin/env bash
# Apply each mutation of a frequentist twin to a scratch copy of the checkout, run the tests
# that pin that twin there, and list the failures. The checkout itself is never modified.
# A patch is named <stem>--<mutation>.diff; its tests are the contract test for the stem
# (tests/test_contract.py -k <stem>), the twin's own tests/test_<stem>.py and, for the BTL
# twins tests/test_cluster.py and tests/test_results.py, for misclassification
# tests/test_judge_mean.py.
# Run from the repository root:  bash tests/mutations/run.sh [python [patch ...]]
# Every mutation must make at least one test fail; the script exits 1 if one survives (or no
# longer applies: regenerate the patch after editing the twin).
set -u
py=${1:-python}
shift || true
here=$(dirname "$0")
patches=("$@")
[ ${#patches[@]} -eq 0 ] && patches=("$here"/*--*.diff)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
status=0
for patch in "${patches[@]}"; do
    name=$(basename "$patch" .diff)
    stem=${name%%--*}
    tests=("tests/test_$stem.py")
    case $stem in
        judge_discrimination_btl|order_effect_btl) tests+=(tests/test_cluster.py tests/test_results.py) ;;
        misclassification) tests+=(tests/test_judge_mean.py) ;;
    esac
    rm -rf "$scratch/repo" && mkdir "$scratch/repo"
    # tracked and new files as they are in the checkout (uncommitted edits included)
    git ls-files -co --exclude-standard -z | xargs -0 cp --parents -t "$scratch/repo"
    patch_abs=$(cd "$(dirname "$patch")" && pwd)/$(basename "$patch")
    (cd "$scratch/repo" && git apply "$patch_abs") || { echo "$name: does not apply"; status=1; continue; }
    out=$(cd "$scratch/repo" && export PYTHONPATH=$PWD OPENBLAS_NUM_THREADS=1 &&
          "$py" -m pytest tests/test_contract.py -k "$stem" -q -p no:cacheprovider -rf 2>&1;
          "$py" -m pytest "${tests[@]}" -q -p no:cacheprovider -rf 2>&1)
    failed=$(grep '^FAILED' <<<"$out" | sed 's/^FAILED tests\/\([a-z_]*\)\.py::\([^ ]*\).*/\1::\2/')
    echo "== $name: $(grep -E '^[0-9]+ (passed|failed)|^=+ .*(passed|failed)' <<<"$out" | tr '\n' ' ')"
    grep -o 'AssertionError: (array.*' <<<"$out" | sed 's/^/   coverage counts: /'  # band test
    if [ -z "$failed" ]; then echo "   SURVIVED"; status=1; else sed 's/^/   /' <<<"$failed"; fi
done
exit $status
