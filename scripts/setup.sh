#!/usr/bin/env bash
# Creates ./.venv (once) and installs torchstrategy with the extras the example and tests need.
# Sourced by train.sh and test.sh; safe to run again (pip skips what is already there).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${TORCHSTRATEGY_VENV:-$root/.venv}"
python="${PYTHON:-python3}"
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
stamp="$venv/.torchstrategy-installed"
if [ ! -f "$stamp" ] || [ "$root/pyproject.toml" -nt "$stamp" ]; then
  source "$root/scripts/check_disk.sh"
  [ -f "$stamp" ] || check_disk "$venv" 7 "Installing torch and torchstrategy into $venv"
  "$venv/bin/python" -m pip install --quiet --upgrade pip
  "$venv/bin/python" -m pip install --quiet -e "$root[vision,dev]"
  touch "$stamp"
fi
export PATH="$venv/bin:$PATH"
