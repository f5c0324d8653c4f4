"""Optimizer EMA (`use_ema`, `ema_momentum`, `ema_overwrite_frequency`): moving averages after N steps against
numbers frozen from TF 2.21 (Keras 3), overwrite frequency, `finalize_variable_values` at the end of fit,
checkpoints of the EMA state, once-per-update under a 2-replica MirroredStrategy, and bad arguments."""
import io
import warnings

import numpy as np
import pytest
import torch

import torchstrategy as tf
from tests import _multiprocess as mp
from torchstrategy.keras import constraints, optimizers

GRADS = [[0.5, -1.0, 2.0], [-0.25, 0.75, 1.0], [1.5, 0.1, -0.3], [0.2, -0.4, 0.6], [-1.0, 0.3, 0.05]]
V0, B0_EXTRA = [1.0, -2.0, 0.5], [[0.3, 0.7]]

# TF 2.21: v = keras.Variable(V0), b = keras.Variable(B0_EXTRA) (never gets a gradient), opt.build([v, b]),
# then opt.apply_gradients([(g, v)]) for g in GRADS; after each step (v, moving average of v).
KERAS_RUNS = {
    "sgd": ({"cls": "SGD", "ema_momentum": 0.9}, [
        ([0.949999988079071, -1.899999976158142, 0.30000001192092896], [0.949999988079071, -1.899999976158142, 0.30000001192092896]),
        ([0.9749999642372131, -1.975000023841858, 0.20000001788139343], [0.9524999856948853, -1.9075000286102295, 0.2900000214576721]),
        ([0.8249999284744263, -1.9850000143051147, 0.23000001907348633], [0.9397499561309814, -1.9152500629425049, 0.2840000092983246]),
        ([0.8049999475479126, -1.9450000524520874, 0.17000001668930054], [0.9262749552726746, -1.9182250499725342, 0.2726000249385834]),
        ([0.9049999713897705, -1.975000023841858, 0.16500002145767212], [0.9241474270820618, -1.9239025115966797, 0.26184001564979553])]),
    "sgd_momentum": ({"cls": "SGD", "momentum": 0.5, "ema_momentum": 0.9}, [
        ([0.949999988079071, -1.899999976158142, 0.30000001192092896], [0.949999988079071, -1.899999976158142, 0.30000001192092896]),
        ([0.949999988079071, -1.9249999523162842, 0.10000000894069672], [0.949999988079071, -1.9024999141693115, 0.2800000011920929]),
        ([0.7999999523162842, -1.9474999904632568, 0.030000008642673492], [0.934999942779541, -1.906999945640564, 0.2549999952316284]),
        ([0.7049999237060547, -1.9187500476837158, -0.06499999016523361], [0.9119999408721924, -1.908174991607666, 0.22299998998641968]),
        ([0.7574999332427979, -1.9343750476837158, -0.11749999225139618], [0.8965499401092529, -1.910794973373413, 0.18894998729228973])]),
    "sgd_overwrite_every_2": ({"cls": "SGD", "ema_momentum": 0.9, "ema_overwrite_frequency": 2}, [
        ([0.949999988079071, -1.899999976158142, 0.30000001192092896], [0.949999988079071, -1.899999976158142, 0.30000001192092896]),
        ([0.9524999856948853, -1.9075000286102295, 0.2900000214576721], [0.9524999856948853, -1.9075000286102295, 0.2900000214576721]),
        ([0.8025000095367432, -1.9175000190734863, 0.320000022649765], [0.9375, -1.908500075340271, 0.2930000126361847]),
        ([0.9220000505447388, -1.9054001569747925, 0.2897000312805176], [0.9220000505447388, -1.9054001569747925, 0.2897000312805176]),
        ([1.0220000743865967, -1.935400128364563, 0.28470003604888916], [0.9320000410079956, -1.9084001779556274, 0.2892000377178192])]),
    # the average follows the value before the constraint (Keras projects after the EMA update)
    "sgd_non_neg": ({"cls": "SGD", "ema_momentum": 0.9, "constraint": True}, [
        ([0.949999988079071, 0.0, 0.30000001192092896], [0.949999988079071, -1.899999976158142, 0.30000001192092896]),
        ([0.9749999642372131, 0.0, 0.20000001788139343], [0.9524999856948853, -1.7174999713897705, 0.2900000214576721]),
        ([0.8249999284744263, 0.0, 0.23000001907348633], [0.9397499561309814, -1.5467499494552612, 0.2840000092983246]),
        ([0.8049999475479126, 0.04000000283122063, 0.17000001668930054], [0.9262749552726746, -1.3880749940872192, 0.2726000249385834]),
        ([0.9049999713897705, 0.010000001639127731, 0.16500002145767212], [0.9241474270820618, -1.248267412185669, 0.26184001564979553])]),
    "adam_overwrite_every_3": ({"cls": "Adam", "ema_momentum": 0.9, "ema_overwrite_frequency": 3}, [
        ([0.9500006437301636, -1.950000524520874, 0.4500004053115845], [0.9500006437301636, -1.950000524520874, 0.4500004053115845]),
        ([0.9366840124130249, -1.945534348487854, 0.40339195728302], [0.9486689567565918, -1.9495539665222168, 0.445339560508728]),
        ([0.9441179633140564, -1.9490628242492676, 0.43799906969070435], [0.9441179633140564, -1.9490628242492676, 0.43799906969070435]),
        ([0.9132643342018127, -1.939526081085205, 0.40562182664871216], [0.9410326480865479, -1.9481091499328613, 0.4347613453865051]),
        ([0.9054870009422302, -1.937738299369812, 0.37767690420150757], [0.9374780654907227, -1.9470720291137695, 0.4290529191493988])]),
}


def _make(cls, constraint=False, **kwargs):
    v = torch.nn.Parameter(torch.tensor(V0))
    b = torch.nn.Parameter(torch.tensor(B0_EXTRA))
    if constraint:
        v.constraint = constraints.NonNeg()
    lr = 0.1 if cls == "SGD" else 0.05
    opt = getattr(optimizers, cls)(lr, use_ema=True, **kwargs)
    opt.build([v, b])
    return v, b, opt


def _close(ours, keras, rtol=1e-6):
    np.testing.assert_allclose(ours.detach().numpy(), np.array(keras, np.float32), rtol=rtol, atol=rtol / 5)


@pytest.mark.parametrize("case", sorted(KERAS_RUNS))
def test_moving_average_after_each_step_matches_keras(case):
    kwargs, expected = KERAS_RUNS[case]
    v, b, opt = _make(**kwargs)
    # SGD is exact to float32 rounding; Adam's own update differs from TF's by a few float32 ulps
    rtol = 1e-5 if kwargs["cls"] == "Adam" else 1e-6
    for grad, (value, average) in zip(GRADS, expected):
        opt.apply_gradients([(torch.tensor(grad), v)])
        _close(v, value, rtol)
        _close(opt.state[v]["average"], average, rtol)
    # a variable without gradients is still averaged (from its own value), and iterations counts 5
    _close(opt.state[b]["average"], B0_EXTRA)
    assert int(opt.iterations) == 5
    opt.finalize_variable_values([v, b])
    _close(v, expected[-1][1], rtol)  # Keras: the averages replace the variables (no constraint afterwards)
    _close(b, B0_EXTRA)


def test_first_step_starts_the_average_at_the_updated_value_and_averages_are_optimizer_variables():
    v = torch.nn.Parameter(torch.full((2,), 4.0))
    opt = optimizers.SGD(1.0, use_ema=True, ema_momentum=0.5)
    opt.apply_gradients([(torch.ones(2), v)])
    assert opt.state[v]["average"].tolist() == [3.0, 3.0]  # not 0.5 * 0 + 0.5 * 3
    opt.apply_gradients([(torch.ones(2), v)])
    assert opt.state[v]["average"].tolist() == [2.5, 2.5]
    assert v.tolist() == [2.0, 2.0]  # no overwrite without ema_overwrite_frequency
    assert any(t is opt.state[v]["average"] for t in opt.variables)


X = np.linspace(-1, 1, 24, dtype=np.float32).reshape(8, 3)
Y = np.stack([X.sum(1) * 2.0, X[:, 0] - 3 * X[:, 2]], 1).astype(np.float32)
K0 = np.array([[0.1, -0.2], [0.3, 0.4], [-0.5, 0.6]], np.float32)
B0 = np.array([0.05, -0.05], np.float32)
# TF 2.21: Sequential([Input((3,)), Dense(2)]) from (K0, B0), SGD(0.1, **kwargs), mse, fit(X, Y,
# batch_size=2, epochs=2, shuffle=False): get_weights() after fit (the EMA, finalized by fit)
KERAS_FITS = {
    "ema": ({"ema_momentum": 0.8}, (
        [[0.9880956411361694, -0.5767825841903687], [1.1669431924819946, 0.020601551979780197],
         [0.3457905650138855, 0.21798573434352875]], [-0.19325417280197144, -0.08008177578449249])),
    "ema_overwrite_every_3": ({"ema_momentum": 0.8, "ema_overwrite_frequency": 3}, (
        [[0.855719804763794, -0.5212006568908691], [1.0334076881408691, 0.08003129065036774],
         [0.2110951542854309, 0.2812632620334625]], [-0.2065923511981964, -0.0358329601585865])),
}


def _fit_model(**kwargs):
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
    model.set_weights([K0, B0])
    model.compile(tf.keras.optimizers.SGD(0.1, use_ema=True, **kwargs), "mse")
    return model


@pytest.mark.parametrize("case", sorted(KERAS_FITS))
def test_fit_ends_with_the_moving_averages_as_keras(case):
    kwargs, (kernel, bias) = KERAS_FITS[case]
    model = _fit_model(**kwargs)
    seen = []
    probe = tf.keras.callbacks.LambdaCallback(
        on_train_end=lambda logs: seen.append(model.layers[0].kernel.detach().numpy().copy()))
    model.fit(X, Y, batch_size=2, epochs=2, shuffle=False, verbose=0, callbacks=[probe])
    got_kernel, got_bias = model.get_weights()
    np.testing.assert_allclose(got_kernel, kernel, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_bias, bias, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(seen[0], got_kernel)  # finalized before on_train_end, as Keras


def test_without_ema_fit_keeps_the_trained_weights_and_finalize_is_a_no_op():
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
    model.set_weights([K0, B0])
    model.compile(tf.keras.optimizers.SGD(0.1), "mse")
    model.fit(X, Y, batch_size=2, epochs=2, shuffle=False, verbose=0)
    trained = model.get_weights()
    model.optimizer.finalize_variable_values(model.trainable_weights)
    assert all(np.array_equal(a, b) for a, b in zip(trained, model.get_weights()))
    assert not np.allclose(trained[0], KERAS_FITS["ema"][1][0], atol=1e-3)  # the EMA result differs


def test_checkpoint_restores_the_moving_averages():
    def fresh():
        v = torch.nn.Parameter(torch.tensor(V0))
        return v, optimizers.SGD(0.1, momentum=0.5, use_ema=True, ema_momentum=0.9, ema_overwrite_frequency=4,
                                 params=[v])

    full_v, full = fresh()
    for grad in GRADS:
        full.apply_gradients([(torch.tensor(grad), full_v)])
    first_v, first = fresh()
    for grad in GRADS[:3]:
        first.apply_gradients([(torch.tensor(grad), first_v)])
    buffer = io.BytesIO()
    torch.save({"v": first_v.detach().clone(), "opt": first.state_dict()}, buffer)
    buffer.seek(0)
    saved = torch.load(buffer, weights_only=False)
    assert "average" in saved["opt"]["state"][0]
    resumed_v, resumed = fresh()
    with torch.no_grad():
        resumed_v.copy_(saved["v"])
    resumed.load_state_dict(saved["opt"])
    np.testing.assert_array_equal(resumed.state[resumed_v]["average"].numpy(), first.state[first_v]["average"].numpy())
    for grad in GRADS[3:]:
        resumed.apply_gradients([(torch.tensor(grad), resumed_v)])
    np.testing.assert_array_equal(resumed_v.detach().numpy(), full_v.detach().numpy())
    np.testing.assert_array_equal(resumed.state[resumed_v]["average"].numpy(), full.state[full_v]["average"].numpy())


def test_tf_train_checkpoint_saves_and_restores_the_averages(tmp_path):
    v = torch.nn.Parameter(torch.tensor(V0))
    opt = optimizers.SGD(0.1, use_ema=True, params=[v])
    for grad in GRADS[:2]:
        opt.apply_gradients([(torch.tensor(grad), v)])
    average = opt.state[v]["average"].clone()
    path = tf.train.Checkpoint(optimizer=opt).save(str(tmp_path / "ckpt"))
    other_v = torch.nn.Parameter(torch.tensor(V0))
    other = optimizers.SGD(0.1, use_ema=True, params=[other_v])
    tf.train.Checkpoint(optimizer=other).restore(path)
    np.testing.assert_array_equal(other.state[other_v]["average"].numpy(), average.numpy())
    assert int(other.iterations) == 2


def test_finalize_before_any_step_changes_nothing_and_unknown_variables_are_an_error():
    v = torch.nn.Parameter(torch.tensor(V0))
    opt = optimizers.SGD(0.1, use_ema=True, params=[v])
    opt.finalize_variable_values([v])  # averages still zero: they must not replace the weights
    assert v.tolist() == V0
    opt.apply_gradients([(torch.ones(3), v)])
    with pytest.raises(ValueError, match="keeps no moving average"):
        opt.finalize_variable_values([v, torch.nn.Parameter(torch.zeros(4))])


def test_config_round_trip_and_bad_arguments():
    opt = optimizers.Adam(use_ema=True, ema_momentum=0.95, ema_overwrite_frequency=10)
    config = opt.get_config()
    assert (config["use_ema"], config["ema_momentum"], config["ema_overwrite_frequency"]) == (True, 0.95, 10)
    again = optimizers.Adam.from_config(config)
    assert again.use_ema and again.ema_momentum == 0.95 and again.ema_overwrite_frequency == 10
    with pytest.raises(ValueError, match=r"`ema_momentum` must be in the range \[0, 1\]"):
        optimizers.SGD(use_ema=True, ema_momentum=1.5)
    with pytest.raises(ValueError, match="`ema_overwrite_frequency` must be an integer >= 1"):
        optimizers.SGD(use_ema=True, ema_overwrite_frequency=-2)
    assert optimizers.SGD(use_ema=True, ema_overwrite_frequency=0).ema_overwrite_frequency == 0  # Keras: never
    with pytest.raises(ValueError, match="`ema_overwrite_frequency` must be an integer >= 1"):
        optimizers.SGD(use_ema=True, ema_overwrite_frequency=2.5)


MIRRORED = r'''
import json, sys
import numpy as np
import torchstrategy as tf

X = np.linspace(-1, 1, 24, dtype=np.float32).reshape(8, 3)
Y = np.stack([X.sum(1) * 2.0, X[:, 0] - 3 * X[:, 2]], 1).astype(np.float32)
K0 = np.array([[0.1, -0.2], [0.3, 0.4], [-0.5, 0.6]], np.float32)
B0 = np.array([0.05, -0.05], np.float32)
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(
        2, kernel_constraint=tf.keras.constraints.MaxNorm(0.9))])
    model.set_weights([K0, B0])
    model.compile(tf.keras.optimizers.SGD(0.1, use_ema=True, ema_momentum=0.8), "mse")
model.fit(X, Y, batch_size=2, epochs=2, shuffle=False, verbose=0)
if strategy.process_rank == 0:
    with open(sys.argv[1], "w") as f:
        json.dump({"weights": [w.tolist() for w in model.get_weights()], "iterations": int(model.optimizer.iterations),
                   "replicas": strategy.num_replicas_in_sync}, f)
'''


@pytest.mark.slow
def test_two_replica_mirrored_fit_updates_averages_and_constraints_once_per_step(tmp_path):
    script = mp.write_script(str(tmp_path), MIRRORED)
    out = tmp_path / "result.json"
    result = mp.run_python([script, str(out)], timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    report = mp.read_json(out)
    # single-process reference computed here
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(
        2, kernel_constraint=tf.keras.constraints.MaxNorm(0.9))])
    model.set_weights([K0, B0])
    model.compile(tf.keras.optimizers.SGD(0.1, use_ema=True, ema_momentum=0.8), "mse")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing unexpected on the reference path
        model.fit(X, Y, batch_size=2, epochs=2, shuffle=False, verbose=0)
    assert report["replicas"] == 2 and report["iterations"] == int(model.optimizer.iterations) == 8
    for ours, reference in zip(report["weights"], model.get_weights()):
        np.testing.assert_allclose(np.array(ours, np.float32), reference, rtol=1e-5, atol=1e-6)


def test_model_save_and_load_keep_the_moving_averages(tmp_path):
    model = _fit_model(ema_momentum=0.8)
    model.fit(X, Y, batch_size=4, epochs=1, shuffle=False, verbose=0)
    averages = [model.optimizer.state[p]["average"].clone() for p in model.trainable_weights]
    path = str(tmp_path / "model.keras")
    model.save(path)
    loaded = tf.keras.models.load_model(path)
    assert loaded.optimizer.use_ema and loaded.optimizer.ema_momentum == 0.8
    restored = [loaded.optimizer.state[p]["average"] for p in loaded.trainable_weights]
    assert len(restored) == 2 and int(loaded.optimizer.iterations) == 2
    for ours, saved in zip(restored, averages):
        np.testing.assert_array_equal(ours.numpy(), saved.numpy())
