#!/usr/bin/env bash
# The test command: sets everything up, then runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
exec .venv/bin/python -m pytest -q "$@"
