"""cluster/environment.py's switches read from the environment (here: tf.summary on every process)."""
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
