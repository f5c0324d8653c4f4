"""benchmarks/shared_cores.py in its quick mode on one model: both policies alone and beside each competitor
with a rate in every cell and slowdowns that are the ratios of those rates, the op table, its section written
into the RESULTS file it is given, and no competing process left running."""
from __future__ import annotations

import os
import re
import subprocess

import pytest

from tests import _multiprocess as mp

SCRIPT = os.path.join(mp.ROOT, "benchmarks", "shared_cores.py")


def _competitors() -> list:
    listing = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [line for line in listing.splitlines() if "np.copyto(b, a)" in line or "1103515245" in line]


@pytest.mark.slow
def test_quick_run_prints_both_tables_writes_its_section_and_stops_its_competitors(tmp_path):
    results = tmp_path / "RESULTS.md"
    results.write_text("# Benchmark results\n\n## other.py: kept\n\nan older section\n\n")
    before = _competitors()
    run = mp.run_python([SCRIPT, "--quick", "--models", "conv1", "--results", str(results)], env=mp.clean_env(),
                        timeout=300)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert re.search(r"CPU: .*avx512_bf16 (yes|no), amx_bf16 (yes|no)", run.stdout)
    rows = [line.strip(" |").split(" | ") for line in run.stdout.splitlines() if line.startswith("| 2 threads")]
    assert [(row[1], row[2]) for row in rows] == [("conv1", "float32"), ("conv1", "mixed_bfloat16")]
    for row in rows:
        alone, spin, spin_slowdown, stream, stream_slowdown = row[3:]
        rates = [float(cell.replace(",", "")) for cell in (alone, spin, stream)]
        assert all(rate > 0 for rate in rates), row
        # a slowdown is the ratio of the printed (rounded) rates
        assert float(spin_slowdown.rstrip("x")) == pytest.approx(rates[0] / rates[1], abs=0.01), row
        assert float(stream_slowdown.rstrip("x")) == pytest.approx(rates[0] / rates[2], abs=0.01), row
    ops = [line.strip(" |").split(" | ") for line in run.stdout.splitlines() if line.startswith("| conv1 |")]
    families = {row[2] for row in ops}
    assert {"matmul (oneDNN/BLAS)", "optimizer", "everything else"} <= families, ops
    assert all(float(row[3]) >= 0 and float(row[4]) >= 0 for row in ops), ops
    text = results.read_text()
    assert "## other.py: kept\n\nan older section" in text
    assert "## shared_cores.py:" in text and "| 2 threads (default) | conv1 | mixed_bfloat16 |" in text
    assert _competitors() == before  # every competing process was killed
