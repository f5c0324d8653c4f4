"""benchmarks/call_overhead.py in its quick mode, on 1 process and 2 replicas: it prints the CPU's flags and
both tables with a number in every cell (a per-step cell may instead say its quick slope drowned in noise),
and writes its section into the RESULTS file it is given."""
from __future__ import annotations

import os
import re

import pytest

from tests import _multiprocess as mp

SCRIPT = os.path.join(mp.ROOT, "benchmarks", "call_overhead.py")
CALLS = {"`fit` | NumPy": "train", "`fit` | Dataset": "train", "`evaluate` | NumPy": "test",
         "`evaluate` | Dataset": "test", "`predict` | NumPy": "predict", "`predict` | Dataset": "predict",
         "`train_on_batch` | NumPy": "train", "`test_on_batch` | NumPy": "test", "`predict_on_batch` | NumPy": "predict"}
NOISE = "n/a (noise: more batches or an idle machine)"  # call_overhead.NOISE


def _numbers(row: str) -> list:
    return [float(n) for n in re.findall(r"(?<![\w.])-?\d+\.\d+", row)]


@pytest.mark.slow
def test_quick_run_prints_both_tables_and_writes_its_section(tmp_path):
    results = tmp_path / "RESULTS.md"
    results.write_text("# Benchmark results\n\n## other.py: kept\n\nan older section\n\n")
    run = mp.run_python([SCRIPT, "--quick", "--results", str(results)], env=mp.clean_env(), timeout=240)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert re.search(r"CPU: .*avx2 (yes|no), avx512f (yes|no)", run.stdout)
    rows = {" | ".join(line.split(" | ", 2)[:2]): line for line in run.stdout.splitlines() if line.startswith("| ")}
    by_name = {line.split(" | ", 1)[0]: line for line in rows.values()}
    bare = {kind: _numbers(by_name[f"| bare torch {kind} step"].split(" | ", 2)[2]) for kind in ("train", "test", "predict")}

    def fit_step(data: str, side: int) -> float:  # fit's own per-step time, or the bare step where noise hid it
        cell = rows[f"| `fit` per step | {data}"].strip(" |").split(" | ")[2 + 2 * side]
        return bare["train"][side] if cell == NOISE else float(cell.split()[0])

    for call, kind in CALLS.items():
        row = rows["| " + call]
        per_call_1, fixed_1, per_call_2, fixed_2 = _numbers(row)
        assert 0 < per_call_1 < 1000 and 0 < per_call_2 < 1000, row
        # one step per call: the fixed cost is the call less one step, on each side: fit's own for a training
        # call (on 2 replicas its gradient average is not the bare step's gloo all-reduce), else the bare step's
        data = call.split(" | ")[1]
        step = [fit_step(data, side) for side in (0, 1)] if kind == "train" else bare[kind]
        assert abs(per_call_1 - step[0] - fixed_1) < 0.02, (row, step)
        assert abs(per_call_2 - step[1] - fixed_2) < 0.02, (row, step)
    for line in (rows["| `fit` per step | NumPy"], rows["| `fit` per step | Dataset"],
                 by_name["| bare torch loop per step"]):
        cells = line.strip(" |").split(" | ")[2:]
        assert len(cells) == 4, line
        for ms, ratio in (cells[:2], cells[2:]):
            # a quick run's few extra batches may drown in a busy machine's noise: then both cells say so,
            # and never print a slope that is not positive
            if ms == NOISE:
                assert ratio == NOISE, line
            else:
                assert float(ms.split()[0]) > 0 and float(ratio.split("x")[0].split()[0]) > 0, line
                assert ratio.endswith("x bare") or ratio == "1.00x", line
    collective = by_name["| one all_reduce of 4 floats"]
    assert "| - |" in collective and len(_numbers(collective)) == 1 and _numbers(collective)[0] > 0, collective
    text = results.read_text()
    assert "## other.py: kept\n\nan older section" in text
    assert "## call_overhead.py:" in text and "| `predict_on_batch` | NumPy |" in text
