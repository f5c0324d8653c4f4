"""MixUp: inference identity, each output a convex blend of two batch images with the labels blended by the
same weights, the Beta(alpha, alpha) weight's mean, seeding, config."""
from __future__ import annotations

import numpy as np
import torch

from torchstrategy.keras import layers


def test_identity_outside_training():
    images = torch.rand(4, 2, 2, 3)
    assert torch.equal(layers.MixUp()(images, training=False), images)


def test_images_and_labels_are_blended_with_the_same_weights():
    n = 64
    ids = torch.arange(n, dtype=torch.float32)
    images = ids.reshape(n, 1, 1, 1).expand(n, 2, 2, 3).clone()
    labels = torch.nn.functional.one_hot(torch.arange(n), n).float()
    out = layers.MixUp(alpha=0.5, seed=3)({"images": images, "labels": labels}, training=True)
    mixed, mixed_labels = out["images"], out["labels"]
    np.testing.assert_allclose(mixed_labels.sum(1).numpy(), 1.0, rtol=1e-6)
    # the image is the label-weighted mean of the source images
    np.testing.assert_allclose(mixed[:, 0, 0, 0].numpy(), (mixed_labels @ ids).numpy(), rtol=1e-5, atol=1e-4)
    weights = mixed_labels.max(1).values
    assert float(weights.min()) >= 0.5 - 1e-6


def test_beta_weight_statistics_and_seed():
    n = 4000
    labels = torch.nn.functional.one_hot(torch.arange(n), n).float()
    out = layers.MixUp(alpha=2.0)({"images": torch.zeros(n, 1, 1, 1), "labels": labels}, training=True)
    own = out["labels"][torch.arange(n), torch.arange(n)]
    own = own[own < 1.0]  # samples paired with themselves keep weight 1
    assert abs(float(own.mean()) - 0.5) < 0.03  # Beta(2, 2) has mean 1/2
    a = layers.MixUp(seed=7)(torch.rand(8, 2, 2, 1) * 0 + torch.arange(8.0).reshape(8, 1, 1, 1), training=True)
    b = layers.MixUp(seed=7)(torch.arange(8.0).reshape(8, 1, 1, 1).expand(8, 2, 2, 1), training=True)
    assert torch.equal(a, b)
    config = layers.MixUp(alpha=0.3, seed=1).get_config()
    assert layers.MixUp.from_config(config).get_config() == config


def test_cutmix_pastes_one_box_and_mixes_labels_by_its_area():
    n, size = 32, 8
    ids = torch.arange(n, dtype=torch.float32)
    images = ids.reshape(n, 1, 1, 1).expand(n, size, size, 2).clone()
    labels = torch.nn.functional.one_hot(torch.arange(n), n).float()
    out = layers.CutMix(seed=5)({"images": images, "labels": labels}, training=True)
    mixed, mixed_labels = out["images"], out["labels"]
    for i in range(n):
        values = torch.unique(mixed[i])
        assert len(values) <= 2 and float(ids[i]) in values.tolist() or len(values) == 1
        pasted = (mixed[i, :, :, 0] != ids[i]).float()
        if pasted.sum() > 0:  # the pasted pixels form one rectangle
            rows, cols = pasted.any(1), pasted.any(0)
            assert float(pasted.sum()) == float(rows.sum() * cols.sum())
    np.testing.assert_allclose(mixed_labels.sum(1).numpy(), 1.0, rtol=1e-6)
    assert torch.equal(layers.CutMix()(images, training=False), images)


def test_cutmix_config_and_errors():
    import pytest

    config = layers.CutMix(factor=0.5, seed=2, data_format="channels_first").get_config()
    assert config["factor"] == (0, 0.5) and config["data_format"] == "channels_first"
    assert layers.CutMix.from_config(config).get_config() == config
    with pytest.raises(ValueError, match="factor"):
        layers.CutMix(factor=2.0)
