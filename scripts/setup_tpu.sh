#!/usr/bin/env bash
# Creates ./.venv-tpu (once): torchstrategy with the [tpu] extra (torch 2.9.1, torchvision 0.24.1,
# torch-xla 2.9.0; about 7 GB) and pytest, for the TPU path on XLA:CPU. Safe to run again.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${TORCHSTRATEGY_TPU_VENV:-$root/.venv-tpu}"
python="${PYTHON:-python3}"
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
stamp="$venv/.torchstrategy-installed"
if [ ! -f "$stamp" ] || [ "$root/pyproject.toml" -nt "$stamp" ]; then
  "$venv/bin/python" -m pip install --quiet --upgrade pip
  "$venv/bin/python" -m pip install --quiet -e "$root[tpu]" "pytest>=7"
  touch "$stamp"
fi
