"""tf.summary writers, steps and record_if, read back with TensorBoard's own event reader."""
from __future__ import annotations

import glob
import os
import stat

import numpy as np
import pytest
import torch

import torchstrategy as tf
from torchstrategy.errors import FailedPreconditionError, PermissionDeniedError

pytest.importorskip("tensorboard")
from tensorboard.backend.event_processing import event_file_loader  # noqa: E402
from tensorboard.backend.event_processing import plugin_event_accumulator  # noqa: E402
from tensorboard.util import tensor_util  # noqa: E402

from tests import _multiprocess as mp  # noqa: E402


@pytest.fixture(autouse=True)
def _no_default_writer_or_step():
    yield
    tf.summary.experimental.set_step(None)
    tf.summary.create_noop_writer().set_as_default()
    from torchstrategy import _context

    _context.summary_state().writer = None


def events(logdir) -> list:
    paths = glob.glob(os.path.join(str(logdir), "events.out.tfevents.*"))
    assert len(paths) == 1, paths
    return list(event_file_loader.EventFileLoader(paths[0]).Load())


def scalars(logdir) -> dict:
    accumulator = plugin_event_accumulator.EventAccumulator(str(logdir))
    accumulator.Reload()
    return {tag: [(event.step, float(tensor_util.make_ndarray(event.tensor_proto)))
                  for event in accumulator.Tensors(tag)]
            for tag in accumulator.Tags()["tensors"]}


def test_file_writer_writes_a_v2_event_file_with_scalars_at_their_steps(tmp_path):
    writer = tf.summary.create_file_writer(str(tmp_path))
    assert isinstance(writer, tf.summary.SummaryWriter)
    with writer.as_default(step=3):
        assert tf.summary.scalar("loss", torch.tensor(0.5), description="the loss") is True
        assert tf.summary.scalar("loss", 0.25, step=4) is True
        assert tf.summary.experimental.get_step() == 3
    assert tf.summary.experimental.get_step() is None
    writer.close()
    (path,) = glob.glob(str(tmp_path / "*"))
    assert os.path.basename(path).startswith("events.out.tfevents.") and path.endswith(".v2")  # TF's name
    first = events(tmp_path)[0]
    assert first.file_version == "brain.Event:2"
    assert scalars(tmp_path) == {"loss": [(3, 0.5), (4, 0.25)]}
    accumulator = plugin_event_accumulator.EventAccumulator(str(tmp_path))
    accumulator.Reload()
    metadata = accumulator.SummaryMetadata("loss")  # the tag's first
    assert metadata.plugin_data.plugin_name == "scalars" and metadata.summary_description == "the loss"


def test_no_default_writer_or_record_if_false_writes_nothing(tmp_path):
    assert tf.summary.should_record_summaries() is False
    assert tf.summary.scalar("x", 1.0, step=0) is False
    writer = tf.summary.create_file_writer(str(tmp_path), filename_suffix=".mine")
    writer.set_as_default(step=1)
    try:
        assert tf.summary.should_record_summaries() is True
        with tf.summary.record_if(False):
            assert tf.summary.scalar("x", 1.0) is False
        with tf.summary.record_if(lambda: tf.summary.experimental.get_step() % 2 == 0):
            for step in range(4):
                tf.summary.experimental.set_step(step)
                tf.summary.scalar("even", float(step))
        tf.summary.flush()
    finally:
        writer.close()
    assert glob.glob(str(tmp_path / "*"))[0].endswith(".mine")
    assert scalars(tmp_path) == {"even": [(0, 0.0), (2, 2.0)]}
    assert tf.summary.should_record_summaries() is False  # closing the default writer unsets it


def test_variable_steps_are_read_at_each_write(tmp_path):
    step = tf.Variable(5, dtype=tf.int64)
    writer = tf.summary.create_file_writer(str(tmp_path))
    with writer.as_default(step=step):
        tf.summary.scalar("v", 1.0)
        step.assign_add(2)
        tf.summary.scalar("v", 2.0)
    writer.close()
    assert scalars(tmp_path) == {"v": [(5, 1.0), (7, 2.0)]}


def test_missing_step_is_a_clear_error(tmp_path):
    writer = tf.summary.create_file_writer(str(tmp_path))
    with writer.as_default():
        with pytest.raises(ValueError, match="No step set"):
            tf.summary.scalar("x", 1.0)
    writer.close()


def test_noop_writer_records_nothing(tmp_path):
    with tf.summary.create_noop_writer().as_default(step=1):
        assert tf.summary.should_record_summaries() is True
        assert tf.summary.scalar("x", 1.0) is False
    assert os.listdir(tmp_path) == []


def test_write_and_write_raw_pb_keep_the_tensor_and_metadata(tmp_path):
    from tensorboard.compat.proto import summary_pb2

    raw = summary_pb2.Summary()
    raw.value.add(tag="raw_pb", simple_value=2.5)
    metadata = summary_pb2.SummaryMetadata()
    metadata.plugin_data.plugin_name = "custom"
    writer = tf.summary.create_file_writer(str(tmp_path))
    with writer.as_default(step=9):
        assert tf.summary.write("ints", torch.tensor([[1, 2], [3, 4]], dtype=torch.int32), metadata=metadata)
        assert tf.summary.experimental.write_raw_pb(raw.SerializeToString())
        with tf.summary.experimental.summary_scope("outer") as (tag, scope):
            assert (tag, scope) == ("outer", "outer/")
            tf.summary.scalar("inner", 1.0)
    writer.close()
    values = {value.tag: (event.step, value) for event in events(tmp_path)[1:] for value in event.summary.value}
    assert set(values) == {"ints", "raw_pb", "outer/inner"}
    step, ints = values["ints"]
    assert step == 9 and ints.metadata.plugin_data.plugin_name == "custom"
    np.testing.assert_array_equal(tensor_util.make_ndarray(ints.tensor), [[1, 2], [3, 4]])
    assert tensor_util.make_ndarray(ints.tensor).dtype == np.int32
    assert float(tensor_util.make_ndarray(values["raw_pb"][1].tensor)) == 2.5  # the reader migrates simple_value


def test_closed_writer_refuses_writes(tmp_path):
    writer = tf.summary.create_file_writer(str(tmp_path))
    writer.close()
    writer.close()  # twice is fine
    with writer.as_default(step=1):
        with pytest.raises(RuntimeError, match="closed"):
            tf.summary.scalar("x", 1.0)


def test_unwritable_logdir_is_a_clear_error(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(stat.S_IRUSR | stat.S_IXUSR)
    # root may write in a read-only directory; sysfs refuses everyone
    target = str(locked / "logs") if os.geteuid() != 0 else "/sys/torchstrategy_logs"
    try:
        with pytest.raises(PermissionDeniedError, match="cannot write to"):
            tf.summary.create_file_writer(target)
    finally:
        locked.chmod(stat.S_IRWXU)


def test_logdir_that_is_a_file_is_a_clear_error(tmp_path):
    afile = tmp_path / "file"
    afile.write_text("x")
    with pytest.raises(FailedPreconditionError, match="not a directory"):
        tf.summary.create_file_writer(str(afile))
    with pytest.raises(NotImplementedError, match="experimental_mesh"):
        tf.summary.create_file_writer(str(tmp_path), experimental_mesh=object())


CHIEF_ONLY = r'''
import sys
import numpy as np
import torchstrategy as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
writer = tf.summary.create_file_writer(f"{sys.argv[1]}/{strategy.process_rank}")
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,), kernel_initializer="ones")])
    optimizer = tf.keras.optimizers.SGD(0.1)
x = np.array([[1.0, 2.0], [3.0, 4.0], [1.0, 0.0], [0.0, 1.0]], np.float32)
y = np.zeros((4, 1), np.float32)
dataset = strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices((x, y)).batch(4))

def step(inputs):
    features, labels = inputs
    with tf.GradientTape() as tape:
        loss = tf.nn.compute_average_loss(tf.reduce_sum(tf.square(model(features) - labels), axis=1),
                                          global_batch_size=4)
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    return loss

with writer.as_default():
    for index, batch in enumerate(dataset):
        loss = strategy.reduce(tf.distribute.ReduceOp.SUM, strategy.run(step, args=(batch,)), axis=None)
        tf.summary.scalar("loss", loss, step=index + 1)
writer.close()
'''


@pytest.mark.slow
@pytest.mark.parametrize("every_process", [False, True])
def test_under_mirrored_strategy_only_the_chief_writes_unless_asked(tmp_path, every_process):
    script = mp.write_script(tmp_path, CHIEF_ONLY)
    logdir = tmp_path / "logs"
    env = mp.clean_env(TORCHSTRATEGY_SUMMARIES_EVERY_PROCESS="1") if every_process else None
    result = mp.run_python([script, str(logdir)], env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    # rank 1's writer records nothing (no directory, no file) unless every process is asked to write
    assert sorted(os.listdir(logdir)) == (["0", "1"] if every_process else ["0"])
    # the first step's loss over the global batch: outputs x @ [1, 1] = 3, 7, 1, 1 against 0
    expected = np.mean(np.square([3.0, 7.0, 1.0, 1.0]))
    for rank in sorted(os.listdir(logdir)):
        (entry,) = scalars(logdir / rank)["loss"]
        assert entry[0] == 1 and entry[1] == pytest.approx(expected)

