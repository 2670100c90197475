#!/usr/bin/env bash
# The test command: sets everything up, then runs the whole test suite, on as many pytest-xdist
# workers as this machine has cores (one test's Python runs while another waits on its compiler).
# Arguments go to pytest: your own `-n N` replaces the number, `-n 0` or `-p no:xdist` runs
# everything in this one process.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
workers=(-n "$(nproc)")
dist=(--dist loadgroup)  # the tests tests/conftest.py groups (xdist_group) run on one worker
for arg in "$@"; do
    case "$arg" in
        -n|-n*|--numprocesses|--numprocesses=*) workers=() ;;
        --dist|--dist=*|-d) dist=() ;;
        no:xdist|-pno:xdist) workers=(); dist=() ;;
    esac
done
exec .venv/bin/python -m pytest -q ${workers[@]+"${workers[@]}"} ${dist[@]+"${dist[@]}"} "$@"
