"""ContrastLimitedAdaptiveHistogramEqualization against Keras 3.15 outputs (keras_augment_reference.json),
plus its properties: the same in training and inference, value range, dtype, unbatched input, configs."""
from __future__ import annotations

import pytest
import torch

from tests.keras.layers._augment_reference import cases_of, check_case
from torchstrategy.keras import layers

CLAHE = layers.ContrastLimitedAdaptiveHistogramEqualization


@pytest.mark.parametrize("case_id", cases_of("ContrastLimitedAdaptiveHistogramEqualization"))
def test_matches_keras(case_id):
    check_case(case_id, atol=1e-3)  # 0..255 values


def test_same_in_training_and_inference_and_within_range():
    images = torch.rand(2, 12, 12, 3) * 255
    layer = CLAHE(tile_grid_size=(3, 3))
    out = layer(images, training=True)
    assert torch.equal(out, layer(images, training=False))
    assert float(out.min()) >= 0.0 and float(out.max()) <= 255.0
    assert not torch.equal(out, images)


def test_one_tile_without_clip_is_global_equalization():
    """One tile and no clipping: every pixel maps through the image's own CDF times 255 / pixels (Keras's
    cdf_min is the CDF at bin 0, here 0)."""
    images = torch.tensor([[[[10.0], [10.0]], [[20.0], [200.0]]]])
    out = CLAHE(tile_grid_size=(1, 1), clip_limit=0)(images)
    # CDF at 10, 20, 200: 2, 3, 4 of 4 pixels
    assert out[0, :, :, 0].tolist() == [[127.5, 127.5], [191.25, 255.0]]


def test_integer_images_keep_their_dtype_and_unbatched_works():
    images = (torch.rand(9, 9, 1) * 255).to(torch.uint8)
    out = CLAHE(tile_grid_size=(3, 3))(images)
    assert out.dtype == torch.uint8 and out.shape == (9, 9, 1)


def test_bad_grid_and_config_round_trip():
    with pytest.raises(ValueError, match="tile_grid_size"):
        CLAHE(tile_grid_size=(0, 2))
    config = CLAHE(value_range=(0, 1), clip_limit=2.0, tile_grid_size=(4, 2)).get_config()
    assert config["tile_grid_size"] == (4, 2) and config["clip_limit"] == 2.0
    assert CLAHE.from_config(config).value_range == (0, 1)
