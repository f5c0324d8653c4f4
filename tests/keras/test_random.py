"""keras.random: Keras's seed rules (an int repeats, a SeedGenerator advances and repeats from the same
start, None follows torch's global generator), shapes/dtypes, and moments of each distribution (not
Keras's exact numbers, which come from another generator)."""
import numpy as np
import pytest
import torch

from torchstrategy import keras
from torchstrategy.keras import random

N = 40000


def test_seed_rules():
    a, b = random.normal((5,), seed=3), random.normal((5,), seed=3)
    assert torch.equal(a, b)
    gen = random.SeedGenerator(7)
    first, second = random.uniform((5,), seed=gen), random.uniform((5,), seed=gen)
    assert not torch.equal(first, second)
    again = random.SeedGenerator(7)
    assert torch.equal(random.uniform((5,), seed=again), first)
    assert torch.equal(random.uniform((5,), seed=again), second)
    assert gen.state.tolist() == [7, 2] and gen.get_config() == {"seed": 7, "name": "seed_generator"}
    keras.utils.set_random_seed(11)
    x = random.normal((4,))
    keras.utils.set_random_seed(11)
    assert torch.equal(random.normal((4,)), x)
    assert random.SeedGenerator.from_config(gen.get_config()).state.tolist() == [7, 0]


def test_dtypes_and_errors():
    assert random.normal((2, 3)).dtype == torch.float32 and random.normal((2,), dtype="float64").dtype == torch.float64
    assert random.randint((3,), 0, 5).dtype == torch.int32
    assert random.categorical(np.zeros((2, 3)), 4).shape == (2, 4)
    with pytest.raises(ValueError, match="floating point"):
        random.uniform((2,), dtype="int32")
    with pytest.raises(ValueError, match="seed"):
        random.normal((2,), seed="x")


@pytest.mark.parametrize("name,sample,mean,var", [
    ("normal", lambda: random.normal((N,), mean=2.0, stddev=3.0, seed=1), 2.0, 9.0),
    ("uniform", lambda: random.uniform((N,), -1.0, 3.0, seed=2), 1.0, 16.0 / 12),
    ("randint", lambda: random.randint((N,), 2, 6, seed=3), 3.5, (4 ** 2 - 1) / 12),
    # N(0,1) truncated at +-2: variance 1 - 2*2*phi(2) / (2*Phi(2) - 1)
    ("truncated_normal", lambda: random.truncated_normal((N,), seed=4), 0.0, 0.7737413),
    ("gamma", lambda: random.gamma((N,), alpha=3.0, seed=5), 3.0, 3.0),
    ("binomial", lambda: random.binomial((N,), counts=10.0, probabilities=0.3, seed=6), 3.0, 2.1),
    ("beta", lambda: random.beta((N,), alpha=2.0, beta=5.0, seed=7), 2 / 7, 10 / (49 * 8)),
])
def test_moments(name, sample, mean, var):
    values = sample().to(torch.float64).numpy()
    assert abs(values.mean() - mean) < 4 * np.sqrt(var / N) + 1e-9, (name, values.mean())
    assert abs(values.var() / var - 1) < 0.05, (name, values.var())
    if name == "truncated_normal":
        assert np.abs(values).max() <= 2.0


def test_categorical_dropout_shuffle():
    logits = np.log(np.array([[0.2, 0.8], [0.9, 0.1]]))
    draws = random.categorical(logits, 20000, seed=1).numpy()
    np.testing.assert_allclose(draws.mean(axis=1), [0.8, 0.1], atol=0.02)
    x = torch.ones(1000, 4)
    dropped = random.dropout(x, 0.25, seed=2)
    assert set(np.unique(dropped.numpy()).tolist()) <= {0.0, float(np.float32(4.0 / 3.0))}
    assert abs((dropped == 0).float().mean().item() - 0.25) < 0.03
    shared = random.dropout(x, 0.5, noise_shape=(None, 1), seed=3)  # one decision per row
    assert bool(((shared == 0).all(1) | (shared != 0).all(1)).all())
    data = torch.arange(12).reshape(6, 2)
    mixed = random.shuffle(data, seed=4)
    assert sorted(mixed[:, 0].tolist()) == [0, 2, 4, 6, 8, 10] and torch.equal(mixed[:, 1] - 1, mixed[:, 0])
    cols = random.shuffle(data, axis=1, seed=5)
    assert torch.equal(cols.sort(1).values, data)
