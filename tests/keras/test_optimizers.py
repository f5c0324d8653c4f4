"""Keras optimizers' numbers: update formulas against NumPy re-implementations of Keras's rules (CPU and
CUDA), clipping, decoupled weight decay, and schedules driving the per-step learning rate."""
import math

import numpy as np
import pytest
import torch

from torchstrategy.keras import optimizers
from torchstrategy.keras.optimizers import schedules

SHAPES = [(3, 4), (5,)]
STEPS = 6


def _grad_sequence(scale=1.0, seed=0):
    rng = np.random.default_rng(seed)
    return [[rng.normal(size=shape) * scale for shape in SHAPES] for _ in range(STEPS)]


def _initial_weights(seed=1):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=shape) for shape in SHAPES]


# ----- NumPy references, written from Keras's documented update rules ----------------------------------
def ref_sgd(w, g, s, lr, t, momentum=0.0, nesterov=False):
    if momentum == 0:
        return w - lr * g
    s["m"] = momentum * s.get("m", 0.0) - lr * g
    return w + (momentum * s["m"] - lr * g if nesterov else s["m"])


def ref_adam(w, g, s, lr, t, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False):
    s["m"] = s.get("m", 0.0) + (g - s.get("m", 0.0)) * (1 - beta_1)
    s["v"] = s.get("v", 0.0) + (g * g - s.get("v", 0.0)) * (1 - beta_2)
    v = s["v"]
    if amsgrad:
        s["vhat"] = v = np.maximum(s.get("vhat", 0.0), v)
    alpha = lr * math.sqrt(1 - beta_2**t) / (1 - beta_1**t)
    return w - alpha * s["m"] / (np.sqrt(v) + epsilon)


def ref_rmsprop(w, g, s, lr, t, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False):
    s["v"] = rho * s.get("v", 0.0) + (1 - rho) * g * g
    if centered:
        s["a"] = rho * s.get("a", 0.0) + (1 - rho) * g
        increment = lr * g / np.sqrt(s["v"] - s["a"] ** 2 + epsilon)
    else:
        increment = lr * g / np.sqrt(s["v"] + epsilon)
    if momentum > 0:
        s["mom"] = momentum * s.get("mom", 0.0) + increment
        return w - s["mom"]
    return w - increment


def ref_adagrad(w, g, s, lr, t, initial_accumulator_value=0.1, epsilon=1e-7):
    s["acc"] = s.get("acc", initial_accumulator_value) + g * g
    return w - lr * g / np.sqrt(s["acc"] + epsilon)


def ref_adadelta(w, g, s, lr, t, rho=0.95, epsilon=1e-7):
    s["ag"] = rho * s.get("ag", 0.0) + (1 - rho) * g * g
    delta = -np.sqrt(s.get("ad", 0.0) + epsilon) / np.sqrt(s["ag"] + epsilon) * g
    s["ad"] = rho * s.get("ad", 0.0) + (1 - rho) * delta * delta
    return w + lr * delta


def ref_adamax(w, g, s, lr, t, beta_1=0.9, beta_2=0.999, epsilon=1e-7):
    s["m"] = beta_1 * s.get("m", 0.0) + (1 - beta_1) * g
    s["u"] = np.maximum(beta_2 * s.get("u", 0.0), np.abs(g))
    return w - lr / (1 - beta_1**t) * s["m"] / (s["u"] + epsilon)


def ref_nadam(w, g, s, lr, t, beta_1=0.9, beta_2=0.999, epsilon=1e-7):
    u = lambda i: beta_1 * (1 - 0.5 * 0.96**i)  # noqa: E731
    product = np.prod([u(i) for i in range(1, t + 1)])
    s["m"] = beta_1 * s.get("m", 0.0) + (1 - beta_1) * g
    s["v"] = beta_2 * s.get("v", 0.0) + (1 - beta_2) * g * g
    m_hat = u(t + 1) * s["m"] / (1 - product * u(t + 1)) + (1 - u(t)) * g / (1 - product)
    v_hat = s["v"] / (1 - beta_2**t)
    return w - lr * m_hat / (np.sqrt(v_hat) + epsilon)


def run_reference(rule, grads_seq, lr_at=lambda t: 0.01, weight_decay=None, clip=None, decay_mask=None, **hyper):
    weights = _initial_weights()
    states = [{} for _ in weights]
    for step, grads in enumerate(grads_seq):
        lr = lr_at(step)
        grads = clip(grads) if clip else grads
        if weight_decay:
            mask = decay_mask or [True] * len(weights)
            weights = [w - w * weight_decay * lr if use else w for w, use in zip(weights, mask)]
        weights = [rule(w, g, s, lr, step + 1, **hyper) for w, g, s in zip(weights, grads, states)]
    return weights


def run_optimizer(optimizer, grads_seq, dtype=torch.float64, through_apply=False):
    params = [torch.nn.Parameter(torch.tensor(w, dtype=dtype)) for w in _initial_weights()]
    for grads in grads_seq:
        tensors = [torch.tensor(g, dtype=dtype) for g in grads]
        if through_apply:
            optimizer.apply_gradients(zip(tensors, params))
        else:
            optimizer.build(params)
            for param, grad in zip(params, tensors):
                param.grad = grad
            optimizer.step()
    return [p.detach().numpy() for p in params], params


CASES = [
    (optimizers.SGD, ref_sgd, {}),
    (optimizers.SGD, ref_sgd, {"momentum": 0.9}),
    (optimizers.SGD, ref_sgd, {"momentum": 0.8, "nesterov": True}),
    (optimizers.Adam, ref_adam, {}),
    (optimizers.Adam, ref_adam, {"amsgrad": True, "beta_1": 0.8, "epsilon": 1e-3}),
    (optimizers.RMSprop, ref_rmsprop, {}),
    (optimizers.RMSprop, ref_rmsprop, {"centered": True}),
    (optimizers.RMSprop, ref_rmsprop, {"momentum": 0.7}),
    (optimizers.RMSprop, ref_rmsprop, {"centered": True, "momentum": 0.5, "rho": 0.8}),
    (optimizers.Adagrad, ref_adagrad, {}),
    (optimizers.Adagrad, ref_adagrad, {"initial_accumulator_value": 0.5}),
    (optimizers.Adadelta, ref_adadelta, {}),
    (optimizers.Adamax, ref_adamax, {}),
    (optimizers.Nadam, ref_nadam, {}),
]


@pytest.mark.parametrize("cls,rule,hyper", CASES, ids=lambda x: getattr(x, "__name__", str(x)))
@pytest.mark.parametrize("through_apply", [False, True])
def test_updates_match_keras_formulas(cls, rule, hyper, through_apply):
    grads_seq = _grad_sequence()
    got, _ = run_optimizer(cls(learning_rate=0.05, **hyper), grads_seq, through_apply=through_apply)
    expected = run_reference(rule, grads_seq, lr_at=lambda t: 0.05, **hyper)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)


def test_float32_adam_stays_close_to_the_float64_reference():
    grads_seq = _grad_sequence()
    got, params = run_optimizer(optimizers.Adam(learning_rate=0.01), grads_seq, dtype=torch.float32)
    assert params[0].dtype == torch.float32
    for g, e in zip(got, run_reference(ref_adam, grads_seq)):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


def test_keras_adam_differs_from_torch_adam_where_the_formulas_differ():
    grads_seq = _grad_sequence(scale=1e-6)  # tiny gradients: where epsilon placement matters
    keras_result, _ = run_optimizer(optimizers.Adam(learning_rate=0.01, epsilon=1e-7), grads_seq)
    params = [torch.nn.Parameter(torch.tensor(w)) for w in _initial_weights()]
    torch_adam = torch.optim.Adam(params, lr=0.01, eps=1e-7)
    for grads in grads_seq:
        for p, g in zip(params, grads):
            p.grad = torch.tensor(g)
        torch_adam.step()
    assert not np.allclose(keras_result[0], params[0].detach().numpy(), rtol=1e-9, atol=0)
    np.testing.assert_allclose(keras_result[0], run_reference(ref_adam, grads_seq)[0], rtol=1e-10)


def _np_clip_norm(c):
    return lambda grads: [g * c / max(np.linalg.norm(g), c) for g in grads]


def _np_clip_global(c):
    def clip(grads):
        norm = math.sqrt(sum(float((g * g).sum()) for g in grads))
        return [g * c / max(norm, c) for g in grads]
    return clip


@pytest.mark.parametrize(
    "clip_kwargs,np_clip",
    [
        ({"clipnorm": 1.5}, _np_clip_norm(1.5)),
        ({"global_clipnorm": 2.0}, _np_clip_global(2.0)),
        ({"clipvalue": 0.5}, lambda grads: [np.clip(g, -0.5, 0.5) for g in grads]),
    ],
)
@pytest.mark.parametrize("cls,rule", [(optimizers.SGD, ref_sgd), (optimizers.Adam, ref_adam)])
def test_clipping_matches_keras(clip_kwargs, np_clip, cls, rule):
    grads_seq = _grad_sequence(scale=3.0)
    grads_seq[2][1] = grads_seq[2][1] * 0.01  # one small gradient that clipnorm leaves alone
    got, params = run_optimizer(cls(learning_rate=0.1, **clip_kwargs), grads_seq)
    expected = run_reference(rule, grads_seq, lr_at=lambda t: 0.1, clip=np_clip)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)
    unclipped = run_reference(rule, grads_seq, lr_at=lambda t: 0.1)
    assert not np.allclose(got[0], unclipped[0])
    np.testing.assert_array_equal(params[1].grad.numpy(), grads_seq[-1][1])  # .grad itself is not clipped


@pytest.mark.parametrize("cls,rule", [(optimizers.SGD, ref_sgd), (optimizers.Adam, ref_adam), (optimizers.RMSprop, ref_rmsprop)])
def test_decoupled_weight_decay_is_applied_before_the_update(cls, rule):
    grads_seq = _grad_sequence()
    got, _ = run_optimizer(cls(learning_rate=0.1, weight_decay=0.3), grads_seq)
    for g, e in zip(got, run_reference(rule, grads_seq, lr_at=lambda t: 0.1, weight_decay=0.3)):
        np.testing.assert_allclose(g, e, rtol=1e-10)


def test_adamw_defaults_and_name_based_weight_decay_exclusion():
    grads_seq = _grad_sequence()
    opt = optimizers.AdamW()
    assert (opt.weight_decay, float(opt.learning_rate), opt.epsilon, opt.name) == (0.004, 0.001, 1e-7, "adam_w")  # Keras 3.15.1: AdamW().name
    opt = optimizers.AdamW(learning_rate=0.1, weight_decay=0.5)
    opt.exclude_from_weight_decay(var_names=["bias"])
    params = [torch.nn.Parameter(torch.tensor(w)) for w in _initial_weights()]
    opt.build([("dense.kernel", params[0]), ("dense.bias", params[1])])
    for grads in grads_seq:
        opt.apply_gradients(zip([torch.tensor(g) for g in grads], params))
    expected = run_reference(ref_adam, grads_seq, lr_at=lambda t: 0.1, weight_decay=0.5, decay_mask=[True, False])
    for p, e in zip(params, expected):
        np.testing.assert_allclose(p.detach().numpy(), e, rtol=1e-10)


def test_schedule_drives_the_per_step_learning_rate():
    grads_seq = _grad_sequence()
    schedule = schedules.ExponentialDecay(0.2, decay_steps=2, decay_rate=0.5)
    opt = optimizers.SGD(learning_rate=schedule, momentum=0.5, weight_decay=0.1)
    got, _ = run_optimizer(opt, grads_seq)
    expected = run_reference(ref_sgd, grads_seq, lr_at=lambda t: 0.2 * 0.5 ** (t / 2), weight_decay=0.1, momentum=0.5)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-10)
    assert int(opt.iterations) == STEPS
    assert float(opt.learning_rate) == pytest.approx(0.2 * 0.5 ** (STEPS / 2))


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("cls,rule,hyper", CASES, ids=lambda x: getattr(x, "__name__", str(x)))
def test_cuda_step_matches_reference_without_host_syncs(cls, rule, hyper):
    grads_seq = _grad_sequence(scale=3.0)
    opt = cls(learning_rate=schedules.ExponentialDecay(0.05, 3, 0.7), weight_decay=0.01, global_clipnorm=2.0, **hyper)
    params = [torch.nn.Parameter(torch.tensor(w, device="cuda")) for w in _initial_weights()]
    opt.build(params)
    cuda_grads = [[torch.tensor(g, device="cuda") for g in grads] for grads in grads_seq]
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        for grads in cuda_grads:
            for p, g in zip(params, grads):
                p.grad = g
            opt.step()
    finally:
        torch.cuda.set_sync_debug_mode("default")
    expected = run_reference(rule, grads_seq, lr_at=lambda t: 0.05 * 0.7 ** (t / 3), weight_decay=0.01,
                             clip=_np_clip_global(2.0), **hyper)
    for p, e in zip(params, expected):
        np.testing.assert_allclose(p.detach().cpu().numpy(), e, rtol=1e-9, atol=1e-12)
