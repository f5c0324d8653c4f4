#!/usr/bin/env bash
# Quick start 1: set up, then train the classic CIFAR-10 CNN (examples/cifar10.py) on MirroredStrategy
# (every local GPU; on a machine without one, a single CPU replica: add --replicas 2 for two processes).
# Uses real CIFAR-10 when it can be found or downloaded, else says so and uses synthetic data.
# Extra arguments go to the example, e.g. `bash scripts/train.sh --epochs 10`.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/scripts/setup.sh"
cd "$root"
exec python examples/cifar10.py --epochs 2 --fallback-synthetic --strategy mirrored "$@"
