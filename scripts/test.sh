#!/usr/bin/env bash
# Quick start 2: set up, then run the whole test suite. Extra arguments go to pytest.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/scripts/setup.sh"
cd "$root"
# Two pytest workers (pytest-xdist), each taking whole test files: a multi-process test spends much of its time
# waiting (replicas starting and joining, a timeout under test) with a core idle, which the other worker's tests
# fill. `-n 0` (after the other arguments) runs everything in one process.
exec python -m pytest -q -n 2 --dist loadfile --durations=25 "$@"
