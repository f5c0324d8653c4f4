#!/usr/bin/env bash
# Runs the tests marked `tpu` in ./.venv-tpu (made by setup_tpu.sh: torch-xla 2.9.0 + torch 2.9.1), on
# 4 XLA:CPU devices unless PJRT_DEVICE / CPU_NUM_DEVICES say otherwise. Extra arguments go to pytest.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup_tpu.sh" || exit $?  # 75: the environment could not be installed (network)
venv="${TORCHSTRATEGY_TPU_VENV:-$root/.venv-tpu}"
cd "$root"
export PJRT_DEVICE="${PJRT_DEVICE:-CPU}"
export CPU_NUM_DEVICES="${CPU_NUM_DEVICES:-4}"
exec "$venv/bin/python" -m pytest -q -m tpu "$@"
