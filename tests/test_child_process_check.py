"""The fast loop's guard (tests/conftest.py, tests/_child_processes.py): in a `pytest -m "not slow"` run a test
without the slow marker that starts a process fails; marked ones, in-process ones and other runs are untouched."""
from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

INNER = '''
import multiprocessing, subprocess, sys
import pytest

def test_starts_a_subprocess():
    subprocess.run([sys.executable, "-c", "pass"], check=True)

def _nothing():
    pass

def test_spawns_a_multiprocessing_child():
    child = multiprocessing.get_context("spawn").Process(target=_nothing)
    child.start()
    child.join()

@pytest.mark.slow
def test_marked_slow_may_start_one():
    subprocess.run([sys.executable, "-c", "pass"], check=True)

def test_in_process_only():
    assert sum(range(4)) == 6
'''


@pytest.mark.slow  # its inner tests start processes (the outer check would flag it otherwise)
def test_a_not_slow_run_fails_unmarked_tests_that_start_processes(pytester):
    pytester.makepyfile(test_inner=INNER)
    fast = pytester.runpytest_inprocess("-m", "not slow", "-p", "tests.conftest", "-p", "no:cacheprovider")
    fast.assert_outcomes(passed=3, errors=2, deselected=1)  # the two failures are reported at teardown
    fast.stdout.fnmatch_lines(["*test_starts_a_subprocess started a child process (subprocess.Popen*",
                               "*but is not marked slow*"])
    assert "test_spawns_a_multiprocessing_child started a child process" in fast.stdout.str()
    everything = pytester.runpytest_inprocess("-p", "tests.conftest", "-p", "no:cacheprovider")
    everything.assert_outcomes(passed=4)
