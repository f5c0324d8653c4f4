#!/usr/bin/env bash
# The GPU check (benchmarks/gpu_check.py): CUDA tests, strategies against NCCL loops, mixed precision; one table.
# Installs nothing. Uses $PYTHON, else this checkout's .venv, else python3 (the GPU machine's, which holds torch).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-}"
if [ -z "$python" ]; then
  if [ -x "$root/.venv/bin/python" ]; then python="$root/.venv/bin/python"; else python="python3"; fi
fi
cd "$root"
export PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
exec timeout 480 "$python" benchmarks/gpu_check.py "$@"
