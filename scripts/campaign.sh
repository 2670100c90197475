#!/usr/bin/env bash
# The main job: sets everything up, then runs a short real fuzz campaign (5 minutes by default)
# on the CPU, the software Vulkan device and the compile-only GPU targets.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
exec .venv/bin/shapefuzz fuzz --time "${SHAPEFUZZ_TIME:-5m}" --campaign campaign-demo --corpus campaign-demo/corpus "$@"
