#!/usr/bin/env bash
# Quick start 2: set up, then run the whole test suite. Extra arguments go to pytest.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/scripts/setup.sh"
cd "$root"
exec python -m pytest -q --durations=25 "$@"
