#!/usr/bin/env bash
# Creates ./.venv-tpu (once): torchstrategy with the [tpu] extra (torch 2.9.1, torchvision 0.24.1,
# torch-xla 2.9.0; about 7 GB, most of it torch's CUDA wheels from PyPI) and pytest, for the TPU path on
# XLA:CPU. Safe to run again. A download the network breaks is resumed, and the install tried 3 times;
# if it still fails this exits 75 (temporary failure), so callers can tell it from a failing test.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${TORCHSTRATEGY_TPU_VENV:-$root/.venv-tpu}"
python="${PYTHON:-python3}"
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv" || exit 1
fi
stamp="$venv/.torchstrategy-installed"
if [ ! -f "$stamp" ] || [ "$root/pyproject.toml" -nt "$stamp" ]; then
  source "$root/scripts/check_disk.sh"
  if [ ! -f "$stamp" ] && ! check_disk "$venv" 9 "Installing torch-xla into $venv"; then
    exit 75  # the machine, not the code: reported as an environment that could not be installed
  fi
  "$venv/bin/python" -m pip install --quiet --upgrade pip || true
  for attempt in 1 2 3; do
    if "$venv/bin/python" -m pip install --quiet --resume-retries 20 -e "$root[tpu]" "pytest>=7"; then
      touch "$stamp"
      exit 0
    fi
    echo "setup_tpu.sh: installing the [tpu] environment failed (attempt $attempt of 3); retrying" >&2
    sleep 10
  done
  echo "setup_tpu.sh: could not install the [tpu] environment (torch 2.9.1 + torch-xla 2.9.0) after 3 attempts" >&2
  exit 75
fi
