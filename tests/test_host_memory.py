"""Freed host memory is reused: repeated large CPU tensors stop page-faulting once torchstrategy is imported
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
x = torch.ones(256, 32, 30, 30)
for _ in range(10):  # warm: the heap grows to its working size once
    y = torch.relu(x + 1); z = y * 2; del y, z
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(10):  # a step's pattern: two 29 MB temporaries alive at once, then freed
    y = torch.relu(x + 1); z = y * 2; del y, z
print(json.dumps({"applied": _host_memory._applied,
                  "faults": (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 10}))
'''


@pytest.mark.skipif(platform.system() != "Linux", reason="glibc's mallopt is Linux-only")
def test_large_temporaries_stop_faulting_and_the_opt_out_restores_glibcs_default(tmp_path):
    script = mp.write_script(tmp_path, FAULTS)
    results = {}
    for name, extra in (("kept", {}), ("released", {"TORCHSTRATEGY_KEEP_HOST_MEMORY": "0"})):
        run = mp.run_python([script], env=mp.clean_env(**extra), timeout=120)
        assert run.returncode == 0, run.stderr
        results[name] = json.loads(run.stdout.strip().splitlines()[-1])
    assert results["kept"]["applied"] is True and results["released"]["applied"] is False
    # 3 x 29 MB touched a step: about 21,000 4 KiB pages would fault if each block came fresh from the OS
    assert results["kept"]["faults"] < 500, results
    assert results["released"]["faults"] > 5000, results
