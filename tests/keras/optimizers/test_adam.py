"""Adam and AdamW through torch's fused CPU kernel: Keras's numbers whatever the memory layout of the
gradients (the kernel walks raw memory), and the multi-tensor form where the fused kernel cannot apply."""
import math

import numpy as np
import pytest
import torch

import torchstrategy as tf
from torchstrategy.keras import optimizers

KERNEL = (3, 3, 3, 8)  # a Conv2D kernel in Keras's (h, w, in, out) layout
STEPS = 4


def _reference_adam(weights, grads_seq, lr, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False, weight_decay=0.0):
    """Keras's Adam/AdamW rule in float64 NumPy."""
    w, m, v, v_hat = weights.copy(), 0.0, 0.0, 0.0
    for t, g in enumerate(grads_seq, start=1):
        w = w - w * weight_decay * lr
        m = m + (g - m) * (1 - beta_1)
        v = v + (g * g - v) * (1 - beta_2)
        v_hat = np.maximum(v_hat, v) if amsgrad else v
        w = w - lr * math.sqrt(1 - beta_2**t) / (1 - beta_1**t) * m / (np.sqrt(v_hat) + epsilon)
    return w


def _transposed_layout(array: np.ndarray) -> torch.Tensor:
    """`array` as a tensor of the same shape whose memory is laid out as (out, in, h, w), the layout of a
    tape's gradient through `kernel.permute(3, 2, 0, 1)` (what Conv2D hands to F.conv2d)."""
    return torch.tensor(np.ascontiguousarray(array.transpose(3, 2, 0, 1))).permute(2, 3, 1, 0)


@pytest.mark.parametrize("make,hyper", [
    (optimizers.Adam, {}),
    (optimizers.Adam, {"amsgrad": True, "beta_1": 0.8}),
    (optimizers.AdamW, {"weight_decay": 0.1}),
])
def test_gradients_laid_out_unlike_their_variable_get_keras_numbers(make, hyper):
    # fe371f4's bug: the fused kernel paired element i of the gradient's memory with element i of the
    # variable's, so a transposed-layout gradient (a custom loop's tape through Conv2D) updated the wrong weights
    rng = np.random.default_rng(0)
    weights = rng.normal(size=KERNEL)
    grads_seq = [rng.normal(size=KERNEL) for _ in range(STEPS)]
    variable = torch.nn.Parameter(torch.tensor(weights))
    optimizer = make(learning_rate=0.05, **hyper)
    for g in grads_seq:
        grad = _transposed_layout(g)
        assert grad.stride() != variable.stride()
        optimizer.apply_gradients([(grad, variable)])
    expected = _reference_adam(weights, grads_seq, 0.05, **hyper)
    np.testing.assert_allclose(variable.detach().numpy(), expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(grad.numpy(), grads_seq[-1])  # the caller's gradient is left as it was


def test_a_custom_loop_on_a_conv_model_matches_backward_and_step():
    # the tape's kernel gradient keeps the permuted view's layout; backward() into .grad gets the variable's
    rng = np.random.default_rng(1)
    x = torch.tensor(rng.random((16, 6, 6, 3)), dtype=torch.float32)
    y = torch.tensor(rng.integers(0, 4, size=16))
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def make():
        tf.random.set_seed(0)
        model = tf.keras.Sequential([tf.keras.layers.Conv2D(8, 3, input_shape=(6, 6, 3)), tf.keras.layers.Flatten(),
                                     tf.keras.layers.Dense(4)])
        return model, optimizers.Adam(1e-2)

    tape_model, tape_opt = make()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profile:
        for _ in range(STEPS):
            with tf.GradientTape() as tape:
                loss = loss_fn(y, tape_model(x, training=True))
            grads = tape.gradient(loss, tape_model.trainable_variables)
            tape_opt.apply_gradients(zip(grads, tape_model.trainable_variables))
    assert "aten::_fused_adam_" in {event.name for event in profile.events()}
    kernel = tape_model.trainable_variables[0]
    assert grads[0].stride() != kernel.stride()  # the case under test really arises

    torch_model, torch_opt = make()
    torch_opt.build(torch_model.trainable_variables)
    for _ in range(STEPS):
        torch_opt.zero_grad()
        loss_fn(y, torch_model(x, training=True)).backward()
        torch_opt.step()
    for ours, theirs in zip(tape_model.get_weights(), torch_model.get_weights()):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-7)


def test_the_fused_kernel_runs_for_dense_cpu_variables():
    variable = torch.nn.Parameter(torch.ones(KERNEL))
    optimizer = optimizers.Adam(0.1)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profile:
        optimizer.apply_gradients([(_transposed_layout(np.ones(KERNEL)), variable)])
    assert "aten::_fused_adam_" in {event.name for event in profile.events()}


def test_a_variable_with_gaps_in_memory_takes_the_multi_tensor_form():
    rng = np.random.default_rng(2)
    original = rng.normal(size=(4, 6))
    storage = torch.tensor(original)
    variable = torch.nn.Parameter(storage[:, :3])  # a view with gaps: the fused kernel cannot walk it
    assert not variable.is_contiguous()
    weights = variable.detach().numpy().copy()
    grads_seq = [rng.normal(size=(4, 3)) for _ in range(STEPS)]
    optimizer = optimizers.Adam(0.05)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profile:
        for g in grads_seq:
            optimizer.apply_gradients([(torch.tensor(g), variable)])
    assert "aten::_fused_adam_" not in {event.name for event in profile.events()}
    np.testing.assert_allclose(variable.detach().numpy(), _reference_adam(weights, grads_seq, 0.05), rtol=1e-10)
    np.testing.assert_array_equal(storage[:, 3:].numpy(), original[:, 3:])  # the gaps are left alone


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_variables_keep_the_multi_tensor_form(dtype):
    # the multi-tensor form computes in the variable's dtype as Keras does; the fused kernel's float32
    # arithmetic moved float16 weights further from TF 2.21's (up to 8.0 vs 2.3 where tiny gradients
    # underflow g^2), so half-precision variables are never handed to it
    variable = torch.nn.Parameter(torch.ones(KERNEL, dtype=dtype))
    before = variable.detach().clone()
    optimizer = optimizers.Adam(0.1)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profile:
        optimizer.apply_gradients([(torch.full(KERNEL, 0.5, dtype=dtype), variable)])
    assert "aten::_fused_adam_" not in {event.name for event in profile.events()}
    assert variable.dtype == dtype and bool((variable.detach() < before).all())  # a step was taken, in place

