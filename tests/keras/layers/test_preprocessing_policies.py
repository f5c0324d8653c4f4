"""RandAugment and AugMix: deterministic sub-layer picks (auto contrast, equalization) against Keras 3.15 numbers
(keras_augment_reference.json), then their random behaviour: identity at inference, value ranges, mixing
weights that sum to 1, seeds and configs."""
from __future__ import annotations

import pytest
import torch

from tests.keras.layers._augment_reference import cases_of, check_case
from torchstrategy.keras import layers


@pytest.mark.parametrize("case_id", cases_of("RandAugment", "AugMix"))
def test_matches_keras(case_id):
    check_case(case_id, atol=2e-4)


@pytest.mark.parametrize("make", [lambda: layers.RandAugment(seed=1), lambda: layers.AugMix(seed=1)])
def test_inference_identity_training_changes_and_range(make):
    images = torch.rand(4, 12, 12, 3) * 255
    layer = make()
    assert torch.equal(layer(images, training=False), images)
    changed = 0
    for _ in range(5):
        out = layer(images, training=True)
        assert out.shape == images.shape
        assert float(out.min()) >= -1e-3 and float(out.max()) <= 255.0 + 1e-3
        changed += int(not torch.equal(out, images))
    assert changed >= 4


def test_rand_augment_picks_num_ops_layers_from_all_eleven():
    layer = layers.RandAugment(num_ops=3, seed=5)
    picks = torch.cat([layer.get_random_transformation(torch.zeros(1, 4, 4, 3))["layer_idxes"]
                       for _ in range(300)])
    assert picks.shape == (900,)
    assert set(picks.tolist()) == set(range(11))


def test_aug_mix_weights_are_a_distribution():
    layer = layers.AugMix(num_chains=4, chain_depth=2, seed=6)
    for _ in range(20):
        t = layer.get_random_transformation(torch.zeros(2, 6, 6, 3))
        weights = t["chain_mixing_weights"]
        assert weights.shape == (4,) and float(weights.min()) >= 0
        assert float(weights.sum()) == pytest.approx(1.0, abs=1e-6)
        assert 0.0 <= float(t["weight_sample"]) <= 1.0
        assert len(t["chain_transforms"]) == 4 and all(len(c) <= 2 for c in t["chain_transforms"])


def test_aug_mix_of_identity_chains_returns_the_image():
    """Chains with no steps leave the image: the blend w * x + (1 - w) * sum(c_i * x) is x again."""
    images = torch.rand(2, 5, 5, 3) * 255
    layer = layers.AugMix()
    t = {"chain_mixing_weights": torch.tensor([0.3, 0.3, 0.4]), "weight_sample": torch.tensor(0.25),
         "chain_transforms": [[], [], []]}
    torch.testing.assert_close(layer.transform_images(images, t), images)


def test_all_ops_false_leaves_out_the_color_layers():
    assert len(layers.AugMix(all_ops=False)._names) == 7
    assert "random_brightness" not in layers.AugMix(all_ops=False)._names
    assert len(layers.AugMix()._names) == 11


def test_seeded_and_channels_first():
    images = torch.rand(2, 8, 8, 3) * 255
    a = layers.RandAugment(seed=9)(images, training=True)
    b = layers.RandAugment(seed=9)(images, training=True)
    assert torch.equal(a, b)
    first = layers.AugMix(seed=3, data_format="channels_first")(images.permute(0, 3, 1, 2), training=True)
    assert first.shape == (2, 3, 8, 8)


def test_configs():
    config = layers.RandAugment(value_range=(0, 1), num_ops=3, factor=0.2, seed=4).get_config()
    assert config["factor"] == (0, 0.2) and config["num_ops"] == 3
    assert layers.RandAugment.from_config(config).num_ops == 3
    config = layers.AugMix(num_chains=2, alpha=0.5, all_ops=False).get_config()
    assert config["num_chains"] == 2 and config["all_ops"] is False
    assert layers.AugMix.from_config(config).alpha == 0.5
    with pytest.raises(ValueError, match="factor"):
        layers.RandAugment(factor=2.0)
