"""tf.profiler.experimental on torch.profiler: start/stop and Profile write Chrome-trace JSON under
logdir/plugins/profile/<timestamp>/ holding the traced ops, Trace names and step markers; TF's errors."""
from __future__ import annotations

import glob
import json
import os

import pytest
import torch

import torchstrategy as tf
from torchstrategy import _context
from torchstrategy.profiler import AlreadyExistsError, UnavailableError


@pytest.fixture(autouse=True)
def _no_session_left():
    yield
    if _context._profiler_session is not None:  # a failed test must not leave its session to the next
        tf.profiler.experimental.stop(save=False)


def _traces(logdir) -> list:
    return sorted(glob.glob(os.path.join(str(logdir), "plugins", "profile", "*", "*.pt.trace.json")))


def _events(path) -> list:
    with open(path, encoding="utf-8") as handle:
        return [event for event in json.load(handle)["traceEvents"] if event.get("ph") == "X"]


def _inside(inner: dict, outer: dict) -> bool:
    return outer["ts"] <= inner["ts"] and inner["ts"] + inner["dur"] <= outer["ts"] + outer["dur"]


def test_start_stop_writes_a_chrome_trace_with_the_ops_and_the_step_marks(tmp_path):
    weights = torch.randn(5, 5)
    tf.profiler.experimental.start(tmp_path)
    assert torch.autograd._profiler_enabled()
    for step in range(3):
        with tf.profiler.experimental.Trace("train", step_num=step, _r=1) as trace:
            torch.mm(torch.ones(5, 5), weights)
            trace.set_metadata(loss=0.25)
    tf.profiler.experimental.stop()
    assert not torch.autograd._profiler_enabled()

    traces = _traces(tmp_path)
    assert len(traces) == 1
    # TF's layout: <logdir>/plugins/profile/<YYYY_MM_DD_HH_MM_SS>/<host>_<pid>.<ms>.pt.trace.json
    assert len(os.path.basename(os.path.dirname(traces[0])).split("_")) == 6
    assert os.path.basename(traces[0]).split(".")[0].endswith(f"_{os.getpid()}")
    events = _events(traces[0])
    by_name = {event["name"]: event for event in events}
    for step in range(3):
        marker, named = by_name[f"ProfilerStep#{step}"], by_name[f"train#step_num={step},_r=1#"]
        assert _inside(named, marker)
    # each step's matrix product is recorded inside that step's marker; set_metadata left an event in it
    products = [event for event in events if event["name"] == "aten::mm"]
    assert len(products) == 3
    for step, product in enumerate(sorted(products, key=lambda event: event["ts"])):
        assert _inside(product, by_name[f"ProfilerStep#{step}"])
    assert sum(event["name"] == "train#loss=0.25#" for event in events) == 3


def test_profile_context_and_options_map_to_torch_profiler(tmp_path):
    # TF 2.21's defaults
    assert tuple(tf.profiler.experimental.ProfilerOptions()) == (2, 0, 1, None)

    def python_calls():
        return sum(1 for v in range(10) if str(v))

    with tf.profiler.experimental.Profile(tmp_path / "plain"):
        python_calls()
        torch.ones(3).sum()
    options = tf.profiler.experimental.ProfilerOptions(host_tracer_level=3, python_tracer_level=1)
    with tf.profiler.experimental.Profile(tmp_path / "verbose", options=options):
        python_calls()
        torch.ones(3).sum()

    (plain,), (verbose,) = _traces(tmp_path / "plain"), _traces(tmp_path / "verbose")
    plain_events, verbose_events = _events(plain), _events(verbose)
    assert any(event["name"] == "aten::sum" for event in plain_events)
    # python_tracer_level=1 is torch's with_stack (Python function events); host level 3 records shapes
    assert not any(event.get("cat") == "python_function" for event in plain_events)
    assert any(event.get("cat") == "python_function" and "python_calls" in event["name"]
               for event in verbose_events)
    verbose_sum = next(event for event in verbose_events if event["name"] == "aten::sum")
    plain_sum = next(event for event in plain_events if event["name"] == "aten::sum")
    assert verbose_sum["args"]["Input Dims"] == [[3], []] and "Input Dims" not in plain_sum["args"]


def test_experimental_is_a_module_and_trace_is_inert_without_a_profiler(tmp_path, monkeypatch):
    from torchstrategy.profiler.experimental import Profile, start, stop

    assert start is tf.profiler.experimental.start and Profile is tf.profiler.experimental.Profile
    with tf.profiler.experimental.Trace("idle", step_num=1) as trace:
        trace.set_metadata(ignored=True)
    assert not trace._open and not torch.autograd._profiler_enabled()
    monkeypatch.setenv("TORCHSTRATEGY_PROFILE_EVERY_PROCESS", "1")
    start(tmp_path)
    stop(save=False)  # discards: nothing written
    assert _traces(tmp_path) == [] and not os.path.exists(tmp_path / "plugins")


def test_errors_say_what_is_wrong(tmp_path):
    with pytest.raises(UnavailableError, match="No profiler is running"):
        tf.profiler.experimental.stop()

    tf.profiler.experimental.start(tmp_path / "first")
    with pytest.raises(AlreadyExistsError, match="Another profiler is running"):
        tf.profiler.experimental.start(tmp_path / "second")
    with pytest.raises(AlreadyExistsError):
        with tf.profiler.experimental.Profile(tmp_path / "third"):
            pass
    tf.profiler.experimental.stop()  # the first session survived the refused starts
    assert len(_traces(tmp_path / "first")) == 1
    assert not (tmp_path / "second").exists()

    a_file = tmp_path / "a_file"
    a_file.write_text("not a directory")
    for logdir in (a_file, a_file / "below"):
        with pytest.raises(NotADirectoryError, match="is a file, not a directory"):
            tf.profiler.experimental.start(logdir)
    with pytest.raises(TypeError, match="directory path"):
        tf.profiler.experimental.start(None)
    with pytest.raises(TypeError, match="ProfilerOptions"):
        tf.profiler.experimental.start(tmp_path, options={"host_tracer_level": 2})
    with pytest.raises(ValueError, match=r"python_tracer_level must be one of \[0, 1\]"):
        tf.profiler.experimental.start(tmp_path, tf.profiler.experimental.ProfilerOptions(python_tracer_level=2))
    with pytest.raises(ValueError, match="delay_ms"):
        tf.profiler.experimental.start(tmp_path, tf.profiler.experimental.ProfilerOptions(delay_ms=-1))
    assert _context._profiler_session is None  # refused starts leave no session behind

    tf.profiler.experimental.start("")  # Keras's warm-up: allowed, when not saved
    tf.profiler.experimental.stop(save=False)
    tf.profiler.experimental.start("")
    with pytest.raises(ValueError, match="nowhere to save"):
        tf.profiler.experimental.stop()

    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]):
        with pytest.raises(AlreadyExistsError, match="outside tf.profiler"):
            tf.profiler.experimental.start(tmp_path)
    assert _context._profiler_session is None


def test_the_former_all_replicas_keyword_names_the_environment_switch(tmp_path):
    import inspect

    # TF 2.21: start(logdir, options=None), Profile(logdir, options=None)
    assert list(inspect.signature(tf.profiler.experimental.start).parameters) == ["logdir", "options"]
    assert list(inspect.signature(tf.profiler.experimental.Profile).parameters) == ["logdir", "options"]
    with pytest.raises(TypeError, match="TORCHSTRATEGY_PROFILE_EVERY_PROCESS=1"):
        tf.profiler.experimental.start(tmp_path, all_replicas=True)
    with pytest.raises(TypeError, match="TORCHSTRATEGY_PROFILE_EVERY_PROCESS=1"):
        tf.profiler.experimental.Profile(tmp_path, all_replicas=True)
    with pytest.raises(UnavailableError):  # nothing was started
        tf.profiler.experimental.stop()
