"""Keras learning-rate schedules against their closed forms, configs/serialization, and bad input."""
import math

import numpy as np
import pytest
import torch

from torchstrategy.keras.optimizers import schedules

STEPS = [0, 1, 3, 7, 10, 11, 25, 40, 100]


@pytest.mark.parametrize("staircase", [False, True])
def test_exponential_decay_matches_closed_form(staircase):
    schedule = schedules.ExponentialDecay(0.1, decay_steps=7, decay_rate=0.6, staircase=staircase)
    for step in STEPS:
        exponent = (step // 7) if staircase else step / 7
        assert schedule(step) == pytest.approx(0.1 * 0.6**exponent, rel=1e-12)


@pytest.mark.parametrize("staircase", [False, True])
def test_inverse_time_decay_matches_closed_form(staircase):
    schedule = schedules.InverseTimeDecay(0.5, decay_steps=4, decay_rate=0.3, staircase=staircase)
    for step in STEPS:
        ratio = (step // 4) if staircase else step / 4
        assert schedule(step) == pytest.approx(0.5 / (1 + 0.3 * ratio), rel=1e-12)


def test_piecewise_constant_boundaries_are_inclusive_on_the_left_interval():
    schedule = schedules.PiecewiseConstantDecay([10, 20], [1.0, 0.5, 0.1])
    expected = {0: 1.0, 9: 1.0, 10: 1.0, 11: 0.5, 20: 0.5, 21: 0.1, 1000: 0.1}
    assert {step: schedule(step) for step in expected} == expected


@pytest.mark.parametrize("power", [1.0, 0.5, 2.0])
def test_polynomial_decay_without_cycle_holds_end_rate(power):
    schedule = schedules.PolynomialDecay(0.1, decay_steps=10, end_learning_rate=0.01, power=power)
    for step in STEPS:
        capped = min(step, 10)
        expected = (0.1 - 0.01) * (1 - capped / 10) ** power + 0.01
        assert schedule(step) == pytest.approx(expected, rel=1e-12)
    assert schedules.PolynomialDecay(1.0, 10).end_learning_rate == 1e-4  # Keras default


def test_polynomial_decay_with_cycle_restarts_each_period():
    schedule = schedules.PolynomialDecay(0.1, decay_steps=10, end_learning_rate=0.0, power=1.0, cycle=True)
    assert schedule(0) == pytest.approx(0.1)
    assert schedule(5) == pytest.approx(0.05)
    assert schedule(10) == pytest.approx(0.0, abs=1e-15)
    # step 15 lies in the second period: decay_steps becomes 20
    assert schedule(15) == pytest.approx(0.1 * (1 - 15 / 20))
    assert schedule(25) == pytest.approx(0.1 * (1 - 25 / 30))


@pytest.mark.parametrize("alpha", [0.0, 0.2])
def test_cosine_decay_without_warmup(alpha):
    schedule = schedules.CosineDecay(0.4, decay_steps=20, alpha=alpha)
    for step in STEPS:
        fraction = min(step, 20) / 20
        expected = 0.4 * ((1 - alpha) * 0.5 * (1 + math.cos(math.pi * fraction)) + alpha)
        assert schedule(step) == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_cosine_decay_with_warmup_rises_linearly_then_decays_from_target():
    schedule = schedules.CosineDecay(0.0, decay_steps=10, alpha=0.1, warmup_target=1.0, warmup_steps=5)
    for step in range(0, 5):
        assert schedule(step) == pytest.approx(step / 5)
    for step in [5, 8, 15, 30]:
        fraction = (min(step, 15) - 5) / 10
        expected = 1.0 * (0.9 * 0.5 * (1 + math.cos(math.pi * fraction)) + 0.1)
        assert schedule(step) == pytest.approx(expected, rel=1e-12)


def _sgdr_by_walking_periods(step, initial, first, t_mul, m_mul, alpha):
    start, length, restart = 0.0, float(first), 0
    while step >= start + length:
        start += length
        length *= t_mul
        restart += 1
    fraction = (step - start) / length
    return initial * ((1 - alpha) * 0.5 * m_mul**restart * (1 + math.cos(math.pi * fraction)) + alpha)


@pytest.mark.parametrize("t_mul,m_mul,alpha", [(2.0, 1.0, 0.0), (1.0, 0.5, 0.1), (1.5, 0.8, 0.05)])
def test_cosine_decay_restarts_matches_walking_the_periods(t_mul, m_mul, alpha):
    schedule = schedules.CosineDecayRestarts(0.3, first_decay_steps=10, t_mul=t_mul, m_mul=m_mul, alpha=alpha)
    for step in [0, 3, 9, 10, 12, 29, 31, 55, 69, 71, 90]:
        expected = _sgdr_by_walking_periods(step, 0.3, 10, t_mul, m_mul, alpha)
        assert schedule(step) == pytest.approx(expected, rel=1e-9, abs=1e-12), step


def test_steps_may_be_tensors_or_numpy_integers_and_results_are_floats():
    schedule = schedules.ExponentialDecay(0.1, 10, 0.5)
    for step in (torch.tensor(20, dtype=torch.int64), np.int64(20), 20):
        value = schedule(step)
        assert type(value) is float
        assert value == pytest.approx(0.025)


@pytest.mark.parametrize(
    "schedule",
    [
        schedules.ExponentialDecay(0.1, 10, 0.9, staircase=True),
        schedules.PiecewiseConstantDecay([5, 9], [0.3, 0.2, 0.1]),
        schedules.PolynomialDecay(0.1, 10, 0.001, power=2.0, cycle=True),
        schedules.InverseTimeDecay(0.1, 3, 0.5),
        schedules.CosineDecay(0.0, 10, alpha=0.1, warmup_target=0.2, warmup_steps=4),
        schedules.CosineDecayRestarts(0.1, 7, t_mul=1.5, m_mul=0.9, alpha=0.01),
    ],
)
def test_config_round_trip_gives_the_same_values(schedule):
    rebuilt = type(schedule).from_config(schedule.get_config())
    serialized = schedules.deserialize(schedules.serialize(schedule))
    for step in STEPS:
        assert rebuilt(step) == schedule(step)
        assert serialized(step) == schedule(step)
    assert schedules.serialize(schedule)["class_name"] == type(schedule).__name__


class _Halving(schedules.LearningRateSchedule):
    def __init__(self, start):
        self.start = start

    def __call__(self, step):
        return self.start * 0.5 ** int(step)

    def get_config(self):
        return {"start": self.start}


def test_custom_schedules_deserialize_through_custom_objects():
    config = schedules.serialize(_Halving(0.8))
    with pytest.raises(ValueError, match="Unknown learning rate schedule: '_Halving'"):
        schedules.deserialize(config)
    rebuilt = schedules.deserialize(config, custom_objects={"_Halving": _Halving})
    assert rebuilt(3) == pytest.approx(0.1)


def test_base_class_requires_call_and_config():
    base = schedules.LearningRateSchedule()
    with pytest.raises(NotImplementedError, match="must override `__call__"):
        base(0)
    with pytest.raises(NotImplementedError, match="must override `get_config"):
        base.get_config()


def test_bad_arguments_are_rejected_with_clear_errors():
    with pytest.raises(ValueError, match="decay_steps` must be > 0"):
        schedules.ExponentialDecay(0.1, 0, 0.5)
    with pytest.raises(ValueError, match="decay_steps` must be > 0"):
        schedules.CosineDecay(0.1, -5)
    with pytest.raises(ValueError, match="first_decay_steps` must be > 0"):
        schedules.CosineDecayRestarts(0.1, 0)
    with pytest.raises(ValueError, match="1 less than the length of values"):
        schedules.PiecewiseConstantDecay([10, 20], [1.0, 0.5])
    with pytest.raises(ValueError, match="strictly increasing"):
        schedules.PiecewiseConstantDecay([20, 10], [1.0, 0.5, 0.1])
    with pytest.raises(ValueError, match="scalar step"):
        schedules.ExponentialDecay(0.1, 10, 0.5)(torch.tensor([1, 2]))
    with pytest.raises(ValueError, match="'class_name'"):
        schedules.deserialize({"config": {}})
