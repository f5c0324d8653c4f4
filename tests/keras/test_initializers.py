"""Keras initializers: sample statistics against the Keras formulas (tolerances from the sample
size), fan rules for (in, out) and HWIO kernels, seeds, serialization, and errors."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from torchstrategy.keras import initializers

TRUNC_STD = 0.87962566103423978  # std of a unit normal truncated to [-2, 2]


def _fans(shape):
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive = int(np.prod(shape[:-2]))
    return shape[-2] * receptive, shape[-1] * receptive


def _check_stats(sample: np.ndarray, mean: float, std: float, bound: float | None = None):
    """Mean within 6 standard errors; std within 6/sqrt(n) relative (kurtosis <= 3 here)."""
    n = sample.size
    assert abs(sample.mean() - mean) < 6 * std / math.sqrt(n), (sample.mean(), mean)
    assert abs(sample.std() / std - 1.0) < 6 / math.sqrt(n), (sample.std(), std)
    if bound is not None:
        assert np.abs(sample - mean).max() <= bound * (1 + 1e-6)
        assert np.abs(sample - mean).max() > 0.98 * bound  # the whole range is used


@pytest.mark.parametrize("shape", [(300, 200), (3, 3, 64, 96), (5, 200, 150)])
@pytest.mark.parametrize("name,scale,mode,dist", [
    ("glorot_uniform", 1.0, "fan_avg", "uniform"), ("glorot_normal", 1.0, "fan_avg", "truncated"),
    ("he_normal", 2.0, "fan_in", "truncated"), ("he_uniform", 2.0, "fan_in", "uniform"),
    ("lecun_normal", 1.0, "fan_in", "truncated"), ("lecun_uniform", 1.0, "fan_in", "uniform"),
])
def test_variance_scaling_presets_follow_keras_formulas(shape, name, scale, mode, dist):
    fan_in, fan_out = _fans(shape)
    n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2}[mode]
    target_std = math.sqrt(scale / n)
    sample = initializers.get(name)(shape, dtype=torch.float32).numpy().astype(np.float64)
    assert sample.shape == shape and sample.dtype == np.float64
    if dist == "uniform":
        _check_stats(sample, 0.0, target_std, bound=math.sqrt(3 * scale / n))
    else:  # truncated at 2 * (target / 0.8796...), which keeps the variance at scale / n
        _check_stats(sample, 0.0, target_std, bound=2 * target_std / TRUNC_STD)


@pytest.mark.parametrize("mode", ["fan_in", "fan_out", "fan_avg"])
def test_variance_scaling_untruncated_normal(mode):
    shape = (4, 4, 30, 50)
    fan_in, fan_out = _fans(shape)
    n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2}[mode]
    init = initializers.VarianceScaling(scale=3.0, mode=mode, distribution="untruncated_normal")
    sample = init(shape).numpy().astype(np.float64)
    _check_stats(sample, 0.0, math.sqrt(3.0 / n))
    assert np.abs(sample).max() > 2.5 * math.sqrt(3.0 / n)  # tails are not cut


def test_variance_scaling_normal_means_truncated_and_bad_args():
    assert initializers.VarianceScaling(distribution="normal").distribution == "truncated_normal"
    with pytest.raises(ValueError, match="invalid mode 'fan_x'"):
        initializers.VarianceScaling(mode="fan_x")
    with pytest.raises(ValueError, match="invalid distribution 'cauchy'"):
        initializers.VarianceScaling(distribution="cauchy")
    with pytest.raises(ValueError, match="positive"):
        initializers.VarianceScaling(scale=0.0)


def test_random_normal_uniform_truncated_defaults():
    shape = (400, 300)
    _check_stats(initializers.RandomNormal()(shape).double().numpy(), 0.0, 0.05)
    _check_stats(initializers.RandomUniform()(shape).double().numpy(), 0.0, 0.1 / math.sqrt(12), bound=0.05)
    _check_stats(initializers.TruncatedNormal()(shape).double().numpy(), 0.0, 0.05 * TRUNC_STD, bound=0.1)
    uniform = initializers.RandomUniform(minval=2.0, maxval=5.0)(shape).double().numpy()
    assert uniform.min() >= 2.0 and uniform.max() < 5.0
    _check_stats(uniform, 3.5, 3.0 / math.sqrt(12))
    _check_stats(initializers.RandomNormal(mean=1.0, stddev=2.0)(shape).double().numpy(), 1.0, 2.0)


def test_constant_zeros_ones():
    np.testing.assert_array_equal(initializers.get("zeros")((2, 3)).numpy(), np.zeros((2, 3)))
    np.testing.assert_array_equal(initializers.get("ones")((4,)).numpy(), np.ones(4))
    np.testing.assert_array_equal(initializers.Constant(2.5)((3, 1)).numpy(), np.full((3, 1), 2.5))
    assert initializers.Zeros()((2,), dtype=torch.int64).dtype == torch.int64


@pytest.mark.parametrize("shape", [(60, 40), (40, 60), (3, 3, 8, 16)])
def test_orthogonal(shape):
    w = initializers.Orthogonal(gain=1.5, seed=3)(shape).double().numpy().reshape(-1, shape[-1])
    rows, cols = w.shape
    gram = w.T @ w if rows >= cols else w @ w.T
    np.testing.assert_allclose(gram, 1.5 ** 2 * np.eye(min(rows, cols)), atol=1e-5)
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        initializers.Orthogonal()((5,))


def test_identity():
    np.testing.assert_array_equal(initializers.Identity(gain=2.0)((3, 4)).numpy(), 2.0 * np.eye(3, 4))
    with pytest.raises(ValueError, match="2-D shape"):
        initializers.Identity()((3, 3, 3))


@pytest.mark.parametrize("name", ["RandomNormal", "RandomUniform", "TruncatedNormal", "VarianceScaling",
                                  "GlorotUniform", "GlorotNormal", "HeNormal", "HeUniform", "LecunNormal",
                                  "LecunUniform", "Orthogonal"])
def test_seeded_initializers_are_deterministic(name):
    cls = getattr(initializers, name)
    a, b, c = cls(seed=7)((20, 10)), cls(seed=7)((20, 10)), cls(seed=8)((20, 10))
    assert torch.equal(a, b)
    assert not torch.equal(a, c)
    torch.manual_seed(123)
    first = cls()((20, 10))
    torch.manual_seed(123)
    assert torch.equal(first, cls()((20, 10)))  # unseeded: global RNG, reproducible by manual_seed


def test_dtype_handling():
    assert initializers.GlorotUniform()((3, 4), dtype=torch.float64).dtype == torch.float64
    assert initializers.HeNormal()((3, 4), dtype="float16").dtype == torch.float16
    with pytest.raises(ValueError, match="floating-point"):
        initializers.RandomNormal()((3,), dtype=torch.int32)


@pytest.mark.parametrize("identifier,cls", [
    ("glorot_uniform", "GlorotUniform"), ("GlorotUniform", "GlorotUniform"), ("he_normal", "HeNormal"),
    ("uniform", "RandomUniform"), ("normal", "RandomNormal"), ("truncated_normal", "TruncatedNormal"),
    ("orthogonal", "Orthogonal"), ("zeros", "Zeros"), ("ones", "Ones"), ("identity", "Identity"),
    ({"class_name": "VarianceScaling", "config": {"scale": 2.0, "mode": "fan_out", "seed": 1}}, "VarianceScaling"),
])
def test_get_resolves_names_and_dicts(identifier, cls):
    assert type(initializers.get(identifier)).__name__ == cls


def test_get_instances_callables_none():
    init = initializers.HeNormal(seed=1)
    assert initializers.get(init) is init
    fn = lambda shape, dtype=None: torch.ones(shape)  # noqa: E731
    assert initializers.get(fn) is fn
    assert initializers.get(None) is None
    assert isinstance(initializers.get(initializers.Ones), initializers.Ones)


def test_unknown_initializer_lists_valid_names():
    with pytest.raises(ValueError, match=r"Unknown initializer: 'glorot'.*'glorot_uniform'.*'he_normal'"):
        initializers.get("glorot")
    with pytest.raises(ValueError, match="Could not interpret initializer"):
        initializers.get(42)


@pytest.mark.parametrize("init", [
    initializers.GlorotUniform(seed=4), initializers.VarianceScaling(0.5, "fan_avg", "uniform", seed=4),
    initializers.RandomNormal(0.1, 0.2, seed=4), initializers.Constant(3.0), initializers.Orthogonal(2.0, seed=4),
    initializers.TruncatedNormal(stddev=0.3, seed=4),
])
def test_serialize_round_trip(init):
    config = initializers.serialize(init)
    assert config["class_name"] == type(init).__name__
    restored = initializers.deserialize(config)
    assert type(restored) is type(init) and restored.get_config() == init.get_config()
    assert torch.equal(restored((6, 5)), init((6, 5)))


def test_stft_initializer_matches_keras():
    """keras.initializers.STFT / STFTInitializer / stft against Keras 3.15 kernels frozen by
    tools/tf_reference/keras_last_names_reference.py (TF 2.21; Keras got the hann/hamming windows as values,
    so our named windows are checked too)."""
    import json
    import os

    ref = json.load(open(os.path.join(os.path.dirname(__file__), "keras_last_names_reference.json")))["stft"]
    init = initializers
    assert ref["same_class"] and init.STFT is init.STFTInitializer is init.stft
    cases = {"real_hann_density": (init.STFT(), (8, 1, 5)),
             "imag_hamming_spectrum_periodic": (init.STFT("imag", "hamming", "spectrum", True), (6, 1, 4)),
             "real_none": (init.STFTInitializer(window=None, scaling=None), (4, 1, 3)),
             "array_window": (init.stft(window=np.linspace(0.2, 1.0, 5)), (5, 1, 3))}
    for key, (initializer, shape) in cases.items():
        got = initializer(shape)
        assert got.dtype == torch.float32
        np.testing.assert_allclose(got.numpy(), np.array(ref[key]), rtol=1e-6, atol=1e-6, err_msg=key)
    config = init.STFT("imag", None, "spectrum", True).get_config()
    assert config == ref["config"]
    assert init.get({"class_name": "STFT", "config": config}).get_config() == config
    assert isinstance(init.get("stft"), init.STFT)
    with pytest.raises(ValueError, match="side"):
        init.STFT(side="both")
    with pytest.raises(ValueError, match="scaling"):
        init.STFT(scaling="power")
    with pytest.raises(ValueError, match="window"):
        init.STFT(window="kaiser_bessel")
