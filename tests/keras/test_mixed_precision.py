"""tf.keras.mixed_precision: policies and the global policy, layers under mixed policies (float32
weights, compute-dtype outputs, float32 islands), float32 losses/metrics, LossScaleOptimizer in every
training style (checked against TF 2.21's numbers), fit under each policy, and 2 replicas = 1 process."""
from __future__ import annotations

import copy
import math

import numpy as np
import pytest
import torch

import torchstrategy as tf
from tests import _multiprocess as mp

mixed_precision = tf.keras.mixed_precision
layers = tf.keras.layers
MIXED = ["mixed_bfloat16", "mixed_float16"]
COMPUTE = {"mixed_bfloat16": torch.bfloat16, "mixed_float16": torch.float16}


@pytest.fixture(autouse=True)
def _reset_global_policy():
    mixed_precision.set_global_policy(None)
    yield
    mixed_precision.set_global_policy(None)


def _cifar_like(rows: int, size: int = 32, seed: int = 0) -> tuple:
    """Images in [0, 1] with labels a fixed linear map of the pixels can learn (10 classes)."""
    rng = np.random.default_rng(seed)
    x = rng.random((rows, size, size, 3)).astype(np.float32)
    projection = rng.normal(size=(size * size * 3, 10)).astype(np.float32)
    return x, (x.reshape(rows, -1) @ projection).argmax(-1).astype(np.int64)


def _seed_cnn() -> tf.keras.Model:
    return tf.keras.Sequential([layers.Conv2D(32, 3, activation="relu", input_shape=(32, 32, 3)),
                                layers.MaxPooling2D(), layers.Flatten(), layers.Dense(10)])


def _xent() -> tf.keras.losses.Loss:
    return tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)


# ----- policies ----------------------------------------------------------------------------------
# (compute_dtype, variable_dtype) as TF 2.21 reports them
KERAS_DTYPES = {"float32": ("float32", "float32"), "mixed_float16": ("float16", "float32"),
                "mixed_bfloat16": ("bfloat16", "float32"), "float16": ("float16", "float16"),
                "bfloat16": ("bfloat16", "bfloat16"), "float64": ("float64", "float64")}


@pytest.mark.parametrize("name", sorted(KERAS_DTYPES))
def test_policy_names_dtypes_repr_and_config_match_keras(name):
    policy = mixed_precision.Policy(name)
    assert (policy.compute_dtype, policy.variable_dtype) == KERAS_DTYPES[name]
    assert policy.name == name and repr(policy) == f'<DTypePolicy "{name}">'
    assert mixed_precision.Policy is mixed_precision.DTypePolicy
    again = mixed_precision.Policy.from_config(policy.get_config())
    assert again == policy and hash(again) == hash(policy)
    assert (again == mixed_precision.Policy("float32")) == (name == "float32")


def test_unknown_policy_name_lists_the_valid_ones():
    with pytest.raises(ValueError, match="Cannot convert 'mixed_float32'") as error:
        mixed_precision.Policy("mixed_float32")
    for name in ("float32", "mixed_float16", "mixed_bfloat16", "float16", "bfloat16", "float64"):
        assert f"'{name}'" in str(error.value)
    with pytest.raises(ValueError, match="Valid policies"):
        mixed_precision.set_global_policy("fp16")


def test_global_policy_defaults_to_float32_and_set_global_policy_takes_names_policies_and_none():
    assert mixed_precision.global_policy() == mixed_precision.Policy("float32")
    mixed_precision.set_global_policy("mixed_float16")
    assert repr(mixed_precision.global_policy()) == '<DTypePolicy "mixed_float16">'
    assert layers.Dense(2).dtype_policy.name == "mixed_float16"
    mixed_precision.set_dtype_policy(mixed_precision.Policy("mixed_bfloat16"))  # Keras 3 name
    assert mixed_precision.dtype_policy().name == "mixed_bfloat16"
    mixed_precision.set_global_policy(None)  # Keras 2: back to floatx
    assert mixed_precision.global_policy().name == "float32" and layers.Dense(2).compute_dtype == "float32"


def test_set_global_policy_refuses_integer_policies_and_other_types():
    with pytest.raises(ValueError, match="floating-point policies.*int32"):
        mixed_precision.set_global_policy("int32")
    with pytest.raises(ValueError, match="Invalid `policy` argument.*of type int"):
        mixed_precision.set_global_policy(5)
    assert mixed_precision.global_policy().name == "float32"


# ----- layers ------------------------------------------------------------------------------------
def _layer_cases() -> list:
    images = torch.rand(4, 8, 8, 3)
    return [
        (layers.Conv2D(4, 3), images), (layers.DepthwiseConv2D(3), images), (layers.Dense(5), torch.rand(4, 6)),
        (layers.BatchNormalization(), images), (layers.LayerNormalization(), images),
        (layers.Embedding(10, 4), torch.tensor([[1, 2, 3]])), (layers.Softmax(), torch.rand(4, 6)),
        (layers.Activation("relu"), images), (layers.Dropout(0.5), images), (layers.MaxPooling2D(), images),
        (layers.AveragePooling2D(2), images), (layers.GlobalAveragePooling2D(), images), (layers.Flatten(), images),
        (layers.Rescaling(0.5), images), (layers.Resizing(4, 4), images), (layers.Add(), [images, images]),
        (layers.Concatenate(), [images, images]), (layers.ZeroPadding2D(), images),
    ]


@pytest.mark.parametrize("policy", MIXED)
def test_layers_keep_float32_weights_and_output_the_compute_dtype(policy):
    mixed_precision.set_global_policy(policy)
    for layer, inputs in _layer_cases():
        outputs = layer(inputs, training=True)
        name = type(layer).__name__
        assert outputs.dtype == COMPUTE[policy], name
        assert all(w.dtype == torch.float32 for w in layer.weights), name
        assert (layer.dtype, layer.variable_dtype, layer.compute_dtype) == \
            ("float32", "float32", str(COMPUTE[policy]).replace("torch.", "")), name
    normalization = layers.Normalization()
    normalization.adapt(np.random.default_rng(0).random((16, 3)).astype(np.float32))
    assert normalization(torch.rand(2, 3)).dtype == COMPUTE[policy]
    assert all(w.dtype != COMPUTE[policy] for w in normalization.weights)


@pytest.mark.parametrize("policy", MIXED)
def test_a_float32_policy_layer_outputs_float32_inside_a_mixed_model(policy):
    mixed_precision.set_global_policy(policy)
    inputs = tf.keras.Input(shape=(6,))
    assert inputs.dtype == torch.float32  # an Input's dtype is floatx, not the policy's (Keras)
    hidden = layers.Dense(8, activation="relu")(inputs)
    logits = layers.Dense(3, dtype="float32")(hidden)
    probabilities = layers.Activation("softmax", dtype="float32")(logits)
    assert hidden.dtype == COMPUTE[policy] and logits.dtype == probabilities.dtype == torch.float32
    model = tf.keras.Model(inputs, probabilities)
    assert model.dtype_policy.name == policy
    out = model(torch.rand(5, 6))
    assert out.dtype == torch.float32 and torch.allclose(out.sum(-1), torch.ones(5))
    out.sum().backward()
    assert all(p.grad is not None and p.grad.dtype == torch.float32 for p in model.parameters())
    sequential = tf.keras.Sequential([layers.Dense(4, input_shape=(6,)), layers.Dense(2, dtype="float32")])
    assert sequential(torch.rand(2, 6)).dtype == torch.float32
    assert sequential.layers[0](torch.rand(2, 6)).dtype == COMPUTE[policy]


def test_dtype_accepts_policies_names_dtypes_and_keras_configs_and_round_trips():
    assert layers.Dense(2, dtype=mixed_precision.Policy("mixed_float16")).compute_dtype == "float16"
    assert layers.Dense(2, dtype=torch.float64).dtype == "float64"
    keras3_config = {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "mixed_bfloat16"},
                     "registered_name": None}
    dense = layers.Dense(2, dtype=keras3_config)
    assert dense.dtype_policy == mixed_precision.Policy("mixed_bfloat16")
    assert dense.get_config()["dtype"] == "mixed_bfloat16"
    clone = layers.Dense.from_config(dense.get_config())
    assert (clone.compute_dtype, clone.variable_dtype) == ("bfloat16", "float32")
    dense.dtype_policy = "float32"  # settable, as in Keras 3
    assert dense.compute_dtype == "float32"


def test_a_non_float_dtype_is_refused_by_computing_layers_and_kept_by_inputs():
    with pytest.raises(ValueError, match=r"Layer 'dense\w*' \(Dense\) computes in floating point.*'int32'"
                                         r".*'mixed_float16'"):
        layers.Dense(2, dtype="int32")
    with pytest.raises(ValueError, match="Cannot convert 'fp16'"):
        layers.Conv2D(2, 3, dtype="fp16")
    mixed_precision.set_global_policy("mixed_bfloat16")
    ids = tf.keras.Input(shape=(3,), dtype="int32")
    assert ids.dtype == torch.int32
    model = tf.keras.Model(ids, layers.Dense(2, dtype="float32")(layers.Flatten()(layers.Embedding(5, 4)(ids))))
    assert model(torch.tensor([[1, 2, 3]])).dtype == torch.float32


class _Scale(layers.Layer):
    """A user layer as in Keras's guide: one weight, `inputs * weight`, plus a child Dense it reads."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.child = layers.Dense(2, use_bias=False, kernel_initializer="ones")
        self.seen = {}

    def build(self, input_shape):
        self.w = self.add_weight("w", (input_shape[-1],), initializer="ones")
        with torch.no_grad():
            self.w.mul_(3.0)  # in-place initialisation must reach the weight itself

    def call(self, inputs):
        scaled = inputs * self.w
        out = self.child(scaled)
        self.seen = {"w": self.w.dtype, "scaled": scaled.dtype, "child_kernel": self.child.kernel.dtype}
        return out


@pytest.mark.parametrize("policy", MIXED)
def test_user_layers_read_their_weights_and_their_childrens_in_the_compute_dtype(policy):
    mixed_precision.set_global_policy(policy)
    outer = tf.keras.Sequential([_Scale()])  # _Scale and its child build lazily inside the model's call
    x = torch.tensor([[1.0, 2.0, 0.5]])
    out = outer(x)
    scale = outer.layers[0]
    compute = COMPUTE[policy]
    # TF 2.21: inside a mixed layer's call its own weights and those of layers it reads are in the compute dtype
    assert scale.seen == {"w": compute, "scaled": compute, "child_kernel": compute}
    assert out.dtype == compute and out.tolist() == [[10.5, 10.5]]
    assert scale.w.dtype == torch.float32 and scale.w.tolist() == [3.0, 3.0, 3.0]
    out.float().sum().backward()
    assert scale.w.grad.dtype == torch.float32 and scale.w.grad.tolist() == [2.0, 4.0, 1.0]


@pytest.mark.parametrize("policy", MIXED)
def test_batch_normalization_runs_its_statistics_in_float32(policy):
    x = torch.linspace(-300.0, 300.0, 64).reshape(8, 2, 2, 2)  # squares above float16's max (65504)
    reference = layers.BatchNormalization(momentum=0.5)  # float32, on the inputs as the mixed layer casts them
    expected = reference(x.to(COMPUTE[policy]).float(), training=True)
    mixed_precision.set_global_policy(policy)
    bn = layers.BatchNormalization(momentum=0.5)
    out = bn(x, training=True)
    assert out.dtype == COMPUTE[policy] and bool(torch.isfinite(out).all())
    assert torch.allclose(out.float(), expected, atol=2e-2, rtol=1e-2)
    assert bn.moving_variance.dtype == torch.float32
    assert torch.allclose(bn.moving_variance, reference.moving_variance, rtol=1e-5)
    assert torch.allclose(bn.moving_mean, reference.moving_mean, atol=1e-4)


# ----- losses and metrics -------------------------------------------------------------------------
def test_compiled_losses_and_metrics_are_computed_in_float32():
    mixed_precision.set_global_policy("mixed_bfloat16")
    x, y = _cifar_like(64, size=4)
    model = tf.keras.Sequential([layers.Flatten(input_shape=(4, 4, 3)), layers.Dense(10)])
    model.compile(optimizer="adam", loss=_xent(), metrics=["accuracy"])
    logits = model(torch.from_numpy(x))
    assert logits.dtype == torch.bfloat16
    logs = model.evaluate(x, y, batch_size=64, verbose=0, return_dict=True)
    # float32 loss of the bfloat16 logits (a bfloat16 loss would round to ~3 significant digits)
    expected = torch.nn.functional.cross_entropy(logits.float(), torch.from_numpy(y)).item()
    assert logs["loss"] == pytest.approx(expected, rel=1e-6)
    assert logs["accuracy"] == pytest.approx((logits.float().argmax(-1).numpy() == y).mean(), abs=1e-7)


# ----- compile and LossScaleOptimizer ---------------------------------------------------------------
def test_compile_wraps_the_optimizer_only_for_mixed_float16_models_as_keras_does():
    mixed_precision.set_global_policy("mixed_float16")
    model = tf.keras.Sequential([layers.Dense(2, input_shape=(3,))])
    model.compile(optimizer="adam", loss="mse")
    assert isinstance(model.optimizer, mixed_precision.LossScaleOptimizer)
    assert type(model.optimizer.inner_optimizer).__name__ == "Adam"
    assert model.optimizer.get_config()["initial_scale"] == 32768.0
    assert model.optimizer.get_config()["dynamic_growth_steps"] == 2000
    wrapped = mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())
    model.compile(optimizer=wrapped, loss="mse")
    assert model.optimizer is wrapped  # not wrapped twice
    mixed_precision.set_global_policy("mixed_bfloat16")
    bf16 = tf.keras.Sequential([layers.Dense(2, input_shape=(3,))])
    bf16.compile(optimizer="adam", loss="mse")
    assert type(bf16.optimizer).__name__ == "Adam"
    mixed_precision.set_global_policy(None)
    late = tf.keras.Sequential([layers.Dense(2, input_shape=(3,))])
    mixed_precision.set_global_policy("mixed_float16")
    late.compile(optimizer="adam", loss="mse")  # TF 2.21 decides by the model's policy: float32 here
    assert type(late.optimizer).__name__ == "Adam"


# One step per row: gradient of loss = sum(c * v) for v = [1, 2], SGD(0.1), dynamic_growth_steps=3.
# TF 2.21 (Keras 3): after each apply, (iterations, dynamic_scale, step_counter) and the weights.
GRADIENTS = [[1.0, 1.0], [math.inf, 1.0], [1.0, 1.0], [1.0, 1.0], [1.0, 1.0], [math.nan, 0.0], [4.0, 4.0]]
TF_STATES = [(1, 32768.0, 1), (1, 16384.0, 0), (2, 16384.0, 1), (3, 16384.0, 2), (4, 32768.0, 0),
             (4, 16384.0, 0), (5, 16384.0, 1)]
TF_WEIGHTS = [[0.9, 1.9], [0.9, 1.9], [0.8, 1.8], [0.7, 1.7], [0.6, 1.6], [0.6, 1.6], [0.2, 1.2]]


def _sgd_sequence(flow: str) -> list:
    v = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    opt = mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1), dynamic_growth_steps=3)
    if flow == "torch":
        opt.build([v])
    states = []
    for c in GRADIENTS:
        c = torch.tensor(c)
        if flow == "torch":
            opt.zero_grad()
            opt.scale_loss((c * v).sum()).backward()
            opt.step()
        else:
            with tf.GradientTape() as tape:
                loss = (c * v).sum()
                scaled = opt.scale_loss(loss) if flow == "keras3" else opt.get_scaled_loss(loss)
            grads = tape.gradient(scaled, [v])
            if flow == "keras2":
                grads = opt.get_unscaled_gradients(grads)
                assert torch.equal(grads[0], c) or not bool(torch.isfinite(c).all())
            opt.apply_gradients(zip(grads, [v]))
        states.append((int(opt.iterations), float(opt.dynamic_scale), int(opt.step_counter), v.tolist()))
    return states


@pytest.mark.parametrize("flow", ["keras3", "keras2", "torch"])
def test_dynamic_loss_scaling_matches_tf_in_every_training_style(flow):
    states = _sgd_sequence(flow)
    assert [s[:3] for s in states] == TF_STATES
    np.testing.assert_allclose([s[3] for s in states], TF_WEIGHTS, rtol=1e-6)


def test_a_skipped_step_leaves_weights_slots_and_iterations_unchanged():
    w = torch.nn.Parameter(torch.tensor([1.0, -1.0]))
    opt = mixed_precision.LossScaleOptimizer(tf.keras.optimizers.Adam(0.1, params=[w]))
    opt.scale_loss((w * torch.tensor([1.0, 2.0])).sum()).backward()
    opt.step()
    before = (w.detach().clone(), [t.clone() for t in opt.variables], int(opt.iterations))
    opt.zero_grad()
    opt.scale_loss((w * torch.tensor([math.inf, 2.0])).sum()).backward()
    opt.step()
    assert torch.equal(w.detach(), before[0]) and int(opt.iterations) == before[2] == 1
    assert float(opt.dynamic_scale) == 16384.0 and int(opt.step_counter) == 0
    inner = opt.variables[2:]  # Adam's iterations and slots
    assert all(torch.equal(a, b) for a, b in zip(inner, before[1][2:]))
    opt.zero_grad()
    opt.scale_loss((w * torch.tensor([1.0, 2.0])).sum()).backward()
    assert float(w.grad[1]) == 2.0 * 16384.0  # the next loss is scaled by the halved scale
    opt.step()
    assert int(opt.iterations) == 2 and not torch.equal(w.detach(), before[0])


def test_gradients_of_an_unscaled_loss_are_applied_as_they_are():
    w = torch.nn.Parameter(torch.tensor([1.0]))
    opt = mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.5, params=[w]))
    (w * 2.0).sum().backward()  # no scale_loss: nothing to divide
    opt.step()
    assert w.item() == 0.0
    grads = [torch.tensor([1.0])]
    opt.apply_gradients(zip(grads, [w]))
    assert w.item() == -0.5 and grads[0].item() == 1.0  # the caller's gradient is not modified


def test_growth_doubles_the_scale_after_dynamic_growth_steps_finite_steps():
    w = torch.nn.Parameter(torch.zeros(3))
    opt = mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(1e-3, params=[w]), initial_scale=4.0,
                                             dynamic_growth_steps=2)
    scales = []
    for _ in range(6):
        opt.zero_grad()
        opt.scale_loss(w.sum()).backward()
        opt.step()
        scales.append(float(opt.dynamic_scale))
    assert scales == [4.0, 8.0, 8.0, 16.0, 16.0, 32.0]
    np.testing.assert_allclose(w.detach().numpy(), [-6e-3] * 3, rtol=1e-6)  # every step unscaled exactly


def test_fixed_loss_scale_keras2_dynamic_false():
    w = torch.nn.Parameter(torch.zeros(1))
    opt = mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(1.0, params=[w]), dynamic=False,
                                             initial_scale=128.0)
    for _ in range(3):
        opt.zero_grad()
        opt.scale_loss(w.sum()).backward()
        opt.step()
    assert float(opt.loss_scale) == 128.0 and w.item() == -3.0 and opt.get_config()["dynamic"] is False
    opt.zero_grad()
    opt.scale_loss(w.sum() * math.inf).backward()
    opt.step()  # Keras 2's fixed scale applies even a non-finite step
    assert int(opt.iterations) == 4 and math.isinf(w.item()) and float(opt.loss_scale) == 128.0


def test_learning_rate_iterations_config_and_state_round_trip():
    inner = tf.keras.optimizers.Adam(0.01)
    opt = mixed_precision.LossScaleOptimizer(inner, initial_scale=1024.0, dynamic_growth_steps=5)
    assert opt.iterations is inner.iterations and opt.name == "loss_scale_optimizer"
    opt.learning_rate = 0.05
    assert float(inner.learning_rate) == float(opt.lr) == 0.05
    w = torch.nn.Parameter(torch.ones(2))
    for factor in (1.0, math.inf, 1.0):
        opt.apply_gradients([(torch.full((2,), factor), w)])
    state = copy.deepcopy(opt.state_dict())  # as a checkpoint file would hold it (torch's shares tensors)
    config = tf.keras.optimizers.serialize(opt)
    assert config["class_name"] == "LossScaleOptimizer"
    assert config["config"]["inner_optimizer"]["class_name"] == "Adam"
    restored = tf.keras.optimizers.deserialize(config)
    assert isinstance(restored, mixed_precision.LossScaleOptimizer)
    assert (restored.initial_scale, restored.dynamic_growth_steps) == (1024.0, 5)
    assert float(restored.learning_rate) == pytest.approx(0.05)
    twin = torch.nn.Parameter(w.detach().clone())
    restored.build([twin])
    restored.load_state_dict(state)
    assert (int(restored.iterations), float(restored.dynamic_scale), int(restored.step_counter)) == (2, 512.0, 1)
    for optimizer, weight in ((opt, w), (restored, twin)):
        optimizer.apply_gradients([(torch.full((2,), 3.0), weight)])
    assert torch.equal(w.detach(), twin.detach())  # same Adam slots and scale after the restore
    assert restored.param_groups is restored.inner_optimizer.param_groups  # one copy, also after the restore
    restored.learning_rate = 0.5
    assert restored.param_groups[0]["lr"] == 0.5


def test_a_saved_mixed_float16_model_loads_with_its_policies_and_loss_scale(tmp_path):
    mixed_precision.set_global_policy("mixed_float16")
    x, y = _cifar_like(32, size=4)
    model = tf.keras.Sequential([layers.Flatten(input_shape=(4, 4, 3)), layers.Dense(10, dtype="float32")])
    model.compile(optimizer=mixed_precision.LossScaleOptimizer(tf.keras.optimizers.Adam(), initial_scale=256.0),
                  loss=_xent())
    model.fit(x, y, batch_size=16, epochs=1, verbose=0)
    model.save(str(tmp_path / "model.keras"))
    mixed_precision.set_global_policy(None)
    loaded = tf.keras.models.load_model(str(tmp_path / "model.keras"))
    assert [layer.dtype_policy.name for layer in loaded.layers] == ["mixed_float16", "float32"]
    assert isinstance(loaded.optimizer, mixed_precision.LossScaleOptimizer)
    assert (loaded.optimizer.initial_scale, int(loaded.optimizer.iterations)) == (256.0, 2)
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))


def test_bad_arguments_say_what_to_pass():
    with pytest.raises(TypeError, match="wraps a Keras optimizer.*got str 'adam'.*optimizers.get"):
        mixed_precision.LossScaleOptimizer("adam")
    with pytest.raises(TypeError, match="wraps a Keras optimizer.*got SGD"):
        mixed_precision.LossScaleOptimizer(torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=0.1))
    with pytest.raises(TypeError, match="cannot wrap another LossScaleOptimizer"):
        mixed_precision.LossScaleOptimizer(mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD()))
    with pytest.raises(ValueError, match="does not support `clipnorm`.*inner_optimizer"):
        mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(), clipnorm=1.0)
    with pytest.raises(ValueError, match="initial_scale"):
        mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(), initial_scale=0.0)
    with pytest.raises(ValueError, match="dynamic_growth_steps"):
        mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(), dynamic_growth_steps=0)


# ----- fit -------------------------------------------------------------------------------------------
def test_fit_under_mixed_policies_tracks_the_float32_loss():
    x, y = _cifar_like(128)  # float16 convolution gradients are slow on CPU: keep it small
    final = {}
    for policy in ["float32"] + MIXED:
        mixed_precision.set_global_policy(policy)
        tf.random.set_seed(0)
        model = _seed_cnn()
        model.compile(optimizer="adam", loss=_xent())
        history = model.fit(x, y, batch_size=32, epochs=2, shuffle=False, verbose=0)
        final[policy] = history.history["loss"][-1]
        assert all(w.dtype == torch.float32 for w in model.weights), policy
        assert isinstance(model.optimizer, mixed_precision.LossScaleOptimizer) == (policy == "mixed_float16")
    assert final["float32"] < 2.2  # it learned something in 2 epochs
    for policy in MIXED:
        assert final[policy] == pytest.approx(final["float32"], rel=0.02), (policy, final)


def _small_fp16_model() -> tf.keras.Model:
    return tf.keras.Sequential([layers.Conv2D(4, 3, activation="relu", input_shape=(8, 8, 3)), layers.Flatten(),
                                layers.Dense(10, dtype="float32")])


def test_fit_float16_skips_a_non_finite_batch_and_halves_the_scale():
    x, y = _cifar_like(64, size=8)
    x[40, 0, 0, 0] = np.inf  # lands in the second of two batches of 32
    mixed_precision.set_global_policy("mixed_float16")
    tf.random.set_seed(0)
    model = _small_fp16_model()
    initial = model.get_weights()
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss=_xent())
    model.fit(x, y, batch_size=32, epochs=1, shuffle=False, verbose=0)
    reference = _small_fp16_model()  # trained on the first batch only
    reference.set_weights(initial)
    reference.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss=_xent())
    reference.fit(x[:32], y[:32], batch_size=32, epochs=1, shuffle=False, verbose=0)
    for ours, expected in zip(model.get_weights(), reference.get_weights()):
        np.testing.assert_array_equal(ours, expected)
    assert int(model.optimizer.iterations) == 1  # Keras counts applied steps only
    assert float(model.optimizer.dynamic_scale) == 16384.0 and float(reference.optimizer.dynamic_scale) == 32768.0


def test_fit_float16_scales_the_loss_before_backward():
    """Needs the trainer to back-propagate `optimizer.scale_loss(loss)` (Keras's train step does)."""
    x, y = _cifar_like(32, size=8)
    mixed_precision.set_global_policy("mixed_float16")
    tf.random.set_seed(0)
    model = _small_fp16_model()
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss=_xent())
    model.build((None, 8, 8, 3))
    kernel = model.layers[-1].kernel
    before = kernel.detach().clone()
    seen = []
    kernel.register_hook(lambda grad: seen.append(grad.detach().clone()))
    model.fit(x, y, batch_size=32, epochs=1, verbose=0)
    applied = (before - kernel.detach()) / 0.1  # the unscaled gradient SGD applied
    assert len(seen) == 1 and float(applied.abs().max()) > 0
    # the float32 weight difference rounds at ~1e-8 of the unscaled gradient: compare unscaled
    torch.testing.assert_close(seen[0] / 32768.0, applied, rtol=1e-3, atol=1e-6)


def test_one_device_strategy_custom_loop_matches_the_default_strategy_under_mixed_float16():
    x, y = _cifar_like(32, size=8)
    x[3, 0, 0, 0] = np.nan  # the first of two batches is skipped

    def train(strategy):
        mixed_precision.set_global_policy("mixed_float16")
        tf.random.set_seed(0)
        with strategy.scope():
            model = _small_fp16_model()
            opt = mixed_precision.LossScaleOptimizer(tf.keras.optimizers.Adam(1e-2))
        loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

        def step(images, labels):
            with tf.GradientTape() as tape:
                scaled = opt.scale_loss(loss_object(labels, model(images, training=True)))
            opt.apply_gradients(zip(tape.gradient(scaled, model.trainable_variables), model.trainable_variables))

        for start in (0, 16):
            batch = (torch.from_numpy(x[start:start + 16]), torch.from_numpy(y[start:start + 16]))
            strategy.run(step, args=batch)
        return model.get_weights(), int(opt.iterations), float(opt.dynamic_scale)

    reference = train(tf.distribute.get_strategy())
    one_device = train(tf.distribute.OneDeviceStrategy("/cpu:0"))
    assert reference[1:] == one_device[1:] == (1, 16384.0)
    for ours, expected in zip(one_device[0], reference[0]):
        np.testing.assert_array_equal(ours, expected)


class _Crash(Exception):
    pass


class _CrashAfter(tf.keras.callbacks.Callback):
    def __init__(self, batches: int) -> None:
        super().__init__()
        self.left = batches

    def on_train_batch_end(self, batch, logs=None):
        self.left -= 1
        if self.left == 0:
            raise _Crash()


@pytest.mark.filterwarnings("ignore:Taking over the stale lock")  # the crashed fit() never released it
def test_backup_and_restore_resumes_the_loss_scale_and_its_counter(tmp_path):
    x, y = _cifar_like(64, size=8)
    x[20, 0, 0, 0] = np.inf  # batch 1 of every epoch is skipped: the scale halves once per epoch

    def build():
        mixed_precision.set_global_policy("mixed_float16")
        tf.random.set_seed(0)
        model = _small_fp16_model()
        model.compile(optimizer=mixed_precision.LossScaleOptimizer(tf.keras.optimizers.Adam(1e-2),
                                                                   dynamic_growth_steps=2), loss=_xent())
        return model

    def state(model):
        opt = model.optimizer
        return int(opt.iterations), float(opt.dynamic_scale), int(opt.step_counter)

    model = build()
    model.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0)
    reference, reference_state = model.get_weights(), state(model)
    assert reference_state[0] == 9  # 12 steps, 3 skipped
    backup = tf.keras.callbacks.BackupAndRestore(str(tmp_path / "backup"), save_freq=1)
    with pytest.raises(_Crash):
        build().fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0, callbacks=[backup, _CrashAfter(7)])
    model = build()
    model.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0,
              callbacks=[tf.keras.callbacks.BackupAndRestore(str(tmp_path / "backup"), save_freq=1)])
    assert state(model) == reference_state
    for ours, expected in zip(model.get_weights(), reference):
        np.testing.assert_array_equal(ours, expected)


# ----- 2 replicas -------------------------------------------------------------------------------------
# argv: output folder, replica count. The same fit and custom loop under mixed_float16, with an inf in
# sample 0, which only replica 0's half of the first global batch holds: every replica must skip it.
TWO_REPLICAS = r'''
import json, os, sys
import numpy as np, torch
import torchstrategy as tf

out, replicas = sys.argv[1], int(sys.argv[2])
strategy = tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(replicas)])
tf.keras.mixed_precision.set_global_policy("mixed_float16")
rng = np.random.default_rng(0)
n = 128
x = rng.random((n, 8, 8, 3)).astype(np.float32)
y = (x.reshape(n, -1) @ rng.normal(size=(192, 10))).argmax(-1).astype(np.int64)
x[0, 0, 0, 0] = np.inf
layers = tf.keras.layers

def make():
    tf.random.set_seed(0)
    with strategy.scope():
        model = tf.keras.Sequential([layers.Conv2D(8, 3, activation="relu", input_shape=(8, 8, 3)),
                                     layers.Flatten(), layers.Dense(10, dtype="float32")])
        model.compile(optimizer=tf.keras.optimizers.Adam(1e-2),
                      loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model

dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(32)
report = {}
model = make()
history = model.fit(dataset, epochs=2, verbose=0)
opt = model.optimizer
report["fit"] = {"loss": history.history["loss"], "iterations": int(opt.iterations),
                 "scale": float(opt.dynamic_scale), "counter": int(opt.step_counter),
                 "weights": [w.tolist() for w in model.get_weights()]}

model = make()
opt = model.optimizer
loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction=tf.keras.losses.Reduction.NONE)

def step(inputs):
    images, labels = inputs
    with tf.GradientTape() as tape:
        loss = tf.nn.compute_average_loss(loss_object(labels, model(images, training=True)), global_batch_size=32)
        scaled = opt.scale_loss(loss)
    grads = tape.gradient(scaled, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
    return loss.detach()

losses = []
for epoch in range(2):
    for batch in strategy.experimental_distribute_dataset(dataset):
        losses.append(float(strategy.reduce(tf.distribute.ReduceOp.SUM, strategy.run(step, args=(batch,)), axis=None)))
report["custom"] = {"loss": losses, "iterations": int(opt.iterations), "scale": float(opt.dynamic_scale),
                    "counter": int(opt.step_counter), "weights": [w.tolist() for w in model.get_weights()]}
rank = strategy.run(lambda: tf.distribute.get_replica_context().replica_id_in_sync_group)
with open(os.path.join(out, f"rank_{rank}.json"), "w") as f:
    json.dump(report, f)
'''


def _run_replicas(tmp_path, replicas: int) -> list:
    return mp.run_replica_reports(tmp_path, TWO_REPLICAS, replicas, report="rank_{rank}.json")


@pytest.mark.slow
def test_two_replicas_match_one_process_and_skip_the_same_steps_under_mixed_float16(tmp_path):
    (reference,) = _run_replicas(tmp_path, 1)
    ranks = _run_replicas(tmp_path, 2)
    for mode in ("fit", "custom"):
        expected = reference[mode]
        # 8 steps; the batch with the inf comes once per epoch, so 2 are skipped and the scale halves twice
        assert expected["iterations"] == 6 and expected["scale"] == 8192.0
        for rank in ranks:
            got = rank[mode]
            assert (got["iterations"], got["scale"], got["counter"]) == \
                (expected["iterations"], expected["scale"], expected["counter"]), mode
            for ours, theirs in zip(got["weights"], expected["weights"]):
                np.testing.assert_allclose(ours, theirs, rtol=1e-3, atol=1e-3)
            np.testing.assert_allclose(got["loss"], expected["loss"], rtol=1e-3)  # NaN where the inf batch was
        assert ranks[0][mode]["weights"] == ranks[1][mode]["weights"]  # replicas stay identical


def test_loss_scale_optimizer_is_also_under_keras_optimizers():
    import torchstrategy as tf

    assert tf.keras.optimizers.LossScaleOptimizer is tf.keras.mixed_precision.LossScaleOptimizer
    with pytest.raises(AttributeError, match="no attribute 'NoSuchOptimizer'"):
        tf.keras.optimizers.NoSuchOptimizer
