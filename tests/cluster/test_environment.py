"""cluster/environment.py's switches read from the environment (here: tf.summary and tf.profiler on every
process, the parameter-server start-up timeout)."""
from __future__ import annotations

import pytest

from torchstrategy.cluster import environment


@pytest.mark.parametrize("value, expected", [(None, False), ("1", True), ("yes", True), ("0", False), ("", False)])
def test_summaries_on_every_process_reads_its_variable(monkeypatch, value, expected):
    if value is None:
        monkeypatch.delenv(environment.SUMMARIES_EVERY_PROCESS_VARIABLE, raising=False)
    else:
        monkeypatch.setenv(environment.SUMMARIES_EVERY_PROCESS_VARIABLE, value)
    assert environment.summaries_on_every_process() is expected


@pytest.mark.parametrize("value, expected", [(None, False), ("1", True), ("on", True), ("0", False), ("", False)])
def test_profile_on_every_process_reads_its_variable(monkeypatch, value, expected):
    if value is None:
        monkeypatch.delenv(environment.PROFILE_EVERY_PROCESS_VARIABLE, raising=False)
    else:
        monkeypatch.setenv(environment.PROFILE_EVERY_PROCESS_VARIABLE, value)
    assert environment.profile_on_every_process() is expected


@pytest.mark.parametrize("value, expected", [(None, 60.0), ("", 60.0), ("4", 4.0), (" 2.5 ", 2.5)])
def test_the_ps_start_up_timeout_reads_its_variable(monkeypatch, value, expected):
    if value is None:
        monkeypatch.delenv(environment.PS_STARTUP_TIMEOUT_VARIABLE, raising=False)
    else:
        monkeypatch.setenv(environment.PS_STARTUP_TIMEOUT_VARIABLE, value)
    assert environment.ps_startup_timeout() == expected


@pytest.mark.parametrize("value", ["0", "-3", "soon", "nan"])
def test_a_bad_ps_start_up_timeout_is_refused_naming_the_variable(monkeypatch, value):
    monkeypatch.setenv(environment.PS_STARTUP_TIMEOUT_VARIABLE, value)
    with pytest.raises(ValueError, match="TORCHSTRATEGY_PS_STARTUP_TIMEOUT=.*positive number of seconds"):
        environment.ps_startup_timeout()
