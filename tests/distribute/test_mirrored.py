"""MirroredStrategy with real processes on 127.0.0.1 (gloo): uneven global batches, a model outside the scope,
bad devices, and a replica that raises, hangs, is killed or exits: clear errors and a job that ends together."""
from __future__ import annotations

import os
import time

import pytest

from tests import _multiprocess as mp

# What every strategy does (fit, evaluate, predict and a strategy.run loop equal to one process, every row trained
# once per epoch, one intra-op thread per replica process) is checked in tests/distribute/conformance; this file
# holds what is MirroredStrategy's own: its launcher, its refusals and how it fails.

UNEVEN = r'''
import sys
import numpy as np
import torchstrategy as tf
strategy = tf.distribute.MirroredStrategy(["cpu:0", "cpu:1"])
x, y = np.zeros((20, 3), np.float32), np.zeros((20, 1), np.float32)
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(3,))])
    model.compile(optimizer="sgd", loss="mse")
model.fit(tf.data.Dataset.from_tensor_slices((x, y)).batch(int(sys.argv[1])), epochs=1, verbose=0)
if strategy.extended.should_checkpoint:
    print("trained", flush=True)
'''


@pytest.mark.slow
def test_global_batch_not_divisible_by_replicas_is_refused_with_valid_sizes(tmp_path):
    script = mp.write_script(tmp_path, UNEVEN)
    start = time.monotonic()
    result = mp.run_python([script, "7"], timeout=120)
    assert result.returncode != 0 and time.monotonic() - start < 60
    assert "global batch size 7 is not divisible by the 2 replicas" in result.stderr
    assert "6 or 8" in result.stderr
    assert "trained" not in result.stdout
    ok = mp.run_python([script, "8"], timeout=120)  # 20 rows: batches 8, 8 and a remainder of 4
    assert ok.returncode == 0 and ok.stdout.count("trained") == 1, ok.stderr


FAILING = r'''
import os, sys, time
import numpy as np
import torchstrategy as tf
strategy = tf.distribute.MirroredStrategy(["cpu:0", "cpu:1"])
rank = strategy.run(lambda: tf.distribute.get_replica_context().replica_id_in_sync_group)
with open(os.path.join(sys.argv[1], f"pid_{rank}"), "w") as f:
    f.write(str(os.getpid()))
x, y = np.zeros((4096, 3), np.float32), np.zeros((4096, 1), np.float32)
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(3,))])
    model.compile(optimizer="sgd", loss="mse")

class Boom(tf.keras.callbacks.Callback):
    def on_train_batch_end(self, batch, logs=None):
        if rank == 1 and batch == 5:
            with open(os.path.join(sys.argv[1], "raised_at"), "w") as f:
                f.write(str(time.time()))
            raise RuntimeError("replica 1 failed on purpose at step 5")

model.fit(x, y, batch_size=8, epochs=50, verbose=0, callbacks=[Boom()])
'''


@pytest.mark.slow
def test_a_replica_that_raises_ends_the_whole_job_quickly_with_its_error(tmp_path):
    script = mp.write_script(tmp_path, FAILING)
    result = mp.run_python([script, str(tmp_path)], timeout=120)
    ended = time.time()
    assert result.returncode != 0
    assert "replica 1 failed on purpose at step 5" in result.stderr
    raised_at = float((tmp_path / "raised_at").read_text())
    assert ended - raised_at < 30
    time.sleep(1)
    for rank in (0, 1):
        pid = int((tmp_path / f"pid_{rank}").read_text())
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_model_created_outside_the_scope_is_a_clear_error():
    import torchstrategy as tf

    strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
    with strategy.scope():
        with pytest.raises(ValueError, match="created outside strategy.scope"):
            model.compile(optimizer="sgd", loss="mse")


def test_device_errors():
    import torch

    import torchstrategy as tf

    with pytest.raises(ValueError, match="Unknown device string"):
        tf.distribute.MirroredStrategy(["/tpu0"])
    if torch.cuda.is_available():
        with pytest.raises(ValueError, match="all be GPUs or all CPUs"):
            tf.distribute.MirroredStrategy(["/cpu:0", "cuda:0"])
    else:
        with pytest.raises(ValueError, match="0 usable CUDA GPU"):
            tf.distribute.MirroredStrategy(["/gpu:0", "/gpu:1"])


OUTSIDE = r'''
import numpy as np
import torchstrategy as tf
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(3,))])  # outside strategy.scope()
model.compile(optimizer="sgd", loss="mse")
x, y = np.ones((8, 3), np.float32), np.ones((8, 1), np.float32)
ds = strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices((x, y)).batch(4))
model.fit(ds, epochs=1, verbose=0)
print("trained", flush=True)
'''


@pytest.mark.slow
def test_model_outside_the_scope_fed_a_distributed_dataset_is_refused_on_two_replicas(tmp_path):
    script = mp.write_script(tmp_path, OUTSIDE, name="outside.py")
    result = mp.run_python([script], timeout=120)
    assert result.returncode != 0 and "trained" not in result.stdout
    assert "distributed by MirroredStrategy (2 replicas)" in result.stderr
    assert "inside `with strategy.scope():`" in result.stderr


def test_duplicate_and_unsupported_devices_are_refused_with_what_to_pass():
    import torchstrategy as tf

    # TF 2.21 raises "No duplicates allowed in `devices` argument" (an AssertionError) for these
    with pytest.raises(ValueError, match=r"No duplicates allowed in `devices` argument.*\['/cpu:0', '/cpu:1'\]"):
        tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:0"])
    # TF accepts a TPU it does not have and fails later; here the error says what exists
    with pytest.raises(ValueError, match=r"asked for \['/tpu:0'\].*not on XLA devices. This machine has: CPU"):
        tf.distribute.MirroredStrategy(["/tpu:0"])




@pytest.mark.slow
@pytest.mark.parametrize("launcher", ["python", "torchrun"])
def test_a_hung_replica_is_named_with_the_batch_where_it_stopped_answering(tmp_path, launcher):
    script = mp.write_script(tmp_path, FAULT, name="fault.py")
    start = time.monotonic()
    if launcher == "python":
        result = mp.run_python([script, "hang"], timeout=100)
    else:  # torchrun's own summary names whichever rank failed first; our line names the one that hung
        result = mp.run_torchrun(["--nproc_per_node=2", "--rdzv-backend=c10d",
                                  f"--rdzv-endpoint={mp.LOOPBACK}:{mp.free_port()}", "--local-addr", mp.LOOPBACK],
                                 [script, "hang"], timeout=100)
    elapsed = time.monotonic() - start
    assert result.returncode != 0 and "finished" not in result.stdout
    assert "replica 1 stopped answering at epoch 1, batch 3" in result.stderr, result.stderr[-3000:]
    assert "CommunicationOptions(timeout_seconds=...)" in result.stderr
    assert "MirroredStrategy(cross_device_ops=tf.distribute.experimental.CollectiveAllReduce(...))" in result.stderr
    assert elapsed < 60  # 4 s collective timeout + 3 s probe + teardown, not torch's 30 minutes


def test_communication_options_must_be_the_tf_class():
    import torchstrategy as tf

    with pytest.raises(TypeError, match="takes a tf.distribute.experimental.CommunicationOptions"):
        tf.distribute.experimental.CollectiveAllReduce({"timeout_seconds": 5})
    with pytest.raises(TypeError, match="takes a tf.distribute.CrossDeviceOps"):
        tf.distribute.MirroredStrategy(["/cpu:0"], cross_device_ops="nccl")


def test_the_old_keywords_fail_naming_their_new_spelling():
    """MirroredStrategy has TF's signature (devices=None, cross_device_ops=None); torchstrategy's former
    keywords say where they went, before any replica is started."""
    import inspect

    import torchstrategy as tf

    params = inspect.signature(tf.distribute.MirroredStrategy).parameters
    assert [(name, p.default) for name, p in params.items()] == [("devices", None), ("cross_device_ops", None)]
    with pytest.raises(TypeError, match=r"strategy\.extended\.allow_uneven_split = True"):
        tf.distribute.MirroredStrategy(["/cpu:0"], allow_uneven_split=True)
    with pytest.raises(TypeError, match=r"cross_device_ops=tf\.distribute\.experimental\.CollectiveAllReduce\("):
        tf.distribute.MirroredStrategy(["/cpu:0"], communication_options=None)
    with pytest.raises(TypeError, match=r"strategy\.extended\.allow_uneven_split = True"):
        tf.distribute.MultiWorkerMirroredStrategy(allow_uneven_split=True)
    with pytest.raises(TypeError, match=r"strategy\.extended\.allow_uneven_split = True"):
        tf.distribute.experimental.FSDPStrategy(["/cpu:0"], allow_uneven_split=True)
    with pytest.raises(TypeError, match=r"experimental_spmd_xla_partitioning=True"):  # before torch-xla is needed
        tf.distribute.TPUStrategy(shard_variables=True)


def test_collective_all_reduce_carries_the_options_and_backend_choice():
    import torchstrategy as tf

    Impl = tf.distribute.experimental.CommunicationImplementation
    options = tf.distribute.experimental.CommunicationOptions(timeout_seconds=7, implementation=Impl.RING)
    ops = tf.distribute.experimental.CollectiveAllReduce(options)
    assert isinstance(ops, tf.distribute.CrossDeviceOps) and ops.communication_options is options
    assert tf.distribute.experimental.CollectiveAllReduce().communication_options == (
        tf.distribute.experimental.CommunicationOptions())
    with pytest.raises(ValueError, match="NCCL communication needs CUDA GPUs"):  # checked before any process starts
        tf.distribute.MirroredStrategy(["/cpu:0"], cross_device_ops=tf.distribute.experimental.CollectiveAllReduce(
            tf.distribute.experimental.CommunicationOptions(implementation=Impl.NCCL)))


FAULT = r'''
import os, signal, sys, time
import numpy as np
import torchstrategy as tf
how = sys.argv[1]
# "hang": a short collective timeout, so that the replica blocked in user code is found quickly
options = tf.distribute.experimental.CommunicationOptions(timeout_seconds=4) if how == "hang" else None
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"],
                                          cross_device_ops=tf.distribute.experimental.CollectiveAllReduce(options))
rank = strategy.process_rank

class Fault(tf.keras.callbacks.Callback):
    def on_train_batch_begin(self, batch, logs=None):
        if batch != 3:
            return
        if how == "hang" and rank == 1:
            time.sleep(120)  # blocked in user code
        if how == "sigkill" and rank == 1:
            os.kill(os.getpid(), signal.SIGKILL)
        if how == "sigterm" and rank == 1:
            os.kill(os.getpid(), signal.SIGTERM)
        if how == "exit0" and rank == 0:
            sys.exit(3)
        if how == "exit1" and rank == 1:
            sys.exit(4)

with strategy.scope():
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(3,))])
    model.compile(optimizer="sgd", loss="mse")
x, y = np.ones((4096, 3), np.float32), np.ones((4096, 1), np.float32)
model.fit(x, y, batch_size=8, epochs=1, verbose=0, callbacks=[Fault()])
print("finished", flush=True)
'''


@pytest.mark.slow
@pytest.mark.parametrize("how, signal_name", [("sigkill", "SIGKILL"), ("sigterm", "SIGTERM")])
def test_a_killed_replica_is_named_with_its_signal_in_every_run(tmp_path, how, signal_name):
    script = mp.write_script(tmp_path, FAULT, name="fault.py")
    for _ in range(3 if how == "sigkill" else 1):  # the message must not depend on which thread of rank 0 notices first
        start = time.monotonic()
        result = mp.run_python([script, how], timeout=60)
        assert result.returncode != 0 and "finished" not in result.stdout
        assert "replica 1 (pid" in result.stderr and f"was killed by {signal_name}" in result.stderr, \
            result.stderr[-2000:]
        assert time.monotonic() - start < 30


@pytest.mark.slow
@pytest.mark.parametrize("how, code", [("exit0", 3), ("exit1", 4)])
def test_a_non_zero_sys_exit_on_any_replica_ends_the_job_at_once_with_its_code(tmp_path, how, code):
    script = mp.write_script(tmp_path, FAULT, name="fault.py")
    start = time.monotonic()
    result = mp.run_python([script, how], timeout=90)
    assert result.returncode == code, result.stderr[-2000:]
    assert "finished" not in result.stdout
    assert time.monotonic() - start < 30  # not the 60 s grace a cleanly finishing rank 0 gives the others
