"""keras/training_state.py: the exit hooks a fit() call runs however it ends, and a TrainingState that travels
(pickled with a closure for a parameter-server worker) without this process's locks and handlers."""
from __future__ import annotations

import pickle
import threading

import cloudpickle
import pytest

from torchstrategy.keras.training_state import TrainingState


def test_exit_hooks_run_once_last_registered_first():
    state, ran = TrainingState(), []
    state.on_exit(lambda: ran.append("first"))
    state.on_exit(lambda: ran.append("second"))
    state.close()
    state.close()
    assert ran == ["second", "first"]


def test_a_pickled_state_carries_no_exit_hooks():
    state, lock = TrainingState(), threading.Lock()
    state.on_exit(lock.release)
    with pytest.raises(TypeError):
        pickle.dumps(lock)  # what a hook may hold cannot travel
    copy = cloudpickle.loads(cloudpickle.dumps(state))
    assert copy._exit_hooks == [] and len(state._exit_hooks) == 1
    assert copy.progress.global_step == state.progress.global_step
