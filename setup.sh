#!/usr/bin/env bash
# Create .venv with Python 3.12 and install bayescal with its test and notebook extras.
# PyMC 6 / ArviZ 1 need Python >= 3.12; on an older Python pip would silently install the
# previous generation, so this script refuses to use one.
set -euo pipefail
cd "$(dirname "$0")"

is_312() { "$1" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))' >/dev/null 2>&1; }

find_python() {
  local cand root dir
  for cand in python3 python3.12; do
    if command -v "$cand" >/dev/null 2>&1 && is_312 "$cand"; then command -v "$cand"; return 0; fi
  done
  for root in "$(pyenv root 2>/dev/null || true)" "${PYENV_ROOT:-}" "$HOME/.pyenv"; do
    [ -n "$root" ] || continue
    for dir in "$root"/versions/3.12*; do
      if [ -x "$dir/bin/python3" ] && is_312 "$dir/bin/python3"; then echo "$dir/bin/python3"; return 0; fi
    done
  done
  return 1
}

if [ ! -x .venv/bin/python ] || ! is_312 .venv/bin/python; then
  if ! PY=$(find_python); then
    echo "setup.sh: Python 3.12 not found (tried python3, python3.12 and pyenv's versions)." >&2
    echo "Install it (e.g. 'pyenv install 3.12') and run ./setup.sh again." >&2
    exit 1
  fi
  echo "setup.sh: creating .venv with $("$PY" --version) at $PY"
  rm -rf .venv
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e ".[test,notebooks]"
echo "setup.sh: ready ($(.venv/bin/python -c 'import pymc, arviz; print("pymc", pymc.__version__, "arviz", arviz.__version__)'))"
