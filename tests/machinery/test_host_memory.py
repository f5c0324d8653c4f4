"""Freed host memory is reused: large CPU temporaries stop page-faulting once CPU training starts (and fault
as before with TORCHSTRATEGY_KEEP_HOST_MEMORY=0); importing torchstrategy alone changes nothing."""
from __future__ import annotations

import json
import platform

import pytest

from tests import _multiprocess as mp

FAULTS = r'''
import json, resource, torch
import torchstrategy
from torchstrategy._machinery import host_memory as _host_memory
_host_memory.keep_freed_memory()  # what a CPU fit() or launcher does first
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


IMPORT_THEN_FIT = r'''
import json, os, sys, threading
import torch
native_threads = len(os.listdir("/proc/self/task"))
import torchstrategy as tf
from torchstrategy._machinery import host_memory as _host_memory
after_import = {"applied": _host_memory.is_applied(), "python_threads": threading.active_count(),
                "native_threads_added": len(os.listdir("/proc/self/task")) - native_threads,
                "kernels_imported": "torchstrategy._machinery.cpu_kernels" in sys.modules,
                "cache": os.path.exists(os.environ["TORCHSTRATEGY_CACHE_DIR"])}
model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1)])
model.compile(optimizer="sgd", loss="mse")
model.fit(torch.ones(8, 4), torch.ones(8, 1), epochs=1, verbose=0)
print(json.dumps({"import": after_import, "fit": _host_memory.is_applied()}))
'''


@pytest.mark.slow
@pytest.mark.skipif(platform.system() != "Linux", reason="glibc's mallopt is Linux-only")
def test_import_changes_nothing_and_a_cpu_fit_keeps_freed_memory(tmp_path):
    script = mp.write_script(tmp_path, IMPORT_THEN_FIT)
    results = {}
    for name, extra in (("kept", {}), ("released", {"TORCHSTRATEGY_KEEP_HOST_MEMORY": "0"})):
        env = mp.clean_env(TORCHSTRATEGY_CACHE_DIR=str(tmp_path / f"cache-{name}"), **extra)
        run = mp.run_python([script], env=env, timeout=120)
        assert run.returncode == 0, run.stderr
        results[name] = json.loads(run.stdout.strip().splitlines()[-1])
    # import: no malloc settings, no thread of any kind, no kernels loaded or built
    assert results["kept"]["import"] == {"applied": None, "python_threads": 1, "native_threads_added": 0,
                                         "kernels_imported": False, "cache": False}, results
    assert results["kept"]["fit"] is True and results["released"]["fit"] is False
