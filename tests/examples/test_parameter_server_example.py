"""examples/parameter_server.py run as a user runs it: the TF tutorial's in-process cluster trains with
the custom loop (accuracy rising), splits the embedding over both ps tasks, then fits."""
from __future__ import annotations

import os
import re

import pytest

from tests import _multiprocess as mp


@pytest.mark.slow
def test_parameter_server_example_trains_and_splits_the_embedding():
    script = os.path.join(mp.ROOT, "examples", "parameter_server.py")
    result = mp.run_python([script, "--epochs", "3"], timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    accuracies = [float(a) for a in re.findall(r"accuracy is ([0-9.]+)\.", result.stdout)]
    assert len(accuracies) == 3 and accuracies[-1] > accuracies[0], result.stdout
    assert "('/job:ps/replica:0/task:0/device:CPU:0', 0, 500), ('/job:ps/replica:0/task:1/device:CPU:0', 500, 1000)" \
        in result.stdout
    assert result.stdout.count("20/20") == 3 and "Traceback" not in result.stderr, result.stderr[-3000:]
