"""Test-wide settings: a fixed seed per test so failures reproduce, and Keras default names reset;
`tpu`-marked tests skipped without torch-xla, and only they run where torch-xla is (the .venv-tpu)."""
from __future__ import annotations

import os
import sys

import h5py  # noqa: F401  (its first import runs `ldconfig -p` through cuda.pathfinder: before the child-process check)
import pytest
import torch

from torchstrategy import random as ts_random
from torchstrategy.cluster import tpu as ts_tpu
from torchstrategy.keras import backend

# `from tests import _multiprocess` works from any test file (import-mode=importlib adds no paths)
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)


@pytest.fixture(autouse=True)
def _seed_and_fresh_names() -> None:
    ts_random.set_seed(1234)
    backend.clear_session(free_memory=False)  # no gc.collect() per test
    yield


def _torch_xla_importable() -> bool:
    if not ts_tpu.torch_xla_installed():
        return False
    try:
        import torch_xla  # noqa: F401
    except ImportError:
        return False
    return True


_HAS_TORCH_XLA = _torch_xla_importable()


def pytest_configure(config: pytest.Config) -> None:
    # Autograd sizes its per-device queues at the first backward of the process: XLA's runtime must be up
    # before any test runs a backward, or later XLA backwards fail an internal assert.
    # (global_runtime_device_count starts it and still lets a TPUStrategy switch to SPMD; torch_xla.devices() not.)
    if _HAS_TORCH_XLA and ts_tpu.xla_devices_configured():
        import torch_xla.runtime as xr

        xr.global_runtime_device_count()


def pytest_report_header(config: pytest.Config) -> str:
    if _HAS_TORCH_XLA:
        return "torch-xla found: running only tests marked 'tpu' (the main suite needs the main .venv's torch)"
    return "torch-xla not installed: tests marked 'tpu' are skipped (run scripts/test_tpu.sh for them)"


def pytest_collection_modifyitems(config: pytest.Config, items: list) -> None:
    if _HAS_TORCH_XLA:
        # torch-xla pins an older torch/torchvision than the main suite is written for: run the tpu tests only.
        others = [item for item in items if item.get_closest_marker("tpu") is None]
        if others:
            config.hook.pytest_deselected(items=others)
            items[:] = [item for item in items if item.get_closest_marker("tpu") is not None]
        return
    skip = pytest.mark.skip(reason="needs torch-xla: pip install 'torchstrategy[tpu]' or run scripts/test_tpu.sh")
    for item in items:
        if item.get_closest_marker("tpu") is not None:
            item.add_marker(skip)


# ---- `pytest -m "not slow"`: a test that starts a process must be marked slow -----------------------------------
# In a run that deselects `slow` (or with TORCHSTRATEGY_CHECK_CHILDREN=1) every test without the marker fails if
# it started a child process (tests/_child_processes.py: an audit hook on subprocess/fork/exec, this process's
# /proc children, and the CPU time of reaped children). TORCHSTRATEGY_CHILD_REPORT=PATH lists them instead.
from tests import _child_processes  # noqa: E402


def _checking_children(config: pytest.Config) -> bool:
    expression = (config.getoption("markexpr", default="") or "").replace(" ", "")
    return "notslow" in expression or os.environ.get("TORCHSTRATEGY_CHECK_CHILDREN") == "1"


def pytest_sessionstart(session: pytest.Session) -> None:
    if _checking_children(session.config) or os.environ.get("TORCHSTRATEGY_CHILD_REPORT"):
        try:  # the C kernels compile once per machine, with a compiler process: not the test's doing
            from torchstrategy._machinery import cpu_kernels as _cpu_kernels

            _cpu_kernels.library()
        except Exception:  # noqa: BLE001 - kernels are optional; nothing to warm up then
            pass
        _child_processes.install()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem):
    report_path = os.environ.get("TORCHSTRATEGY_CHILD_REPORT")
    if not (_checking_children(item.config) or report_path) or item.get_closest_marker("slow") is not None:
        yield
        return
    item.stash[_CHILD_SNAPSHOT] = _child_processes.Snapshot()
    yield
    started = item.stash[_CHILD_SNAPSHOT].started()
    if started and report_path:
        with open(report_path, "a", encoding="utf-8") as handle:
            handle.write(f"{item.nodeid}\t{started}\n")


_CHILD_SNAPSHOT = pytest.StashKey()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    report = outcome.get_result()
    snapshot = item.stash.get(_CHILD_SNAPSHOT, None)
    if snapshot is None or call.when != "teardown" or not _checking_children(item.config):
        return
    started = snapshot.started()
    if started and report.passed:
        report.outcome = "failed"
        report.longrepr = (f"{item.nodeid} started a child process ({started}) but is not marked slow: "
                           "add @pytest.mark.slow (pytest -m 'not slow' must not start processes)")


# ---- the fast loop covers every module: which torchstrategy modules did no test of this run import? -------------
# Printed at the end of a run over the whole suite that deselects `slow` (all tests run in this one process, so
# sys.modules holds every module they imported); TORCHSTRATEGY_MODULE_REPORT=PATH also writes the list to PATH.

def _package_modules() -> list:
    import pkgutil

    import torchstrategy

    return sorted(info.name for info in pkgutil.walk_packages(torchstrategy.__path__, "torchstrategy."))


def pytest_terminal_summary(terminalreporter, exitstatus, config: pytest.Config) -> None:
    whole_suite = not config.args or [os.path.abspath(arg) for arg in config.args] == [os.path.join(_ROOT, "tests")]
    report_path = os.environ.get("TORCHSTRATEGY_MODULE_REPORT")
    if not report_path and not (whole_suite and _checking_children(config)):
        return
    imported = set(sys.modules)  # before walking the package, which imports its subpackages
    missing = [name for name in _package_modules() if name not in imported]
    if report_path:
        with open(report_path, "w", encoding="utf-8") as handle:
            handle.write("".join(name + "\n" for name in missing))
    terminalreporter.write_sep("-", f"torchstrategy modules no test of this run imported: {len(missing)}")
    for name in missing:
        terminalreporter.write_line(name)
