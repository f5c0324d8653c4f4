"""benchmarks/save_load.py in its --quick mode (tiny MLP, one round): every format is saved and loaded through
the public API, each row of the table is there with a number, and RESULTS.md is left alone."""
from __future__ import annotations

import os
import re

import pytest

from tests import _multiprocess as mp

SCRIPT = os.path.join(mp.ROOT, "benchmarks", "save_load.py")
RESULTS = os.path.join(mp.ROOT, "benchmarks", "RESULTS.md")


@pytest.mark.slow
def test_quick_run_times_every_format_both_ways_and_writes_nothing(tmp_path):
    before = open(RESULTS, encoding="utf-8").read()
    run = mp.run_python([SCRIPT, "--quick", "--folder", str(tmp_path)], timeout=240)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert open(RESULTS, encoding="utf-8").read() == before
    assert re.search(r"^CPU: .*; flags: .*; CRC-32C of TF bundles computed with ", run.stdout, re.M)
    rows = [line.split(" | ") for line in run.stdout.splitlines() if line.startswith("| ") and "---" not in line][1:]
    for model in ("seed CNN + Adam", "MLP 2x Dense(64)"):
        mine = [row for row in rows if row[0] == f"| {model}"]
        assert len(mine) == 6 + 6, mine  # six saves (two torch references), six loads (one of them build-only)
        for _, operation, method, seconds, rate, ratio in mine:
            assert float(seconds) > 0 and float(ratio.strip(" |*")) > 0, (operation, method)
        assert {row[1] for row in mine} == {"save", "load"}
    files = sorted(os.listdir(tmp_path))  # --folder keeps them: each format's own file names
    for name in ("seed-model.keras", "seed-model.weights.h5", "seed-state.pt", "seed-ckpt-tf.index", "MLP-ckpt-own"):
        assert name in files, files
