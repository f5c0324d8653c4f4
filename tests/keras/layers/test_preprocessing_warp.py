"""RandomShear, RandomPerspective and RandomElasticTransform: fixed transformations against Keras 3.15 numbers
(keras_augment_reference.json), then their random draws (factor 0 = identity, share of images changed, ranges),
segmentation masks, data formats, seeds and bad arguments."""
from __future__ import annotations

import pytest
import torch

from tests.keras.layers._augment_reference import cases_of, check_case
from torchstrategy.keras import layers
from torchstrategy.keras.layers.preprocessing_warp import homography, map_coordinates


@pytest.mark.parametrize("case_id", cases_of("RandomShear", "RandomPerspective"))
def test_matches_keras(case_id):
    check_case(case_id, atol=2e-5)


@pytest.mark.parametrize("make", [
    lambda: layers.RandomShear(0.3, 0.3, seed=1), lambda: layers.RandomPerspective(seed=1),
    lambda: layers.RandomElasticTransform(seed=1),
])
def test_inference_is_identity_and_training_is_not(make):
    images = torch.rand(2, 16, 16, 3) * 255
    layer = make()
    assert torch.equal(layer(images, training=False), images)
    assert not torch.equal(layer(images, training=True), images)


@pytest.mark.parametrize("make", [
    lambda: layers.RandomShear(0.0, 0.0), lambda: layers.RandomPerspective(factor=0.0),
    lambda: layers.RandomPerspective(scale=0.0), lambda: layers.RandomElasticTransform(factor=0.0),
    lambda: layers.RandomElasticTransform(scale=0.0),
])
def test_zero_strength_is_identity(make):
    images = torch.rand(3, 9, 9, 2) * 255
    torch.testing.assert_close(make()(images, training=True), images, rtol=0, atol=1e-4)


def test_shear_moves_rows_by_the_factor():
    """x_factor s samples the input at x + s * y: row y shifts by s * y pixels (an exact integer shift here)."""
    images = torch.arange(8.0).repeat(8, 1).reshape(1, 8, 8, 1)
    layer = layers.RandomShear(x_factor=1.0, fill_mode="constant", fill_value=-1.0)
    out = layer.transform_images(images, {"shear_factor": torch.tensor([[1.0, 0.0]])})
    assert out[0, 3, 0, 0] == 3.0 and out[0, 3, 4, 0] == 7.0 and out[0, 3, 5, 0] == -1.0


def test_shear_signs_are_both_drawn():
    layer = layers.RandomShear(x_factor=(0.2, 0.2), seed=3)
    draws = layer.get_random_transformation(torch.zeros(400, 4, 4, 1))["shear_factor"]
    torch.testing.assert_close(draws[:, 0].abs(), torch.full((400,), 0.2))
    assert 0.4 < float((draws[:, 0] > 0).float().mean()) < 0.6
    assert float(draws[:, 1].abs().max()) == 0.0


def test_perspective_share_of_images_changed():
    images = torch.rand(500, 6, 6, 1) * 255
    layer = layers.RandomPerspective(factor=(0.3, 0.3), scale=0.5, seed=2)
    out = layer(images, training=True)
    share = float((out != images).flatten(1).any(1).float().mean())
    assert abs(share - 0.3) < 0.06


def test_homography_maps_end_points_to_start_points():
    start = torch.tensor([[[0.0, 0.0], [9.0, 0.0], [0.0, 7.0], [9.0, 7.0]]], dtype=torch.float64)
    end = start + start * torch.tensor([[[0.1, -0.1], [0.2, 0.05], [-0.1, 0.1], [0.05, -0.2]]], dtype=torch.float64)
    t = homography(start, end)[0]
    for (sx, sy), (ex, ey) in zip(start[0].tolist(), end[0].tolist()):
        k = t[6] * ex + t[7] * ey + 1
        assert float((t[0] * ex + t[1] * ey + t[2]) / k) == pytest.approx(sx, abs=1e-9)
        assert float((t[3] * ex + t[4] * ey + t[5]) / k) == pytest.approx(sy, abs=1e-9)


def test_elastic_share_changed_values_clipped_and_seeded():
    images = torch.rand(200, 20, 20, 1) * 255
    layer = layers.RandomElasticTransform(factor=(0.4, 0.4), scale=(0.5, 1.0), seed=4)
    out = layer(images, training=True)
    share = float((out != images).flatten(1).any(1).float().mean())
    assert abs(share - 0.4) < 0.1
    assert float(out.min()) >= 0.0 and float(out.max()) <= 255.0
    again = layers.RandomElasticTransform(factor=(0.4, 0.4), scale=(0.5, 1.0), seed=4)(images, training=True)
    assert torch.equal(out, again)


def test_elastic_keeps_a_constant_image_with_nearest_fill():
    images = torch.full((2, 30, 30, 3), 77.0)
    out = layers.RandomElasticTransform(fill_mode="nearest", seed=0)(images, training=True)
    torch.testing.assert_close(out, images)


def test_map_coordinates_modes():
    image = torch.arange(4.0).reshape(1, 1, 4, 1)
    xs = torch.tensor([[[-1.0, 0.5, 4.0, 5.0]]])
    ys = torch.zeros(1, 1, 4)
    row = lambda mode, fill=0.0: map_coordinates(image, ys, xs, "bilinear", mode, fill)[0, 0, :, 0].tolist()
    assert row("constant", -5.0) == [-5.0, 0.5, -5.0, -5.0]
    assert row("nearest") == [0.0, 0.5, 3.0, 3.0]
    assert row("wrap") == [3.0, 0.5, 0.0, 1.0]
    assert row("reflect") == [1.0, 0.5, 3.0, 2.0]  # Keras folds negatives by abs()


def test_segmentation_masks_follow_with_nearest_sampling():
    images = torch.rand(1, 8, 8, 1)
    masks = (torch.arange(64).reshape(1, 8, 8, 1) % 3).to(torch.int64)
    layer = layers.RandomShear(x_factor=0.5, seed=7)
    out = layer({"images": images, "segmentation_masks": masks}, training=True)
    assert out["segmentation_masks"].dtype == torch.int64
    assert set(out["segmentation_masks"].unique().tolist()) <= {0, 1, 2}


def test_boxes_are_refused_with_a_clear_message():
    layer = layers.RandomPerspective(bounding_box_format="xyxy", seed=1)
    data = {"images": torch.rand(1, 8, 8, 3), "bounding_boxes": {"boxes": torch.ones(1, 1, 4),
                                                                 "labels": torch.ones(1, 1)}}
    with pytest.raises(NotImplementedError, match="does not move bounding boxes"):
        layer(data, training=True)
    with pytest.raises(ValueError, match="bounding box format"):
        layers.RandomShear(0.2)(data, training=True)


def test_channels_first_matches_channels_last():
    images = torch.rand(2, 7, 9, 3)
    transformation = {"shear_factor": torch.tensor([[0.2, -0.3], [0.1, 0.25]])}
    last = layers.RandomShear(0.3, 0.3).transform_images(images, transformation)
    first = layers.RandomShear(0.3, 0.3, data_format="channels_first").transform_images(
        images.permute(0, 3, 1, 2), transformation)
    torch.testing.assert_close(first.permute(0, 2, 3, 1), last)


@pytest.mark.parametrize("make,error,message", [
    (lambda: layers.RandomShear(x_factor=1.5), ValueError, "x_factor"),
    (lambda: layers.RandomShear(fill_mode="mirror"), NotImplementedError, "fill_mode"),
    (lambda: layers.RandomShear(interpolation="bicubic"), NotImplementedError, "interpolation"),
    (lambda: layers.RandomPerspective(scale=2.0), ValueError, "scale"),
    (lambda: layers.RandomElasticTransform(fill_mode="edge"), NotImplementedError, "fill_mode"),
    (lambda: layers.RandomElasticTransform(scale=3), ValueError, "scale"),
])
def test_bad_arguments(make, error, message):
    with pytest.raises(error, match=message):
        make()


def test_configs_round_trip():
    for layer in (layers.RandomShear(0.1, (0.2, 0.3), fill_mode="wrap", seed=2),
                  layers.RandomPerspective(factor=0.5, scale=0.3, interpolation="nearest", seed=2),
                  layers.RandomElasticTransform(factor=0.2, scale=0.4, fill_mode="constant", seed=2)):
        config = layer.get_config()
        assert type(layer).from_config(config).get_config() == {**config, "name": config["name"]}
