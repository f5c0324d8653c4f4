"""TensorBoard(profile_batch=...): Keras's batch numbering and forms, a trace of exactly the profiled
batches under log_dir/train/plugins/profile/, no batch hooks when off, and only rank 0 profiling."""
from __future__ import annotations

import glob
import json
import os
import re

import numpy as np
import pytest

import torchstrategy as tf
from tests import _multiprocess as mp
from torchstrategy import _context
from torchstrategy.keras.callbacks import CallbackList

pytest.importorskip("tensorboard")
TensorBoard = tf.keras.callbacks.TensorBoard


@pytest.fixture(autouse=True)
def _no_session_left():
    yield
    if _context._profiler_session is not None:
        tf.profiler.experimental.stop(save=False)


def _traces(logdir) -> list:
    return sorted(glob.glob(os.path.join(str(logdir), "plugins", "profile", "*", "*.pt.trace.json")))


def _step_marks(path) -> list:
    """The step numbers of the `ProfilerStep#N` events, in order, and checks each holds its batch's ops."""
    with open(path, encoding="utf-8") as handle:
        events = [event for event in json.load(handle)["traceEvents"] if event.get("ph") == "X"]
    steps = sorted((event for event in events if event["name"].startswith("ProfilerStep#")), key=lambda e: e["ts"])
    for step in steps:
        inside = [e for e in events if step["ts"] <= e["ts"] and e["ts"] + e["dur"] <= step["ts"] + step["dur"]]
        number = step["name"].split("#")[1]
        assert any(e["name"] == f"Profiled batch#step_num={number}#" for e in inside)
        assert any(e.get("cat") == "cpu_op" and e["name"].startswith("aten::") for e in inside)
    return [int(step["name"].split("#")[1]) for step in steps]


def _tiny_model():
    model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))])
    model.compile(optimizer="sgd", loss="mse")
    return model


def _data(n=12):
    rng = np.random.default_rng(0)
    return rng.random((n, 3)).astype(np.float32), rng.random((n, 2)).astype(np.float32)


def test_profile_batch_range_is_traced_across_epochs_in_keras_numbering(tmp_path):
    x, y = _data(12)
    callback = TensorBoard(log_dir=tmp_path, profile_batch=(2, 4))
    assert callback._implements_train_batch_hooks()
    # batches count from 1 over the whole fit: with 3 per epoch, 2-3 are in epoch 1 and 4 in epoch 2
    _tiny_model().fit(x, y, batch_size=4, epochs=3, verbose=0, callbacks=[callback])
    (trace,) = _traces(tmp_path / "train")
    assert _step_marks(trace) == [2, 3, 4]
    assert _context._profiler_session is None
    assert not callback._implements_train_batch_hooks()  # the range is behind: no per-step hooks left


def test_profiling_off_keeps_tensorboard_free_of_batch_hooks(tmp_path):
    for off in (0, "0", (0, 0)):
        callback = TensorBoard(log_dir=tmp_path, profile_batch=off)
        assert not callback._implements_train_batch_hooks()
        assert not CallbackList([callback])._should_call_train_batch_hooks
    x, y = _data(8)
    _tiny_model().fit(x, y, batch_size=4, epochs=1, verbose=0, callbacks=[TensorBoard(log_dir=tmp_path)])
    assert os.path.isdir(tmp_path / "train") and _traces(tmp_path / "train") == []


def test_profile_batch_forms_and_a_range_cut_short_by_the_end_of_fit(tmp_path):
    for form, expected in ((3, (3, 3)), ("2,5", (2, 5)), ([2, 5], (2, 5)), ("4", (4, 4))):
        callback = TensorBoard(log_dir=tmp_path, profile_batch=form)
        assert (callback._start_batch, callback._stop_batch) == expected
    x, y = _data(8)
    callback = TensorBoard(log_dir=tmp_path / "short", profile_batch="2,100")
    _tiny_model().fit(x, y, batch_size=4, epochs=2, verbose=0, callbacks=[callback])
    (trace,) = _traces(tmp_path / "short" / "train")
    assert _step_marks(trace) == [2, 3, 4]  # fit ended at batch 4: the profile is saved there
    assert _context._profiler_session is None


@pytest.mark.parametrize("bad", [(4, 2), -1, (0, 3), (-2, 3), "a,b", "", (1, 2, 3), 2.5, ("1", "2"), None])
def test_bad_profile_batch_says_what_is_accepted(bad, tmp_path):
    with pytest.raises(ValueError, match=r"profile_batch must be 0 \(no profiling\), a positive int N.*start <= stop"):
        TensorBoard(log_dir=tmp_path, profile_batch=bad)


def test_a_running_profiler_is_reported_not_fatal(tmp_path):
    x, y = _data(8)
    tf.profiler.experimental.start(tmp_path / "user")
    with pytest.warns(UserWarning, match="could not start the profiler: Another profiler is running"):
        _tiny_model().fit(x, y, batch_size=4, epochs=1, verbose=0,
                          callbacks=[TensorBoard(log_dir=tmp_path / "tb", profile_batch=1)])
    tf.profiler.experimental.stop()  # the user's session was left alone
    assert len(_traces(tmp_path / "user")) == 1 and _traces(tmp_path / "tb" / "train") == []


# Two replicas: TensorBoard profiles during fit, then start/stop outside and inside the scope, and a
# Profile with TORCHSTRATEGY_PROFILE_EVERY_PROCESS=1; each rank reports its pid so the test can tell whose files exist.
TWO_REPLICAS = r'''
import json, os, sys
import numpy as np
import torchstrategy as tf

out = sys.argv[1]
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
rng = np.random.default_rng(0)
x, y = rng.random((32, 3)).astype(np.float32), rng.random((32, 2)).astype(np.float32)
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))])
    model.compile(optimizer="sgd", loss="mse")
model.fit(x, y, batch_size=8, epochs=1, verbose=0,
          callbacks=[tf.keras.callbacks.TensorBoard(log_dir=os.path.join(out, "tb"), profile_batch=(2, 3))])
tf.profiler.experimental.start(os.path.join(out, "outside"))  # no scope entered: the process group's rank
model.predict(x, verbose=0)
tf.profiler.experimental.stop()
with strategy.scope():
    with tf.profiler.experimental.Profile(os.path.join(out, "scoped")):
        model.predict(x, verbose=0)
os.environ["TORCHSTRATEGY_PROFILE_EVERY_PROCESS"] = "1"  # read when the session starts, on each process
with tf.profiler.experimental.Profile(os.path.join(out, "every")):
    model.predict(x, verbose=0)
with open(os.path.join(out, f"rank_{int(not strategy.is_chief)}.json"), "w") as f:
    json.dump({"pid": os.getpid(), "chief": strategy.is_chief}, f)
'''


def _pid_of(path) -> int:
    return int(re.search(r"_(\d+)\.\d+\.pt\.trace\.json$", path).group(1))


@pytest.mark.slow
def test_only_rank_zero_profiles_in_a_two_process_mirrored_fit(tmp_path):
    script = mp.write_script(tmp_path, TWO_REPLICAS)
    result = mp.run_python([script, str(tmp_path)], timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    chief, other = (mp.read_json(tmp_path / f"rank_{rank}.json") for rank in (0, 1))
    assert chief["chief"] and not other["chief"] and chief["pid"] != other["pid"]

    (fit_trace,) = _traces(tmp_path / "tb" / "train")
    assert _pid_of(fit_trace) == chief["pid"]
    assert _step_marks(fit_trace) == [2, 3]
    for name in ("outside", "scoped"):
        assert [_pid_of(path) for path in _traces(tmp_path / name)] == [chief["pid"]]
    assert sorted(_pid_of(path) for path in _traces(tmp_path / "every")) == sorted([chief["pid"], other["pid"]])
