"""tf.recompute_grad: gradients equal the stored-activation ones (functions, Keras models, seeded
Dropout and any torch.Generator, inherited `training`, 2-replica DDP), and saved activations shrink."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf
from tests import _multiprocess as mp


def _grads(loss: torch.Tensor, tensors: list) -> list:
    return [g.clone() for g in torch.autograd.grad(loss, tensors)]


def _assert_all_close(ours: list, expected: list) -> None:
    assert len(ours) == len(expected)
    for a, b in zip(ours, expected):
        torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-6)


def test_plain_function_with_tensor_kwargs_gets_equal_gradients_and_runs_again_in_backward():
    w = torch.randn(6, 6, requires_grad=True)
    scale = torch.randn(6, requires_grad=True)
    runs = []

    def block(x, *, scale, power=2):
        runs.append(1)
        return torch.tanh(x @ w) ** power * scale

    x = torch.randn(5, 6, requires_grad=True)
    expected = _grads(block(block(x, scale=scale), scale=scale, power=3).sum(), [x, w, scale])
    recomputed = tf.recompute_grad(block)
    runs.clear()
    out = recomputed(recomputed(x, scale=scale), scale=scale, power=3)
    assert len(runs) == 2
    _assert_all_close(_grads(out.sum(), [x, w, scale]), expected)
    assert len(runs) == 4  # both blocks ran again during backward
    assert recomputed.__wrapped__ is block and recomputed.__name__ == "block"


def test_keras_model_gradients_equal_and_tape_works():
    model = tf.keras.Sequential([tf.keras.layers.Dense(16, activation="tanh", input_shape=(4,)),
                                 tf.keras.layers.Dense(16, activation="relu"), tf.keras.layers.Dense(1)])
    x = torch.randn(8, 4)
    with tf.GradientTape() as tape:
        loss = (model(x) ** 2).mean()
    expected = tape.gradient(loss, model.trainable_variables)
    recomputed = tf.recompute_grad(model)
    with tf.GradientTape() as tape:
        loss_r = (recomputed(x) ** 2).mean()
    _assert_all_close(tape.gradient(loss_r, recomputed.__wrapped__.trainable_variables), expected)
    torch.testing.assert_close(loss_r, loss, rtol=0, atol=0)


def _dropout_net(seed):
    return (tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dropout(0.5, seed=seed),
            tf.keras.layers.Dense(3))


@pytest.mark.parametrize("seed", [7, None])
def test_dropout_in_the_recomputed_block_replays_its_mask_step_after_step(seed):
    # Two identical networks: one stored, one recomputed; a seeded Dropout draws from its own
    # torch.Generator, an unseeded one from the global RNG. Three steps: the streams must stay in step.
    nets = [_dropout_net(seed), _dropout_net(seed)]
    x = torch.randn(16, 8)
    for net in nets:
        net[2](net[0](x))
    for layer_a, layer_b in zip(nets[0], nets[1]):
        layer_b.set_weights(layer_a.get_weights())
    dense1, dropout, dense2 = nets[1]
    recomputed = tf.recompute_grad(lambda v: dense2(dropout(dense1(v), training=True)))
    plain_dense1, plain_dropout, plain_dense2 = nets[0]
    for _ in range(3):
        state = torch.get_rng_state()
        plain = plain_dense2(plain_dropout(plain_dense1(x), training=True))
        expected = _grads(plain.square().sum(), plain_dense1.trainable_weights + plain_dense2.trainable_weights)
        torch.set_rng_state(state)  # unseeded case: both networks see the same global draws
        out = recomputed(x)
        torch.testing.assert_close(out, plain, rtol=0, atol=0)
        _assert_all_close(_grads(out.square().sum(), dense1.trainable_weights + dense2.trainable_weights), expected)


def test_any_layer_owned_generator_is_replayed_not_only_dropout():
    # A custom noise layer with its own generator: the replay is generic, not special-cased by layer type.
    class Noise(tf.keras.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.generator = torch.Generator().manual_seed(11)

        def call(self, inputs):
            return inputs * torch.randn(inputs.shape, generator=self.generator)

    w = torch.randn(4, 4, requires_grad=True)
    plain_noise, remat_noise = Noise(), Noise()
    x = torch.randn(3, 4)
    expected = [_grads(torch.tanh(plain_noise(x @ w)).sum(), [w]) for _ in range(2)]
    recomputed = tf.recompute_grad(lambda v: torch.tanh(remat_noise(v @ w)))
    got = [_grads(recomputed(x).sum(), [w]) for _ in range(2)]
    _assert_all_close(got[0], expected[0])
    _assert_all_close(got[1], expected[1])
    assert not torch.allclose(got[0][0], got[1][0])  # the stream advanced between steps, as without remat
    torch.testing.assert_close(remat_noise.generator.get_state(), plain_noise.generator.get_state())


def test_inherited_training_flag_is_seen_again_by_the_recomputation():
    # The inner Sequential is called without `training`; it inherits True from the outer call. The
    # recomputation runs in backward, outside that call, and must still see training=True.
    class Outer(tf.keras.Model):
        def __init__(self, recompute):
            super().__init__()
            self.body = tf.keras.Sequential([tf.keras.layers.Dense(16), tf.keras.layers.Dropout(0.5, seed=3),
                                             tf.keras.layers.Dense(1)])
            self.run_body = tf.recompute_grad(self.body) if recompute else self.body

        def call(self, inputs, training=False):
            return self.run_body(inputs)

    plain, recomputing = Outer(False), Outer(True)
    x = torch.randn(8, 5)
    plain(x), recomputing(x)
    recomputing.set_weights(plain.get_weights())
    expected = _grads(plain(x, training=True).sum(), plain.trainable_weights)
    _assert_all_close(_grads(recomputing(x, training=True).sum(), recomputing.trainable_weights), expected)


def test_a_function_recomputed_inside_a_mixed_precision_layer_reads_weights_in_the_same_dtype():
    # Inside a mixed_bfloat16 layer's call the weights are read in bfloat16; the recomputation, run in
    # backward outside that call, must read them the same way (else the saved tensors' dtypes differ).
    class Outer(tf.keras.layers.Layer):
        def __init__(self, recompute, **kwargs):
            super().__init__(**kwargs)
            self.body = tf.recompute_grad(self._body) if recompute else self._body

        def build(self, input_shape):
            self.w = self.add_weight("w", (6, 4))

        def _body(self, inputs):
            return torch.tanh(inputs @ self.w)

        def call(self, inputs):
            return self.body(inputs)

    tf.keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        plain, recomputing = Outer(False), Outer(True)
    finally:
        tf.keras.mixed_precision.set_global_policy("float32")
    x = torch.randn(8, 6)
    plain(x), recomputing(x)
    recomputing.set_weights(plain.get_weights())
    out = recomputing(x)
    assert out.dtype == torch.bfloat16
    expected = _grads(plain(x).float().sum(), [plain.w])
    _assert_all_close(_grads(out.float().sum(), [recomputing.w]), expected)


def _saved_bytes(run) -> tuple[int, int]:
    """(every packed tensor's numel*element_size summed, the same over distinct non-parameter storages):
    the second is the activation memory autograd keeps (a kernel view or a tensor saved twice is free)."""
    packed: list[torch.Tensor] = []

    def pack(tensor):
        packed.append(tensor)
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        loss = run()
    params = {p.untyped_storage().data_ptr() for p in run.params}
    raw = sum(t.numel() * t.element_size() for t in packed)
    distinct: dict[int, int] = {}
    for t in packed:
        ptr = t.untyped_storage().data_ptr()
        if ptr not in params:
            distinct[ptr] = max(distinct.get(ptr, 0), t.numel() * t.element_size())
    loss.backward()
    return raw, sum(distinct.values())


def test_saved_activation_bytes_drop_at_least_3x_on_a_16_block_mlp():
    # 16 blocks of Dense(1024, relu) -> Dense(256), each block recomputed: only block inputs are kept.
    blocks = [tf.keras.Sequential([tf.keras.layers.Dense(1024, activation="relu"), tf.keras.layers.Dense(256)])
              for _ in range(16)]
    x = torch.randn(32, 256)
    for block in blocks:
        block(x)
    recomputed = [tf.recompute_grad(block) for block in blocks]

    def forward(chain):
        def run():
            h = x
            for block in chain:
                h = block(h)
            return h.square().mean()

        run.params = [p for block in blocks for p in block.trainable_weights]
        return run

    plain_raw, plain_activations = _saved_bytes(forward(blocks))
    remat_raw, remat_activations = _saved_bytes(forward(recomputed))
    assert remat_activations == 17 * 32 * 256 * 4  # exactly the 16 block inputs and the loss's input
    assert plain_activations / remat_activations >= 3.0, (plain_activations, remat_activations)
    assert plain_raw / remat_raw >= 3.0, (plain_raw, remat_raw)
    print(f'saved bytes plain {plain_raw}/{plain_activations}, remat {remat_raw}/{remat_activations}')


def test_no_gradient_recording_just_runs_the_function():
    runs = []
    recomputed = tf.recompute_grad(lambda v: runs.append(1) or v * 2)
    with torch.no_grad():
        assert torch.equal(recomputed(torch.ones(2)), torch.full((2,), 2.0))
    assert runs == [1]


@pytest.mark.parametrize("value", [3, None, torch.ones(2)])
def test_non_callable_is_a_clear_type_error(value):
    with pytest.raises(TypeError, match="recompute_grad expects a callable"):
        tf.recompute_grad(value)


# Two replicas (real processes, gloo) train two equal models, one recomputed through RematScope("full"),
# one not; both have a seeded Dropout. The chief writes both models' weights and forward-call counts.
DDP = r'''
import json, os, sys
import numpy as np, torch
import torchstrategy as tf

out = sys.argv[1]
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
rng = np.random.default_rng(0)
x = rng.standard_normal((64, 8)).astype(np.float32)
y = rng.standard_normal((64, 1)).astype(np.float32)

def make():
    return tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu", input_shape=(8,)),
                                tf.keras.layers.Dropout(0.3, seed=5), tf.keras.layers.Dense(32, activation="tanh"),
                                tf.keras.layers.Dense(1)])

with strategy.scope():
    plain = make()
    with tf.keras.RematScope(mode="full"):
        rematted = make()
    rematted.set_weights(plain.get_weights())
    initial = plain.get_weights()
    for model in (plain, rematted):
        model.compile(optimizer=tf.keras.optimizers.SGD(0.05), loss="mse")

calls = {}
for name, model in (("plain", plain), ("remat", rematted)):
    first = model.layers[0]
    calls[name] = 0
    def count(module, args, name=name):
        calls[name] += 1
    first.register_forward_pre_hook(count)
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(16)
    model.fit(dataset, epochs=2, verbose=0)
if strategy.extended.should_checkpoint:
    np.savez(os.path.join(out, "initial.npz"), *initial)
    np.savez(os.path.join(out, "plain.npz"), *plain.get_weights())
    np.savez(os.path.join(out, "remat.npz"), *rematted.get_weights())
    with open(os.path.join(out, "calls.json"), "w") as f:
        json.dump({"calls": calls, "replicas": strategy.num_replicas_in_sync}, f)
print("done", flush=True)
'''


@pytest.mark.slow
def test_two_replica_ddp_training_with_remat_equals_training_without(tmp_path):
    script = mp.write_script(tmp_path, DDP)
    result = mp.run_python([script, str(tmp_path)], timeout=240)
    assert result.returncode == 0, result.stdout + result.stderr
    report = mp.read_json(tmp_path / "calls.json")
    assert report["replicas"] == 2
    # the recomputed model ran its first layer again in every backward (and more: it is nested remat)
    assert report["calls"]["plain"] > 0
    assert report["calls"]["remat"] >= 2 * report["calls"]["plain"]
    initial, plain, remat = (np.load(tmp_path / f"{name}.npz") for name in ("initial", "plain", "remat"))
    assert len(plain.files) == len(remat.files) == 6
    for key in plain.files:
        np.testing.assert_allclose(remat[key], plain[key], rtol=1e-6, atol=1e-6)
    assert all(not np.allclose(plain[key], initial[key]) for key in plain.files)  # training moved every weight
