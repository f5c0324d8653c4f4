"""A ReLU before max pooling runs as pooling first: outputs and gradients must be exactly the plain order's."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.keras.layers import _mixed_fits
from torchstrategy._machinery import cpu_kernels as _cpu_kernels


def _layers(tf, kind):
    L = tf.keras.layers
    if kind == "conv_relu":  # the classic CIFAR CNN: Conv2D(activation='relu') -> MaxPooling2D
        return [L.Conv2D(8, 3, activation="relu"), L.MaxPooling2D(2), L.Conv2D(8, 3, activation="relu"),
                L.MaxPooling2D(2, padding="same"), L.Flatten(), L.Dense(3)]
    if kind == "bn_relu":  # Conv -> BatchNorm -> ReLU layer -> MaxPooling
        return [L.Conv2D(8, 3), L.BatchNormalization(), L.ReLU(), L.MaxPooling2D(2), L.Conv2D(4, 3),
                L.Activation("relu"), L.MaxPooling2D(3, strides=2), L.Flatten(), L.Dense(3)]
    return [L.Conv1D(4, 3, activation="relu"), L.MaxPooling1D(2), L.Flatten(), L.Dense(3)]


@pytest.mark.parametrize("kind", ["conv_relu", "bn_relu", "conv1d"])
def test_pooling_first_gives_the_plain_orders_outputs_and_gradients(kind):
    import torchstrategy as tf
    from torchstrategy.keras.layers import fusion

    tf.random.set_seed(1)
    shape = (11, 12) if kind == "conv1d" else (15, 15, 3)
    model = tf.keras.Sequential([tf.keras.Input(shape), *_layers(tf, kind)])
    layers = model.layers
    assert any(fusion.pools_before_relu(a, b) for a, b in zip(layers, layers[1:]))
    x = torch.from_numpy(np.random.default_rng(2).normal(size=(6, *shape)).astype(np.float32))

    def plain(inputs):  # layer by layer, never fused
        for layer in layers:
            inputs = layer(inputs, training=True)
        return inputs

    def torch_ops(inputs):  # layer by layer with torch's own pooling, not the C kernel
        with _cpu_kernels.torch_ops_only():
            return plain(inputs)

    outputs = {}
    for name, run in (("fused", lambda v: model(v, training=True)), ("plain", plain), ("torch ops", torch_ops)):
        model.zero_grad(set_to_none=True)
        out = run(x)
        out.square().sum().backward()
        outputs[name] = (out.detach(), [p.grad.clone() for p in model.parameters()])
    for name in ("plain", "torch ops"):
        assert torch.equal(outputs["fused"][0], outputs[name][0])
        for fused, reference in zip(outputs["fused"][1], outputs[name][1]):
            assert torch.equal(fused, reference)


def _grad_fn_names(tensor):
    seen, stack = set(), [tensor.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        stack.extend(next_node for next_node, _ in node.next_functions)
    return {type(node).__name__ for node in seen}


@pytest.mark.skipif(_cpu_kernels.library() is None, reason="no C compiler to build the kernels")
@pytest.mark.parametrize("policy", ["float32", "mixed_bfloat16"])
def test_the_classic_cnn_pools_with_the_c_kernel(policy):
    import torchstrategy as tf

    tf.keras.mixed_precision.set_global_policy(policy)
    try:
        model = tf.keras.Sequential([tf.keras.Input((15, 15, 3)), *_layers(tf, "conv_relu")])
        out = model(torch.randn(2, 15, 15, 3), training=True)
    finally:
        tf.keras.mixed_precision.set_global_policy("float32")
    names = _grad_fn_names(out)
    assert "_MaxPoolNHWCBackward" in names
    assert "MaxPool2DWithIndicesBackward0" not in names  # the 'same' pool over 6x6 tiles it too


@pytest.mark.skipif(_cpu_kernels.library() is None, reason="no C compiler to build the kernels")
@pytest.mark.parametrize("policy", ["float32", "mixed_bfloat16"])
def test_a_relu_layer_after_max_pooling_runs_inside_the_pooling_kernel(policy):
    """BatchNorm -> ReLU layer -> MaxPooling and Conv -> Activation('relu') -> MaxPooling: the pool's C kernel
    applies the ReLU (no separate ReLU pass either way), with the numbers of the ReLU layer called on the pool's
    output, gradients included."""
    import torchstrategy as tf

    tf.keras.mixed_precision.set_global_policy(policy)
    try:
        tf.random.set_seed(3)
        L = tf.keras.layers
        model = tf.keras.Sequential([tf.keras.Input((14, 14, 3)), L.Conv2D(8, 3, padding="same"),
                                     L.BatchNormalization(), L.ReLU(), L.MaxPooling2D(), L.Conv2D(4, 3),
                                     L.Activation("relu"), L.MaxPooling2D(), L.Flatten(), L.Dense(3)])
    finally:
        tf.keras.mixed_precision.set_global_policy("float32")
    layers = model.layers
    x = torch.from_numpy(np.random.default_rng(4).normal(size=(6, 14, 14, 3)).astype(np.float32))
    out = model(x, training=True)
    names = _grad_fn_names(out)
    assert "_MaxPoolNHWCBackward" in names and "ReluBackward0" not in names, names
    grads = torch.autograd.grad(out.float().square().sum(), list(model.parameters()))

    def plain(inputs):  # pool, then the ReLU layer called on its output
        for layer in layers:
            inputs = layer(inputs, training=True)
        return inputs

    reference = plain(x)
    assert out.dtype == reference.dtype and torch.equal(out, reference)
    for a, b in zip(grads, torch.autograd.grad(reference.float().square().sum(), list(model.parameters()))):
        assert torch.equal(a, b)


def test_a_relu_layer_that_adds_a_loss_or_casts_is_still_called():
    """A ReLU layer with an activity regularizer, or one computing in another dtype than the pool, is called
    on the pooled output (its loss is added; its output has its own dtype)."""
    import torchstrategy as tf
    from torchstrategy.keras.layers import fusion

    L = tf.keras.layers
    x = torch.randn(2, 6, 6, 3)
    regularized = L.ReLU(activity_regularizer="l2")
    model = tf.keras.Sequential([tf.keras.Input((6, 6, 3)), regularized, L.MaxPooling2D()])
    out = model(x)
    assert torch.equal(out, torch.relu(torch.nn.functional.max_pool2d(x.movedim(-1, 1), 2)).movedim(1, -1))
    assert len(model.losses) == 1
    float32_relu, pool = L.ReLU(dtype="float32"), L.MaxPooling2D(dtype="mixed_bfloat16")
    model = tf.keras.Sequential([tf.keras.Input((6, 6, 3)), float32_relu, pool])
    assert fusion.pools_before_relu(float32_relu, pool)
    assert model(x).dtype == torch.float32  # the ReLU layer's cast back to float32 still happens


def test_layers_that_observe_the_relu_output_are_not_reordered():
    import torchstrategy as tf
    from torchstrategy.keras.layers import fusion

    L = tf.keras.layers
    capped, hooked = L.ReLU(max_value=6.0), L.Conv2D(4, 3, activation="relu")
    hooked.register_forward_hook(lambda *args: None)
    regularized = L.Conv2D(4, 3, activation="relu", activity_regularizer="l2")
    assert not fusion.pools_before_relu(capped, L.MaxPooling2D())  # a cap makes ties the pool would see
    assert not fusion.pools_before_relu(hooked, L.MaxPooling2D())
    assert not fusion.pools_before_relu(regularized, L.MaxPooling2D())
    assert not fusion.pools_before_relu(L.Conv2D(4, 3, activation="relu"), L.AveragePooling2D(2))
    assert fusion.pools_before_relu(L.Conv2D(4, 3, activation="relu"), L.MaxPooling2D())


def test_functional_models_reorder_only_chains_nobody_else_reads():
    import torchstrategy as tf
    from torchstrategy.keras import functional

    L = tf.keras.layers
    tf.random.set_seed(3)
    inputs = tf.keras.Input((12, 12, 3))
    first = L.Conv2D(4, 3, activation="relu")(inputs)
    pooled = L.MaxPooling2D(2)(first)
    branch = L.Conv2D(4, 3, activation="relu")(inputs)  # read twice: must stay as it is
    both = L.Add()([L.MaxPooling2D(2)(branch), L.MaxPooling2D(2, padding="same")(branch)])
    outputs = L.Dense(2)(L.Flatten()(L.Concatenate()([pooled, both])))
    model = tf.keras.Model(inputs, outputs)
    pairs = functional.chained_pairs(model._nodes, model._outputs)
    named = [(model._nodes[a].layer.name, model._nodes[b].layer.name) for a, b in pairs.items()]
    assert (first.node.layer.name, pooled.node.layer.name) in named
    assert not any(model._nodes[a].layer is branch.node.layer for a in pairs)
    x = torch.from_numpy(np.random.default_rng(4).normal(size=(5, 12, 12, 3)).astype(np.float32))
    fused = model(x, training=True)
    fused.square().sum().backward()
    fused_grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad(set_to_none=True)
    plain = functional.run_graph(model._nodes, model._inputs, [x], model._outputs, True)  # no pairs
    plain.square().sum().backward()
    assert torch.equal(fused, plain)
    assert all(torch.equal(a, b.grad) for a, b in zip(fused_grads, model.parameters()))


def test_a_copied_functional_model_reorders_its_own_layers():
    import copy

    import torchstrategy as tf

    L = tf.keras.layers
    inputs = tf.keras.Input((10, 10, 2))
    outputs = L.Dense(2)(L.Flatten()(L.MaxPooling2D()(L.Conv2D(3, 3, activation="relu")(inputs))))
    model = tf.keras.Model(inputs, outputs)
    x = torch.from_numpy(np.random.default_rng(5).normal(size=(4, 10, 10, 2)).astype(np.float32))
    expected = model(x)  # fills the pair cache (node positions) before the copy
    twin = copy.deepcopy(model)
    with torch.no_grad():
        for weight in twin.weights:
            weight.mul_(2.0)
    assert torch.equal(model(x), expected)
    assert not torch.equal(twin(x), expected)  # the copy runs its own (changed) layers
    with torch.no_grad():
        for weight in twin.weights:
            weight.mul_(0.5)
    assert torch.equal(twin(x), expected)


def _cifar_like_cnn(tf):
    L = tf.keras.layers
    return tf.keras.Sequential([tf.keras.Input((18, 18, 3)), L.Conv2D(16, 3, activation="relu"), L.MaxPooling2D(),
                                L.Conv2D(16, 3, activation="relu"), L.MaxPooling2D(), L.Flatten(), L.Dense(4)])


@pytest.mark.skipif(_cpu_kernels.library() is None, reason="no C compiler to build the kernels")
def test_the_first_convolution_runs_fused_with_its_relu_and_pooling():
    import torchstrategy as tf

    tf.random.set_seed(3)
    model = _cifar_like_cnn(tf)
    x = torch.from_numpy(np.random.default_rng(4).random((5, 18, 18, 3), dtype=np.float32))
    assert "_ConvReluPoolNHWCBackward" in _grad_fn_names(model(x, training=True))
    results = []
    for context in (torch.enable_grad, _cpu_kernels.torch_ops_only):
        model.zero_grad(set_to_none=True)
        with context():
            out = model(x, training=True)
        out.square().sum().backward()
        results.append((out.detach(), [p.grad.clone() for p in model.parameters()]))
    (fused, fused_grads), (plain, plain_grads) = results
    assert torch.allclose(fused, plain, rtol=1e-5, atol=1e-6)
    for a, b in zip(fused_grads, plain_grads):
        assert torch.allclose(a, b, rtol=1e-5, atol=1e-5 * b.abs().max().item())


def _assert_fit_with_the_kernels_trains_to_torchs_weights(tf, build, x, y, seed):
    """fit (2 epochs of Adam, batch 16) with the kernels and with torch's ops only, from the same seed: the same
    losses (1e-5) and weights (1e-4)."""
    runs = []
    for context in (torch.enable_grad, _cpu_kernels.torch_ops_only):
        tf.random.set_seed(seed)
        model = build()
        model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        with context():
            history = model.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
        runs.append((history.history["loss"], model.get_weights()))
    (losses, fused), (plain_losses, plain) = runs
    assert np.allclose(losses, plain_losses, rtol=1e-5)
    for a, b in zip(fused, plain):
        assert np.allclose(a, b, rtol=1e-4, atol=1e-6)


@pytest.mark.skipif(_cpu_kernels.library() is None, reason="no C compiler to build the kernels")
def test_fit_with_the_kernels_trains_to_torchs_weights():
    import torchstrategy as tf

    rng = np.random.default_rng(5)
    x = rng.random((64, 18, 18, 3), dtype=np.float32)
    y = rng.integers(0, 4, (64,))
    _assert_fit_with_the_kernels_trains_to_torchs_weights(tf, lambda: _cifar_like_cnn(tf), x, y, seed=6)


@pytest.mark.skipif(_cpu_kernels.library() is None, reason="no C compiler to build the kernels")
def test_fit_of_the_one_conv_cnn_with_the_kernels_trains_to_torchs_weights():
    """Issue 25's one-conv CNN (64 filters: the gradient kernel's blocks of 32 channels), 8 Adam steps. (Adam divides
    by the gradient's own scale, so a kernel entry whose gradients nearly cancel can carry the reordered float32
    sums' last bits up to ~1e-4 relative: seen with other seeds, before and after the picked gradient loop alike.)"""
    import torchstrategy as tf

    rng = np.random.default_rng(1)
    x = rng.random((64, 14, 14, 3), dtype=np.float32)
    y = rng.integers(0, 10, (64,))
    L = tf.keras.layers
    _assert_fit_with_the_kernels_trains_to_torchs_weights(
        tf, lambda: tf.keras.Sequential([tf.keras.Input((14, 14, 3)), L.Conv2D(64, 3, activation="relu"),
                                         L.MaxPooling2D(), L.Flatten(), L.Dense(128, activation="relu"),
                                         L.Dense(10)]), x, y, seed=1)


@pytest.mark.skipif(_cpu_kernels.library() is None or not _cpu_kernels._bf16_dot_supported()
                    or _cpu_kernels._kernel_build.cpu_has_amx(), reason="no AVX512-BF16 (or AMX, where oneDNN runs)")
def test_mixed_bfloat16_fit_with_the_dot_product_kernel_trains_as_the_widened_one(monkeypatch):
    """The AVX512-BF16 first convolution against the float32 kernel on widened values (a CPU without the
    instructions): same bfloat16 convolution numbers, so the same losses and weights after 8 Adam steps."""
    import torchstrategy as tf

    rng = np.random.default_rng(7)
    x = rng.random((64, 18, 18, 3), dtype=np.float32)
    y = rng.integers(0, 4, (64,))

    def uses_the_kernel(model):
        assert "_ConvReluPoolNHWCBackward" in _grad_fn_names(model(x[:2], training=True))

    runs = _mixed_fits.fit_twice(
        tf, lambda: _cifar_like_cnn(tf), x, y, seed=8, check=uses_the_kernel,
        switch=lambda: monkeypatch.setattr(_cpu_kernels, "_bf16_dot_supported", lambda: False))  # widened
    _mixed_fits.assert_trained_alike(runs)
