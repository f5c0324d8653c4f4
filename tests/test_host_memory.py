"""Freed host memory is reused: large CPU temporaries stop page-faulting once torchstrategy is imported
(and fault as before with TORCHSTRATEGY_KEEP_HOST_MEMORY=0)."""
from __future__ import annotations

import json
import platform

import pytest

from tests import _multiprocess as mp

FAULTS = r'''
import json, resource, torch
import torchstrategy  # applies the malloc settings at import
from torchstrategy import _host_memory
# A step's pattern: activation-sized temporaries (~28 MB), freed and allocated again, here a little larger
# each time so that glibc's default (which raises its mmap threshold to the last freed size) maps every one
# fresh; kept, they come from the heap the earlier ones left.
sizes = [7_000_000 + step * 4096 for step in range(20)]
for size in sizes[:10]:
    torch.ones(size)
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for size in sizes[10:]:
    torch.ones(size)
print(json.dumps({"applied": _host_memory._applied,
                  "faults": (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 10}))
'''


@pytest.mark.slow
@pytest.mark.skipif(platform.system() != "Linux", reason="glibc's mallopt is Linux-only")
def test_large_temporaries_stop_faulting_and_the_opt_out_restores_glibcs_default(tmp_path):
    script = mp.write_script(tmp_path, FAULTS)
    results = {}
    for name, extra in (("kept", {}), ("released", {"TORCHSTRATEGY_KEEP_HOST_MEMORY": "0"})):
        run = mp.run_python([script], env=mp.clean_env(**extra), timeout=120)
        assert run.returncode == 0, run.stderr
        results[name] = json.loads(run.stdout.strip().splitlines()[-1])
    assert results["kept"]["applied"] is True and results["released"]["applied"] is False
    # 28 MB touched a step: about 6,800 4 KiB pages fault when the block comes fresh from the OS
    assert results["kept"]["faults"] < 300, results
    assert results["released"]["faults"] > 5000, results
