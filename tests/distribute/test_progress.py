"""Progress beacons (distribute/parts/progress.py): a replica waiting in a collective names the replicas that have
not reached it and where every replica is, before the collective times out; a replica that finishes its script
while another waits in a collective it never entered ends the job at once, naming the call to make everywhere.
Beacons in one process on a real in-memory c10d store, then real jobs on 127.0.0.1 (our launcher, torchrun)."""
from __future__ import annotations

import os
import re
import threading
import time

import pytest
import torch.distributed as dist

from tests import _multiprocess as mp
from torchstrategy.distribute.parts import progress as progress_module
from torchstrategy.distribute.parts.progress import NO_PROGRESS, ProgressBeacon, describe, report_after


# ----- beacons in one process, on a real store --------------------------------------------------------------
@pytest.fixture
def beacons():
    made = []

    def make(world_size: int, timeout_s: float = 2.0) -> list:
        store = dist.PrefixStore("test/progress", dist.HashStore())
        made.extend(ProgressBeacon(store, rank, world_size, timeout_s) for rank in range(world_size))
        return made[-world_size:]

    yield make
    for beacon in made:
        beacon.stop()


class Blocked:
    """Stands for a user's callback class: the report names it."""


def _wait_for(capsys, text: str, timeout: float) -> str:
    seen = ""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        seen += capsys.readouterr().err
        if text in seen:
            return seen
        time.sleep(0.1)
    return seen


def test_the_report_comes_at_half_a_short_timeout_and_at_45_s_for_long_ones():
    assert report_after(600) == 45.0  # MirroredStrategy's 10-minute default: a report within a minute
    assert report_after(1800) == 45.0
    assert report_after(20) == 10.0  # before a 20 s timeout fails the job


def test_a_replica_in_a_callback_is_named_by_the_lowest_replica_waiting_for_it(beacons, capsys):
    zero, one, two = beacons(3, timeout_s=2.0)
    one.activity = ("on_train_batch_begin", Blocked())
    zero.enter("train step")
    two.enter("train step")
    seen = _wait_for(capsys, "has not reached", timeout=10)
    time.sleep(1.5)  # replica 2 waits as long: it must stay quiet
    seen += capsys.readouterr().err
    zero.leave()
    two.leave()
    assert "torchstrategy: replica 0 has waited" in seen and "(train step) that replica 1 has not reached" in seen, seen
    assert re.search(r"replica 1 \(pid \d+ on .+\): in callback Blocked\.on_train_batch_begin for \d+ s; "
                     r"0 collectives entered", seen), seen
    assert re.search(r"replica 2 \(pid \d+ on .+\): waiting in collective #1 \(train step\)", seen), seen
    assert "the job will fail when the collective times out (2 s after it began" in seen
    assert seen.count("has not reached") == 1  # one report, from replica 0 only


def test_when_the_chief_is_the_blocked_one_replica_1_reports(beacons, capsys):
    zero, one = beacons(2, timeout_s=2.0)
    one.enter("agreement over replicas")
    seen = _wait_for(capsys, "has not reached", timeout=10)
    one.leave()
    assert "replica 1 has waited" in seen and "that replica 0 has not reached" in seen, seen
    assert re.search(r"replica 0 \(pid \d+ on .+\): in the script, outside fit/evaluate/predict", seen), seen


def test_replicas_all_inside_the_same_collective_are_not_reported(beacons, capsys):
    zero, one = beacons(2, timeout_s=2.0)
    zero.enter("barrier")
    one.enter("barrier")
    time.sleep(2.5)
    zero.leave()
    one.leave()
    assert "has not reached" not in capsys.readouterr().err


class _Epochs:
    epoch, step = 1, 7


def test_describe_says_where_a_replica_is():
    now = time.time()
    base = {"pid": 42, "host": "h", "count": 9, "finished": False, "waiting": None, "calls": ["model.fit"],
            "epoch": 1, "step": 7, "activity": None, "since": now - 12, "published": now}
    assert describe(3, None, now).startswith("replica 3: has not published its progress yet")
    assert describe(0, dict(base, waiting=[10, "train step", now - 30]), now) == (
        "replica 0 (pid 42 on h): epoch 2, 7 batches done: waiting in collective #10 (train step, in model.fit) "
        "for 30 s; 9 collectives entered")
    assert describe(1, dict(base, activity="callback Blocked.on_epoch_end"), now) == (
        "replica 1 (pid 42 on h): epoch 2, 7 batches done: in callback Blocked.on_epoch_end (in model.fit) for 12 s; "
        "9 collectives entered")
    assert describe(1, dict(base, finished=True, calls=[], epoch=None), now) == (
        "replica 1 (pid 42 on h): finished its script; 9 collectives entered")
    silent = describe(2, dict(base, published=now - 60), now)
    assert silent.endswith("(no news for 60 s: the process may be stuck in native code)")


def test_a_fit_progress_and_a_public_call_are_published_and_let_go(beacons):
    (beacon,) = beacons(1)
    with beacon.call("model.fit"):
        beacon.follow(_Epochs())
        with beacon.call("model.save"):
            beacon.enter("gather of a sharded weight")
            beacon._publish(force=True)
            position = beacon._read()[0]
            beacon.leave()
    assert position["calls"] == ["model.fit", "model.save"] and (position["epoch"], position["step"]) == (1, 7)
    assert position["waiting"][:2] == [1, "gather of a sharded weight"] and position["count"] == 1
    beacon._publish(force=True)
    after = beacon._read()[0]
    assert after["calls"] == [] and after["epoch"] is None and after["waiting"] is None


def test_the_callback_list_tells_the_beacon_which_callback_runs(beacons):
    import torchstrategy as tf

    (beacon,) = beacons(1)
    seen = []

    class Looks(tf.keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            seen.append(beacon.activity)

    looks = Looks()
    callbacks = tf.keras.callbacks.CallbackList([looks])
    callbacks.report_to(beacon)
    beacon.activity = ("outer", "held")
    callbacks.on_epoch_begin(0)
    assert seen == [("on_epoch_begin", looks)] and beacon.activity == ("outer", "held")
    callbacks.report_to(NO_PROGRESS)  # an inactive beacon is not told
    callbacks.on_epoch_begin(1)
    assert seen[-1] == ("outer", "held")


def test_a_beacon_copied_elsewhere_does_not_speak_for_its_replica(beacons):
    import copy
    import pickle

    (beacon,) = beacons(1)
    assert copy.deepcopy(beacon) is beacon
    assert pickle.loads(pickle.dumps(beacon)) is NO_PROGRESS
    NO_PROGRESS.activity = ("hook", "callback")  # writes to the inactive beacon are dropped
    assert NO_PROGRESS.activity is None


# ----- real jobs ----------------------------------------------------------------------------------------------
# argv: replicas (0: under torchrun, MultiWorkerMirroredStrategy), collective timeout ("default" or seconds),
# the hook where replica 1 blocks for good (a callback that never returns)
BLOCKED = r'''
import sys, time
import numpy as np
import torchstrategy as tf
replicas, timeout, hook = int(sys.argv[1]), sys.argv[2], sys.argv[3]
options = None if timeout == "default" else tf.distribute.experimental.CommunicationOptions(
    timeout_seconds=float(timeout))
if replicas:  # `python train.py`: the launcher re-runs this script for replicas 1..n-1
    strategy = tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(replicas)],
                                              cross_device_ops=tf.distribute.experimental.CollectiveAllReduce(options))
else:
    strategy = tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)

class Blocked(tf.keras.callbacks.Callback):
    pass

def block(self, batch, logs=None):
    if batch == 2 and strategy.process_rank == 1:
        print("replica 1 blocks", flush=True)
        time.sleep(3600)

setattr(Blocked, hook, block)
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(3,))])
    model.compile(optimizer="sgd", loss="mse")
x, y = np.ones((2400, 3), np.float32), np.ones((2400, 1), np.float32)
model.fit(x, y, batch_size=12, epochs=1, verbose=0, callbacks=[Blocked()])  # 12: divisible by 2 and 3 replicas
print("finished", flush=True)
'''


def _check_hang_report(stderr: str, replicas: int, waiting_in: str, hook: str, batches: int) -> None:
    assert "torchstrategy: replica 0 has waited" in stderr, stderr[-5000:]
    report = stderr[stderr.index("torchstrategy: replica 0 has waited"):]
    assert f"({waiting_in}, in model.fit) that replica 1 has not reached. Where every replica is:" in report, report
    assert re.search(rf"replica 1 \(pid \d+ on .+\): epoch 1, {batches} batches done: in callback Blocked\.{hook} "
                     rf"\(in model\.fit\) for \d+ s", report), report
    for rank in [0] + list(range(2, replicas)):
        assert re.search(rf"replica {rank} \(pid \d+ on .+\): epoch 1, \d+ batches done: waiting in collective #\d+ "
                         rf"\({waiting_in}, in model\.fit\)", report), report
    assert "Unless replica 1 reaches it, the job will fail when the collective times out" in report
    assert stderr.count("has not reached") == 1  # the lowest replica waiting reports, once


def _waited(stderr: str) -> int:
    """How long replica 0 had waited when it reported, in seconds."""
    return int(re.search(r"replica 0 has waited (\d+) s", stderr).group(1))


@pytest.mark.slow
@pytest.mark.parametrize("replicas", [2, 3])
def test_a_replica_blocked_in_a_callback_is_named_with_every_position_before_the_timeout(tmp_path, replicas):
    script = mp.write_script(tmp_path, BLOCKED, name="blocked.py")
    start = time.monotonic()
    # 20 s: enough for 3 replicas to start and join on a busy machine (the rendezvous waits as long)
    result = mp.run_python([script, str(replicas), "20", "on_train_batch_begin"], timeout=150)
    elapsed = time.monotonic() - start
    assert result.returncode != 0 and "finished" not in result.stdout, result.stderr[-3000:]
    _check_hang_report(result.stderr, replicas, "train step", "on_train_batch_begin", batches=2)
    assert 10 <= _waited(result.stderr) < 20  # from half the timeout, before it fails
    assert "the collective times out (20 s after it began" in result.stderr
    # then the job fails at the timeout, naming the replica again (from every replica that waited)
    failure = "MirroredStrategy: replica 1 stopped answering at epoch 1, batch 2"
    assert failure in result.stderr, result.stderr[-5000:]
    assert result.stderr.index("has not reached") < result.stderr.index(failure)
    assert elapsed < 90


@pytest.mark.slow
def test_with_the_default_ten_minute_timeout_the_report_comes_within_90_s(tmp_path):
    script = mp.write_script(tmp_path, BLOCKED, name="blocked.py")
    process = mp.start_python([script, "2", "default", "on_train_batch_begin"])
    lines: list = []
    blocked_at: list = []
    reported = threading.Event()

    def read() -> None:
        for line in process.stderr:
            lines.append(line)
            if "that replica 1 has not reached" in line:
                reported.set()

    def read_stdout() -> None:
        for line in process.stdout:
            if "replica 1 blocks" in line:
                blocked_at.append(time.monotonic())

    readers = [threading.Thread(target=read, daemon=True), threading.Thread(target=read_stdout, daemon=True)]
    for reader in readers:
        reader.start()
    try:
        assert mp.wait_until(lambda: blocked_at, timeout=120), "".join(lines)[-3000:]
        assert reported.wait(90), "".join(lines)[-3000:]
        waited = time.monotonic() - blocked_at[0]
        time.sleep(1)  # the rest of the report
    finally:
        mp.kill_process_group(process)
    assert 40 < waited < 90, waited  # REPORT_AFTER_S (45 s) after rank 0 began to wait
    stderr = "".join(lines)
    _check_hang_report(stderr, 2, "train step", "on_train_batch_begin", batches=2)
    assert "the collective times out (600 s after it began, in about 5" in stderr


@pytest.mark.slow
def test_torchrun_multi_worker_with_a_20_s_timeout_names_worker_1_before_it_fails(tmp_path):
    script = mp.write_script(tmp_path, BLOCKED, name="blocked.py")
    start = time.monotonic()
    result = mp.run_torchrun(["--nproc_per_node=2", "--rdzv-backend=c10d", f"--rdzv-endpoint={mp.LOOPBACK}:"
                              f"{mp.free_port()}", "--local-addr", mp.LOOPBACK],
                             [script, "0", "20", "on_train_batch_end"], timeout=150)
    assert result.returncode != 0 and "finished" not in result.stdout, result.stderr[-3000:]
    # replica 1 blocks after batch 2: replica 0 waits in the agreement on stop_training that follows it
    _check_hang_report(result.stderr, 2, "agreement over replicas", "on_train_batch_end", batches=3)
    assert 10 <= _waited(result.stderr) < 20  # from half the timeout, before it fails
    failure = result.stderr.index("Timed out waiting 20000ms")
    assert result.stderr.index("has not reached") < failure
    assert "MultiWorkerMirroredStrategy: replica 1 stopped answering at epoch 1, batch 2" in result.stderr
    assert time.monotonic() - start < 120


# argv: strategy ("fsdp" or "mirrored"), the call the chief alone makes, output folder
CHIEF_ONLY = r'''
import os, sys, time
import numpy as np
import torchstrategy as tf
kind, call, out = sys.argv[1], sys.argv[2], sys.argv[3]
devices = ["/cpu:0", "/cpu:1"]
if kind == "fsdp":
    strategy = tf.distribute.experimental.FSDPStrategy(devices)
else:
    strategy = tf.distribute.MirroredStrategy(devices)
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.layers.Dense(4, input_shape=(3,)), tf.keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
x, y = np.ones((64, 3), np.float32), np.ones((64, 1), np.float32)
model.fit(x, y, batch_size=8, epochs=1, verbose=0)
if strategy.is_chief:  # TF's MultiWorkerMirrored idiom; a collective under a sharding strategy
    if call == "save":
        model.save(os.path.join(out, "model.keras"))
    else:
        model.predict(x, verbose=0)
print(f"replica {strategy.process_rank} at the end of its script at {time.time()}", flush=True)
'''


@pytest.mark.slow
@pytest.mark.parametrize("call", ["save", "predict"])
def test_a_collective_entered_by_the_chief_only_ends_the_job_within_seconds(tmp_path, call):
    script = mp.write_script(tmp_path, CHIEF_ONLY, name="chief_only.py")
    result = mp.run_python([script, "fsdp", call, str(tmp_path)], timeout=150)
    ended = time.time()
    assert result.returncode != 0, result.stdout + result.stderr[-3000:]
    finished_at = float(re.search(r"replica 1 at the end of its script at ([\d.]+)", result.stdout).group(1))
    assert ended - finished_at < 20  # not the 10-minute collective timeout
    assert "replica 0 at the end" not in result.stdout
    name = f"model.{call}"
    assert (f"torchstrategy: replica 1 finished its script while replica 0 waits in {name}, which runs collectives "
            f"that every replica must join") in result.stderr, result.stderr[-3000:]
    assert f"{name} must be called on every replica, not only on the chief" in result.stderr
    assert re.search(r"replica 1 \(pid \d+ on .+\): finished its script", result.stderr)
    assert not os.path.exists(tmp_path / "model.keras")


@pytest.mark.slow
def test_a_chief_only_save_without_collectives_still_works(tmp_path):
    # MirroredStrategy's weights are whole on every replica: the chief saves alone, nobody waits
    script = mp.write_script(tmp_path, CHIEF_ONLY, name="chief_only.py")
    result = mp.run_python([script, "mirrored", "save", str(tmp_path)], timeout=150)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "replica 0 at the end" in result.stdout and "replica 1 at the end" in result.stdout
    assert os.path.exists(tmp_path / "model.keras") and "torchstrategy: replica" not in result.stderr


def test_the_module_constants_keep_the_report_about_a_minute_in():
    assert 30 <= progress_module.REPORT_AFTER_S <= 60 and progress_module.TICK_S <= 1
