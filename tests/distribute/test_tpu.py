"""TPUStrategy on torch-xla's XLA:CPU devices (PJRT_DEVICE=CPU CPU_NUM_DEVICES=4, one SPMD process):
fit, custom loops and steps_per_execution give a one-device CPU run's weights; steps compile once."""
from __future__ import annotations

import numpy as np
import pytest

from tests.distribute.conformance._battery import cnn, images

pytestmark = pytest.mark.tpu

ROWS, GLOBAL_BATCH = 96, 16


def _data():
    return images(ROWS)


_model = cnn  # (strategy, optimizer="sgd", steps_per_execution=1, metrics=("accuracy",)), seeded with 1


def _tpu():
    import torchstrategy as tf

    return tf.distribute.TPUStrategy()


def _cpu():
    import torchstrategy as tf

    return tf.distribute.OneDeviceStrategy("/cpu:0")


def _assert_same(left, right, atol):
    for index, (a, b) in enumerate(zip(left, right)):
        np.testing.assert_allclose(a, b, atol=atol, rtol=0, err_msg=f"weight #{index}")


@pytest.mark.parametrize("optimizer, atol", [("sgd", 1e-5), ("adam", 1e-4)])
def test_fit_on_four_xla_devices_gives_the_one_device_cpu_weights(optimizer, atol):
    x, y = _data()
    reference = _model(_cpu(), optimizer)
    expected = reference.fit(x, y, batch_size=GLOBAL_BATCH, epochs=2, verbose=0, shuffle=False)
    strategy = _tpu()
    assert strategy.num_replicas_in_sync == 4
    model = _model(strategy, optimizer)
    history = model.fit(x, y, batch_size=GLOBAL_BATCH, epochs=2, verbose=0, shuffle=False)
    assert model.trainable_variables[0].device.type == "xla"
    _assert_same(model.get_weights(), reference.get_weights(), atol)
    np.testing.assert_allclose(history.history["loss"], expected.history["loss"], rtol=1e-5)
    assert history.history["loss"][1] < history.history["loss"][0]
    np.testing.assert_allclose(model.evaluate(x, y, batch_size=32, verbose=0),
                               reference.evaluate(x, y, batch_size=32, verbose=0), rtol=1e-5)
    np.testing.assert_allclose(model.predict(x[:16], batch_size=8, verbose=0),
                               reference.predict(x[:16], batch_size=8, verbose=0), atol=1e-5)


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_steps_compile_once_and_not_again_in_later_epochs(optimizer):
    import torchstrategy as tf

    x, y = _data()
    strategy = _tpu()
    model = _model(strategy, optimizer)
    counts = []
    record = tf.keras.callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: counts.append(strategy.compile_count))
    model.fit(x, y, batch_size=GLOBAL_BATCH, epochs=3, verbose=0, shuffle=False, callbacks=[record])
    assert counts[0] > 0
    assert counts[0] == counts[1] == counts[2], counts


def test_steps_per_execution_eight_gives_the_weights_of_one():
    x, y = _data()
    strategy = _tpu()
    one = _model(strategy)
    one.fit(x, y, batch_size=GLOBAL_BATCH, epochs=2, verbose=0, shuffle=False)
    eight = _model(strategy, steps_per_execution=8)
    eight.fit(x, y, batch_size=GLOBAL_BATCH, epochs=2, verbose=0, shuffle=False)
    _assert_same(eight.get_weights(), one.get_weights(), 1e-6)


def _custom_step(strategy, model):
    """The tutorials' custom training step with SGD(0.01), fit's 'sgd': GradientTape, compute_average_loss."""
    import torchstrategy as tf

    with strategy.scope():
        optimizer = tf.keras.optimizers.SGD(0.01)
        loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")

    def step(inputs):
        images, labels = inputs
        with tf.GradientTape() as tape:
            loss = tf.nn.compute_average_loss(loss_object(labels, model(images, training=True)),
                                              global_batch_size=GLOBAL_BATCH)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    return step


def test_a_custom_strategy_run_loop_gives_the_weights_of_fit():
    import torchstrategy as tf

    x, y = _data()
    strategy = _tpu()
    fitted = _model(strategy)
    fitted.fit(x, y, batch_size=GLOBAL_BATCH, epochs=2, verbose=0, shuffle=False)
    model = _model(strategy)
    step = _custom_step(strategy, model)
    dataset = strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices((x, y)).batch(GLOBAL_BATCH))
    totals = []
    for _ in range(2):
        total = 0.0
        for batch in dataset:
            total += float(strategy.reduce("SUM", strategy.run(step, args=(batch,)), axis=None))
        totals.append(total)
    _assert_same(model.get_weights(), fitted.get_weights(), 1e-6)
    assert totals[1] < totals[0]


def test_a_checkpoint_written_under_tpu_strategy_restores_on_one_cpu_device_and_back(tmp_path):
    import torchstrategy as tf

    x, y = _data()
    tpu_model = _model(_tpu(), "adam")
    tpu_model.fit(x, y, batch_size=GLOBAL_BATCH, epochs=1, verbose=0)
    path = tf.train.Checkpoint(model=tpu_model).save(str(tmp_path / "tpu" / "ckpt"))
    cpu_model = _model(_cpu(), "adam")
    cpu_model.fit(x[:16], y[:16], batch_size=GLOBAL_BATCH, epochs=1, verbose=0)  # builds its optimizer
    tf.train.Checkpoint(model=cpu_model).restore(path).assert_consumed()
    _assert_same(cpu_model.get_weights(), tpu_model.get_weights(), 0)
    assert int(cpu_model.optimizer.iterations) == int(tpu_model.optimizer.iterations) == ROWS // GLOBAL_BATCH

    cpu_model.fit(x, y, batch_size=GLOBAL_BATCH, epochs=1, verbose=0)
    back = tf.train.Checkpoint(model=cpu_model).save(str(tmp_path / "cpu" / "ckpt"))
    tf.train.Checkpoint(model=tpu_model).restore(back).assert_consumed()
    _assert_same(tpu_model.get_weights(), cpu_model.get_weights(), 0)
    assert tpu_model.trainable_variables[0].device.type == "xla"


def test_a_global_batch_the_devices_cannot_split_is_refused_with_the_nearest_sizes():
    x, y = _data()
    model = _model(_tpu())
    with pytest.raises(ValueError, match="global batch size 10 is not divisible by the 4 replicas.*8 or 12"):
        model.fit(x, y, batch_size=10, epochs=1, verbose=0)


def test_a_model_created_outside_the_scope_is_refused():
    import torchstrategy as tf

    strategy = _tpu()
    model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(2)])
    with strategy.scope(), pytest.raises(ValueError, match="created outside strategy.scope\\(\\), but TPUStrategy"):
        model.compile(optimizer="sgd", loss="mse")


def _seed_cnn(strategy):
    import torchstrategy as tf

    tf.keras.utils.set_random_seed(3)
    with strategy.scope():
        model = tf.keras.models.Sequential([
            tf.keras.layers.Conv2D(32, (3, 3), activation="relu", input_shape=(32, 32, 3)),
            tf.keras.layers.MaxPooling2D((2, 2)),
            tf.keras.layers.Conv2D(64, (3, 3), activation="relu"),
            tf.keras.layers.MaxPooling2D((2, 2)),
            tf.keras.layers.Conv2D(64, (3, 3), activation="relu"),
            tf.keras.layers.Flatten(),
            tf.keras.layers.Dense(64, activation="relu"),
            tf.keras.layers.Dense(10),
        ])
        model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=["accuracy"])
    return model


def test_the_tf_tpu_snippet_trains_the_seed_cnn_to_the_one_device_cpu_weights():
    import torchstrategy as tf

    rng = np.random.default_rng(5)
    labels = rng.integers(0, 10, 256)
    images = (rng.random((256, 32, 32, 3)) * 0.5 + labels[:, None, None, None] / 20.0).astype("float32")  # learnable
    reference = _seed_cnn(_cpu())
    reference.fit(images, labels, batch_size=64, epochs=2, verbose=0, shuffle=False)

    # TF's TPU setup, with only the import changed
    resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu="")
    tf.config.experimental_connect_to_cluster(resolver)
    tf.tpu.experimental.initialize_tpu_system(resolver)
    try:
        strategy = tf.distribute.TPUStrategy(resolver)
        assert strategy.num_replicas_in_sync == 4
        model = _seed_cnn(strategy)
        history = model.fit(images, labels, batch_size=64, epochs=2, verbose=0, shuffle=False)
    finally:
        tf.tpu.experimental.shutdown_tpu_system(resolver)
    assert history.history["loss"][1] < history.history["loss"][0]
    _assert_same(model.get_weights(), reference.get_weights(), 1e-4)


class _StopOnceAt:
    """A callback that raises once at a global step (a killed job, in one process)."""

    def __new__(cls, step):
        import torchstrategy as tf

        class StopOnceAt(tf.keras.callbacks.Callback):
            fired = False

            def on_train_batch_end(self, batch, logs=None):
                if not StopOnceAt.fired and self.training_state.progress.global_step == step:
                    StopOnceAt.fired = True
                    raise KeyboardInterrupt("stopped by the test")

        return StopOnceAt()


def test_backup_and_restore_resumes_mid_epoch_and_model_checkpoint_files_load_on_cpu(tmp_path):
    import torchstrategy as tf

    x, y = _data()
    strategy = _tpu()
    uninterrupted = _model(strategy, "adam")
    expected = uninterrupted.fit(x, y, batch_size=GLOBAL_BATCH, epochs=2, verbose=0, shuffle=False)

    model = _model(strategy, "adam")
    backup = tf.keras.callbacks.BackupAndRestore(str(tmp_path / "backup"), save_freq=2)
    with pytest.raises(KeyboardInterrupt):
        model.fit(x, y, batch_size=GLOBAL_BATCH, epochs=2, verbose=0, shuffle=False,
                  callbacks=[backup, _StopOnceAt(9)])
    resumed = _model(strategy, "adam")
    saver = tf.keras.callbacks.ModelCheckpoint(str(tmp_path / "model.keras"))
    steps = []
    count = tf.keras.callbacks.LambdaCallback(on_train_batch_end=lambda batch, logs: steps.append(batch))
    history = resumed.fit(x, y, batch_size=GLOBAL_BATCH, epochs=2, verbose=0, shuffle=False,
                          callbacks=[tf.keras.callbacks.BackupAndRestore(str(tmp_path / "backup"), save_freq=2), saver,
                                     count])
    assert len(steps) == 2 * ROWS // GLOBAL_BATCH - 8  # resumed after the backup at step 8, mid-epoch 2
    _assert_same(resumed.get_weights(), uninterrupted.get_weights(), 1e-6)
    np.testing.assert_allclose(history.history["loss"][-1], expected.history["loss"][-1], rtol=1e-5)

    with _cpu().scope():
        loaded = tf.keras.models.load_model(str(tmp_path / "model.keras"))
    assert loaded.trainable_variables[0].device.type == "cpu"
    _assert_same(loaded.get_weights(), resumed.get_weights(), 0)


def test_the_mixed_bfloat16_policy_trains_on_xla_close_to_the_cpu_run():
    import torchstrategy as tf

    x, y = _data()
    tf.keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        reference = _model(_cpu(), "adam")
        expected = reference.fit(x, y, batch_size=GLOBAL_BATCH, epochs=2, verbose=0, shuffle=False)
        model = _model(_tpu(), "adam")
        history = model.fit(x, y, batch_size=GLOBAL_BATCH, epochs=2, verbose=0, shuffle=False)
    finally:
        tf.keras.mixed_precision.set_global_policy("float32")
    assert model.layers[0].compute_dtype == "bfloat16" and model.trainable_variables[0].dtype.is_floating_point
    assert str(model.trainable_variables[0].dtype) == "torch.float32"  # variables stay float32
    assert history.history["loss"][1] < history.history["loss"][0]
    np.testing.assert_allclose(history.history["loss"], expected.history["loss"], rtol=2e-2)


def test_spmd_xla_partitioning_splits_weights_and_slots_over_the_devices_and_trains_the_same():
    import torch_xla
    import torchstrategy as tf

    x, y = _data()
    reference = _model(_cpu(), "adam")
    reference.fit(x, y, batch_size=GLOBAL_BATCH, epochs=2, verbose=0, shuffle=False)
    model = _model(tf.distribute.TPUStrategy(experimental_spmd_xla_partitioning=True), "adam")
    model.fit(x, y, batch_size=GLOBAL_BATCH, epochs=2, verbose=0, shuffle=False)
    kernel = model.layers[-1].kernel  # (36, 10): split on its first dimension over the 4 devices
    spec = torch_xla._XLAC._get_xla_sharding_spec(kernel)
    assert spec.startswith("{devices=[4,1]"), spec
    assert torch_xla._XLAC._get_xla_sharding_spec(model.optimizer.state[kernel]["momentum"]) == spec
    _assert_same(model.get_weights(), reference.get_weights(), 1e-4)


def test_a_last_batch_the_devices_cannot_split_trains_like_cpu_and_compiles_only_once():
    import torchstrategy as tf

    x, y = _data()
    x, y = x[:98], y[:98]  # 6 batches of 16, then 2 rows: fewer than the 4 devices
    reference = _model(_cpu())
    reference.fit(x, y, batch_size=GLOBAL_BATCH, epochs=3, verbose=0, shuffle=False)
    strategy = _tpu()
    model = _model(strategy)
    counts = []
    record = tf.keras.callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: counts.append(strategy.compile_count))
    model.fit(x, y, batch_size=GLOBAL_BATCH, epochs=3, verbose=0, shuffle=False, callbacks=[record])
    assert counts[0] == counts[1] == counts[2], counts  # the short batch's graph is compiled in epoch 1 only
    _assert_same(model.get_weights(), reference.get_weights(), 1e-5)


def test_distribute_datasets_from_function_feeds_per_replica_batches_joined_into_the_global_one():
    import torchstrategy as tf

    x, y = _data()
    strategy = _tpu()
    fitted = _model(strategy)
    fitted.fit(x, y, batch_size=GLOBAL_BATCH, epochs=1, verbose=0, shuffle=False)
    contexts = []

    def dataset_fn(context):
        contexts.append(context)
        return tf.data.Dataset.from_tensor_slices((x, y)).batch(context.get_per_replica_batch_size(GLOBAL_BATCH))

    dataset = strategy.distribute_datasets_from_function(dataset_fn)
    assert (contexts[0].num_input_pipelines, contexts[0].input_pipeline_id, contexts[0].num_replicas_in_sync) == (1, 0, 4)
    model = _model(strategy)
    step = _custom_step(strategy, model)
    for batch in dataset:
        # 4 per-replica batches of 4, one program over all of them
        assert strategy.experimental_local_results(batch)[0][0].shape[0] == GLOBAL_BATCH
        strategy.run(step, args=(batch,))
    _assert_same(model.get_weights(), fitted.get_weights(), 1e-6)
