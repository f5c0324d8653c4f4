"""Keras optimizer lifecycle: deferred build, apply_gradients (None gradients, strategies), learning-rate
assignment, checkpoints, plain torch loops and torch tools, get/serialize, and bad input."""
import copy
import io
import math
import warnings

import numpy as np
import pytest
import torch

from torchstrategy.keras import optimizers
from torchstrategy.keras.optimizers import schedules

SHAPES = [(3, 4), (5,)]
STEPS = 6


def _grad_sequence(seed=0):
    rng = np.random.default_rng(seed)
    return [[rng.normal(size=shape) for shape in SHAPES] for _ in range(STEPS)]


def _initial_weights(seed=1):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=shape) for shape in SHAPES]


def ref_sgd(w, g, s, lr, t, momentum=0.0):
    """Keras SGD: velocity = momentum * velocity - lr * g; w += velocity."""
    s["m"] = momentum * s.get("m", 0.0) - lr * g
    return w + s["m"]


def ref_adam(w, g, s, lr, t, beta_1=0.9, beta_2=0.999, epsilon=1e-7):
    """Keras Adam: bias correction folded into alpha, epsilon outside the square root."""
    s["m"] = s.get("m", 0.0) + (g - s.get("m", 0.0)) * (1 - beta_1)
    s["v"] = s.get("v", 0.0) + (g * g - s.get("v", 0.0)) * (1 - beta_2)
    alpha = lr * math.sqrt(1 - beta_2**t) / (1 - beta_1**t)
    return w - alpha * s["m"] / (np.sqrt(s["v"]) + epsilon)


def test_assigning_learning_rate_takes_effect_on_the_next_step():
    w = torch.nn.Parameter(torch.zeros(2, dtype=torch.float64))
    opt = optimizers.SGD(learning_rate=schedules.PiecewiseConstantDecay([0], [1.0, 2.0]))
    opt.apply_gradients([(torch.ones(2, dtype=torch.float64), w)])
    opt.learning_rate = 0.25  # a float replaces the schedule (as ReduceLROnPlateau does)
    opt.apply_gradients([(torch.ones(2, dtype=torch.float64), w)])
    opt.lr = 0.5
    opt.apply_gradients([(torch.ones(2, dtype=torch.float64), w)])
    opt.learning_rate.assign(0.125)  # tf.keras idiom on the returned value
    opt.apply_gradients([(torch.ones(2, dtype=torch.float64), w)])
    np.testing.assert_allclose(w.detach().numpy(), -(1.0 + 0.25 + 0.5 + 0.125))
    assert float(opt.lr) == 0.125 and opt.learning_rate.numpy().dtype == np.float32
    logged = copy.deepcopy({"learning_rate": opt.learning_rate})["learning_rate"]
    assert type(logged) is float and logged == 0.125  # copies never carry the optimizer


def test_none_gradients_are_skipped_with_one_warning():
    a, b = (torch.nn.Parameter(torch.ones(2, dtype=torch.float64)) for _ in range(2))
    opt = optimizers.Adam(learning_rate=0.1)
    grad = torch.full((2,), 0.5, dtype=torch.float64)
    with pytest.warns(UserWarning, match="Gradients do not exist"):
        opt.apply_gradients([(grad, a), (None, b)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.apply_gradients([(grad, a), (None, b)])
    np.testing.assert_array_equal(b.detach().numpy(), [1.0, 1.0])
    assert torch.count_nonzero(opt.state[b]["momentum"]) == 0
    w = np.ones(2)
    s = {}
    for t in (1, 2):
        w = ref_adam(w, np.full(2, 0.5), s, 0.1, t)
    np.testing.assert_allclose(a.detach().numpy(), w, rtol=1e-10)
    assert int(opt.iterations) == 2 and a.grad is None


def _fresh_params():
    return [torch.nn.Parameter(torch.tensor(w)) for w in _initial_weights()]


def test_apply_gradients_inside_a_one_replica_strategy_run():
    import torchstrategy as tf

    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    with strategy.scope():
        w = torch.nn.Parameter(torch.ones(2, dtype=torch.float64))
        opt = optimizers.SGD(learning_rate=0.5, momentum=0.5)
    for _ in range(2):
        strategy.run(lambda g: opt.apply_gradients([(g, w)]), args=(torch.ones(2, dtype=torch.float64),))
    w_ref, state = np.ones(2), {}
    for t in (1, 2):
        w_ref = ref_sgd(w_ref, np.ones(2), state, 0.5, t, momentum=0.5)
    np.testing.assert_allclose(w.detach().numpy(), w_ref, rtol=1e-12)


def test_state_dict_round_trip_continues_like_an_uninterrupted_run():
    grads_seq = _grad_sequence()
    factory = lambda: optimizers.Adam(learning_rate=schedules.InverseTimeDecay(0.1, 1, 0.5), amsgrad=True)  # noqa: E731
    full, full_params = factory(), _fresh_params()
    for grads in grads_seq:
        full.apply_gradients(zip([torch.tensor(g) for g in grads], full_params))
    first, params = factory(), _fresh_params()
    for grads in grads_seq[:3]:
        first.apply_gradients(zip([torch.tensor(g) for g in grads], params))
    buffer = io.BytesIO()
    torch.save(first.state_dict(), buffer)
    buffer.seek(0)
    saved = torch.load(buffer, weights_only=False)
    assert int(saved["iterations"]) == 3 and saved["learning_rate"]["class_name"] == "InverseTimeDecay"
    resumed = optimizers.Adam(learning_rate=0.5, amsgrad=True)
    resumed.load_state_dict(saved)  # before build: slot state waits for the variables
    restored_params = [torch.nn.Parameter(p.detach().clone()) for p in params]
    for grads in grads_seq[3:]:
        resumed.apply_gradients(zip([torch.tensor(g) for g in grads], restored_params))
    for p, q in zip(restored_params, full_params):
        torch.testing.assert_close(p, q, rtol=0, atol=0)
    assert int(resumed.iterations) == STEPS


def test_deferred_build_and_rebuild_rules():
    opt = optimizers.RMSprop()
    assert not opt.built and opt.param_groups == []
    with pytest.raises(RuntimeError, match="has no variables yet"):
        opt.step()
    layer = torch.nn.Linear(3, 2)  # created after the optimizer, as with model.compile(optimizer=...)
    opt.build(layer.parameters())
    opt.build(list(layer.parameters()))  # same variables: nothing happens
    opt.build([layer.bias])  # a subset (frozen layers): nothing happens either
    assert opt.built and isinstance(opt, torch.optim.Optimizer)
    assert [tuple(v.shape) for v in opt.variables] == [(), (2, 3), (2,)]
    with pytest.raises(ValueError, match="already built with 2 variables"):
        opt.build(torch.nn.Linear(3, 2).parameters())
    with pytest.raises(ValueError, match="Unknown variable of shape"):
        opt.apply_gradients([(torch.ones(4), torch.nn.Parameter(torch.zeros(4)))])


def test_plain_torch_training_loop_matches_the_reference_rule():
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1).double()
    twin = copy.deepcopy(model)
    x, y = torch.randn(16, 4, dtype=torch.float64), torch.randn(16, 1, dtype=torch.float64)
    opt = optimizers.SGD(learning_rate=0.1, momentum=0.9, params=model.parameters())
    weights = [p.detach().numpy().copy() for p in twin.parameters()]
    states = [{} for _ in weights]
    losses = []
    for step in range(5):
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(float(loss.detach()))
        with torch.no_grad():
            for p, w in zip(twin.parameters(), weights):
                p.copy_(torch.from_numpy(w))
        grads = torch.autograd.grad(torch.nn.functional.mse_loss(twin(x), y), list(twin.parameters()))
        weights = [ref_sgd(w, g.numpy(), s, 0.1, step + 1, momentum=0.9) for w, g, s in zip(weights, grads, states)]
    for p, w in zip(model.parameters(), weights):
        np.testing.assert_allclose(p.detach().numpy(), w, rtol=1e-10)
    assert losses[-1] < losses[0]


def test_torch_param_groups_and_lr_schedulers_drive_the_float_learning_rate():
    a, b = torch.nn.Parameter(torch.zeros(1)), torch.nn.Parameter(torch.zeros(1))
    opt = optimizers.SGD(learning_rate=1.0, params=[{"params": [a]}, {"params": [b], "lr": 0.1}])
    scheduler = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    for _ in range(2):
        a.grad, b.grad = torch.ones(1), torch.ones(1)
        opt.step()
        scheduler.step()
    assert a.item() == pytest.approx(-1.5) and b.item() == pytest.approx(-0.15)
    assert float(opt.learning_rate) == pytest.approx(0.25)


def test_step_with_closure_returns_the_loss():
    w = torch.nn.Parameter(torch.tensor([2.0]))
    opt = optimizers.SGD(learning_rate=0.25, params=[w])

    def closure():
        opt.zero_grad()
        loss = (w**2).sum()
        loss.backward()
        return loss

    assert float(opt.step(closure).detach()) == pytest.approx(4.0)
    assert w.item() == pytest.approx(2.0 - 0.25 * 4.0)


def test_get_serialize_deserialize_and_defaults():
    for name, cls in [("adam", optimizers.Adam), ("SGD", optimizers.SGD), ("RMSPROP", optimizers.RMSprop),
                      ("AdaGrad", optimizers.Adagrad), ("adamw", optimizers.AdamW), ("nadam", optimizers.Nadam)]:
        assert type(optimizers.get(name)) is cls
    defaults = {cls: float(cls().learning_rate) for cls in (optimizers.SGD, optimizers.Adam, optimizers.RMSprop)}
    assert defaults == {optimizers.SGD: 0.01, optimizers.Adam: 0.001, optimizers.RMSprop: 0.001}
    assert optimizers.Adagrad().initial_accumulator_value == 0.1 and optimizers.RMSprop().rho == 0.9
    instance = optimizers.SGD()
    assert optimizers.get(instance) is instance and optimizers.get(None) is None
    original = optimizers.Adam(learning_rate=schedules.CosineDecay(0.1, 100), beta_1=0.8, clipnorm=1.0, amsgrad=True)
    rebuilt = optimizers.deserialize(optimizers.serialize(original))
    assert rebuilt.get_config() == original.get_config()
    assert rebuilt.learning_rate == pytest.approx(0.1)
    assert optimizers.get({"class_name": "sgd", "config": {"momentum": 0.5}}).momentum == 0.5
    assert copy.deepcopy(original).get_config() == original.get_config()


def test_bad_input_raises_clear_errors():
    with pytest.raises(ValueError, match=r"Could not interpret optimizer identifier: 'adamm'.*Valid names.*'adam'"):
        optimizers.get("adamm")
    with pytest.raises(ValueError, match="must be a finite number >= 0"):
        optimizers.Adam(learning_rate=-0.1)
    with pytest.raises(ValueError, match="Only one of `clipnorm`, `clipvalue` and `global_clipnorm`"):
        optimizers.SGD(clipnorm=1.0, global_clipnorm=1.0)
    with pytest.raises(ValueError, match="momentum` must be a float between"):
        optimizers.SGD(momentum=1.5)
    with pytest.raises(ValueError, match="weight_decay` must be a float"):
        optimizers.AdamW(weight_decay=None)
    with pytest.raises(ValueError, match="not recognized"):
        optimizers.Adam(betas=(0.9, 0.99))
    with pytest.raises(ValueError, match="ema_momentum"):  # use_ema itself is supported (test_optimizer_ema.py)
        optimizers.Adam(use_ema=True, ema_momentum=2.0)
    with pytest.raises(ValueError, match="should be a float"):
        optimizers.Adam(torch.nn.Linear(2, 2).parameters())
    w = torch.nn.Parameter(torch.zeros(3))
    opt = optimizers.SGD()
    with pytest.raises(ValueError, match=r"Gradient #0 has shape \(4,\) but its variable has shape \(3,\)"):
        opt.apply_gradients([(torch.ones(4), w)])
    with pytest.raises(ValueError, match="Got 2 gradients for 1 variables"):
        opt.apply([torch.ones(3), torch.ones(3)], [w])
    with pytest.raises(ValueError, match="No gradients provided for any variable"):
        opt.apply_gradients([(None, w)])
    with pytest.raises(ValueError, match=r"\(gradient, variable\) pairs"):
        opt.apply_gradients([torch.ones(3)])


