"""Tests of the image preprocessing layers: deterministic parts (fixed factor ranges, crops, flips) against
values frozen from TF 2.21 (Keras 3.15); random parts by their invariants and statistics."""
import numpy as np
import pytest
import torch

from torchstrategy.keras.layers.preprocessing_image import (
    CenterCrop,
    RandomBrightness,
    RandomContrast,
    RandomCrop,
    RandomFlip,
    RandomRotation,
    RandomTranslation,
    RandomZoom,
    _affine_transform,
)

SQUARE = torch.arange(20, dtype=torch.float32).reshape(1, 4, 5, 1)
BATCH = torch.arange(60, dtype=torch.float32).reshape(2, 5, 6, 1)

# TF 2.21 (Keras 3.15) outputs on SQUARE / BATCH (channel 0 of the first image), rounded to 4 decimals
ROT90 = [
    [3.5, 6.0, 11.0, 16.0, 18.5],
    [2.5, 5.0, 10.0, 15.0, 17.5],
    [1.5, 4.0, 9.0, 14.0, 16.5],
    [0.5, 3.0, 8.0, 13.0, 15.5]]
ROT_SMALL_CONSTANT = [
    [-0.289, 0.9205, 2.8306, 5.3267, 4.3649],
    [2.2846, 4.7807, 7.2769, 9.773, 11.4644],
    [6.3465, 9.227, 11.7231, 14.2193, 16.7154],
    [6.9566, 13.6733, 16.1694, 13.1318, 7.852]]
ROT_SMALL_REFLECT_NEAREST = [
    [5.0, 5.0, 1.0, 2.0, 3.0],
    [10.0, 6.0, 7.0, 8.0, 4.0],
    [15.0, 11.0, 12.0, 13.0, 9.0],
    [16.0, 17.0, 18.0, 14.0, 14.0]]
ZOOM_IN = [
    [4.75, 5.25, 5.75, 6.25, 6.75],
    [7.25, 7.75, 8.25, 8.75, 9.25],
    [9.75, 10.25, 10.75, 11.25, 11.75],
    [12.25, 12.75, 13.25, 13.75, 14.25]]
ZOOM_OUT_CONSTANT = [
    [0.0, 0.1875, 0.5, 0.8125, 0.5],
    [1.875, 4.5, 5.75, 7.0, 3.875],
    [5.625, 12.0, 13.25, 14.5, 7.625],
    [1.875, 3.9375, 4.25, 4.5625, 2.375]]
TRANS_CONSTANT = [
    [0.0, 0.0, 0.0, 0.0, 0.0],
    [1.0, 2.0, 3.0, 4.0, 0.0],
    [6.0, 7.0, 8.0, 9.0, 0.0],
    [11.0, 12.0, 13.0, 14.0, 0.0]]
TRANS_REFLECT = [
    [5.0, 6.0, 7.0, 8.0, 9.0],
    [0.0, 1.0, 2.0, 3.0, 4.0],
    [0.0, 1.0, 2.0, 3.0, 4.0],
    [5.0, 6.0, 7.0, 8.0, 9.0]]
TRANS_WRAP = [
    [13.5, 14.0, 10.5, 11.5, 12.5],
    [18.5, 19.0, 15.5, 16.5, 17.5],
    [3.5, 4.0, 0.5, 1.5, 2.5],
    [8.5, 9.0, 5.5, 6.5, 7.5]]
TRANS_NEAREST = [
    [0.0, 1.0, 2.0, 3.0, 4.0],
    [0.0, 1.0, 2.0, 3.0, 4.0],
    [0.0, 1.0, 2.0, 3.0, 4.0],
    [3.0, 4.0, 5.0, 6.0, 7.0]]
CC_UP = [
    [1.0, 1.625, 2.375, 3.0],
    [5.5, 6.125, 6.875, 7.5],
    [10.5, 11.125, 11.875, 12.5],
    [15.5, 16.125, 16.875, 17.5],
    [20.5, 21.125, 21.875, 22.5],
    [25.0, 25.625, 26.375, 27.0]]
CC_DOWN = [
    [7.0, 8.0, 9.0, 10.0],
    [13.0, 14.0, 15.0, 16.0],
    [19.0, 20.0, 21.0, 22.0]]
RC_TRAIN_EQUAL_H = [
    [1.0, 2.0, 3.0, 4.0],
    [7.0, 8.0, 9.0, 10.0],
    [13.0, 14.0, 15.0, 16.0],
    [19.0, 20.0, 21.0, 22.0],
    [25.0, 26.0, 27.0, 28.0]]
RC_TRAIN_SMALL = [
    [0.0, 0.625, 1.375, 2.125, 2.875, 3.625, 4.375, 5.0],
    [4.5, 5.125, 5.875, 6.625, 7.375, 8.125, 8.875, 9.5],
    [9.5, 10.125, 10.875, 11.625, 12.375, 13.125, 13.875, 14.5],
    [14.5, 15.125, 15.875, 16.625, 17.375, 18.125, 18.875, 19.5],
    [19.5, 20.125, 20.875, 21.625, 22.375, 23.125, 23.875, 24.5],
    [24.0, 24.625, 25.375, 26.125, 26.875, 27.625, 28.375, 29.0]]


def _channel0(out: torch.Tensor) -> np.ndarray:
    return out[0, ..., 0].numpy()


@pytest.mark.parametrize("layer, expected", [
    (lambda: RandomRotation((0.25, 0.25)), ROT90),
    (lambda: RandomRotation((0.05, 0.05), fill_mode="constant", fill_value=-1.0), ROT_SMALL_CONSTANT),
    (lambda: RandomRotation((-0.07, -0.07), interpolation="nearest"), ROT_SMALL_REFLECT_NEAREST),
    (lambda: RandomZoom((-0.5, -0.5)), ZOOM_IN),
    (lambda: RandomZoom((0.5, 0.5), (0.25, 0.25), fill_mode="constant"), ZOOM_OUT_CONSTANT),
    (lambda: RandomTranslation((0.25, 0.25), (-0.2, -0.2), fill_mode="constant"), TRANS_CONSTANT),
    (lambda: RandomTranslation((0.5, 0.5), (0, 0)), TRANS_REFLECT),
    (lambda: RandomTranslation((0.5, 0.5), (0.3, 0.3), fill_mode="wrap"), TRANS_WRAP),
    (lambda: RandomTranslation((0.6, 0.6), (0, 0), fill_mode="nearest"), TRANS_NEAREST),
], ids=["rot90", "rot_constant", "rot_nearest", "zoom_in", "zoom_out", "trans_constant", "trans_reflect",
        "trans_wrap", "trans_nearest"])
def test_affine_layers_with_a_fixed_draw_match_tf(layer, expected):
    out = layer()(SQUARE, training=True)
    assert out.shape == SQUARE.shape and out.dtype == torch.float32
    np.testing.assert_allclose(_channel0(out), expected, atol=1e-4)


def test_affine_transform_projective_and_every_image_its_own_matrix():
    images = torch.stack([SQUARE[0], SQUARE[0] * 2])
    shift = [1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0]  # samples x + 1: content moves left by one
    identity = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]
    out = _affine_transform(images, torch.tensor([shift, identity]), "bilinear", "constant", 7.0)
    assert torch.equal(out[0, :, :4], SQUARE[0, :, 1:]) and torch.all(out[0, :, 4] == 7.0)
    assert torch.equal(out[1], images[1])
    # a projective row (c0 != 0) divides by k = c0 x + 1: at x = 0 the sample stays where it is
    out = _affine_transform(SQUARE, torch.tensor([[1.0, 0, 0, 0, 1.0, 0, 0.5, 0]]), "nearest", "constant", 0.0)
    assert torch.equal(out[0, :, 0], SQUARE[0, :, 0])


def test_random_layers_are_identity_at_inference():
    x = torch.rand(3, 6, 7, 2) * 255
    for layer in [RandomFlip(), RandomRotation(0.3), RandomZoom(0.3), RandomTranslation(0.2, 0.2),
                  RandomContrast(0.5), RandomBrightness(0.3), RandomCrop(4, 4)]:
        assert torch.equal(layer(x, training=False), x), type(layer).__name__
        # a plain layer(x) augments, as Keras 3's call default (training=True): tests/keras/layers/test_base.py
    as_uint8 = RandomFlip()(x.to(torch.uint8), training=False)
    assert as_uint8.dtype == torch.float32  # cast to the compute dtype, as Keras


def test_center_crop_and_random_crop_deterministic_cases():
    np.testing.assert_allclose(_channel0(CenterCrop(3, 4)(BATCH)), CC_DOWN)
    np.testing.assert_allclose(_channel0(CenterCrop(6, 4)(BATCH)), CC_UP, atol=1e-4)
    assert CenterCrop(3, 4)(BATCH[0]).shape == (3, 4, 1)  # a single HWC image
    assert CenterCrop(3, 4)(BATCH.to(torch.uint8)).dtype == torch.float32
    np.testing.assert_allclose(_channel0(RandomCrop(5, 4)(BATCH, training=True)), RC_TRAIN_EQUAL_H)
    np.testing.assert_allclose(_channel0(RandomCrop(6, 8)(BATCH, training=True)), RC_TRAIN_SMALL, atol=1e-4)


def test_random_crop_windows_are_uniform_and_inside_the_image():
    image = torch.arange(8 * 9, dtype=torch.float32).reshape(1, 8, 9, 1)
    layer = RandomCrop(5, 6, seed=3)
    corners = []
    for _ in range(300):
        out = layer(image, training=True)
        assert out.shape == (1, 5, 6, 1)
        top, left = divmod(int(out[0, 0, 0, 0]), 9)
        assert torch.equal(out, image[:, top:top + 5, left:left + 6])  # an actual window of the image
        corners.append((top, left))
    tops, lefts = zip(*corners)
    assert set(tops) == {0, 1, 2, 3} and set(lefts) == {0, 1, 2, 3}
    assert np.abs(np.bincount(tops) / 300 - 0.25).max() < 0.1


def test_random_flip_modes_and_rate():
    x = torch.rand(400, 3, 4, 1)
    both = RandomFlip(seed=1)(x, training=True)
    same = (both == x).flatten(1).all(1)
    rotated = (both == x.flip(1).flip(2)).flatten(1).all(1)
    assert bool((same | rotated).all())  # one draw per image flips both axes or none (Keras 3)
    assert 0.4 < same.float().mean() < 0.6
    horizontal = RandomFlip("horizontal", seed=2)(x, training=True)
    assert bool(((horizontal == x) | (horizontal == x.flip(2))).flatten(1).all(1).all())
    layer = RandomFlip("vertical")
    assert torch.equal(layer._flip(x[:2], torch.tensor([True, False])), torch.stack([x[0].flip(0), x[1]]))
    with pytest.raises(ValueError, match="mode"):
        RandomFlip("diagonal")


def test_seeded_layers_repeat_and_unseeded_vary():
    x = torch.rand(4, 6, 6, 3)
    first = RandomRotation(0.2, seed=5)(x, training=True)
    assert torch.equal(first, RandomRotation(0.2, seed=5)(x, training=True))
    layer = RandomRotation(0.2, seed=5)
    assert not torch.equal(layer(x, training=True), layer(x, training=True))  # the stream advances


def test_rotation_keeps_the_centre_and_the_mean_of_a_symmetric_image():
    image = torch.zeros(1, 9, 9, 1)
    image[0, 4, 4, 0] = 1.0
    out = RandomRotation(0.5, fill_mode="constant", seed=0)(image.expand(50, -1, -1, -1), training=True)
    assert torch.allclose(out[:, 4, 4, 0], torch.ones(50))  # rotation is about the centre pixel


def test_contrast_and_brightness_statistics():
    x = torch.rand(500, 4, 4, 1) * 200 + 20
    mean = x.mean(dim=(1, 2), keepdim=True)
    out = RandomContrast(0.5, seed=0)(x, training=True)
    factor = ((out - mean) / (x - mean))[:, 0, 0, 0]
    # Keras 3.15: a number f draws the contrast factor from [1, 1 + f] (TF 2.21 gave 1.0001..1.4974)
    assert factor.min() >= 1.0 - 1e-4 and factor.max() <= 1.5 + 1e-4 and factor.max() > 1.45
    pair = RandomContrast((0.3, 0.5), seed=0)(x, training=True)
    factor = ((pair - mean) / (x - mean))[:, 0, 0, 0]
    assert factor.min() < 0.75 and factor.min() >= 0.7 - 1e-4 and factor.max() <= 1.5 + 1e-4
    assert RandomContrast(1.0, value_range=(0, 100), seed=0)(x * 10, training=True).max() <= 100
    delta = (RandomBrightness(0.2, seed=0)(torch.full((500, 2, 2, 3), 100.0), training=True) - 100)[:, 0, 0]
    assert torch.equal(delta[:, 0], delta[:, 2])  # one delta per image for every channel
    assert delta.min() >= -51 and delta.max() <= 51 and delta.min() < -40 and delta.max() > 40  # 0.2 * 255
    assert abs(float(delta.mean())) < 5
    clipped = RandomBrightness((0.5, 0.5), value_range=(0, 1))(torch.full((2, 2, 2, 1), 0.75), training=True)
    assert torch.all(clipped == 1.0)


def test_bad_arguments_are_refused_clearly():
    with pytest.raises(ValueError, match="fill_mode"):
        RandomRotation(0.1, fill_mode="mirror")
    with pytest.raises(ValueError, match="interpolation"):
        RandomZoom(0.1, interpolation="bicubic")
    with pytest.raises(ValueError, match="factor"):
        RandomContrast(1.5)
    with pytest.raises(ValueError, match="height_factor"):
        RandomTranslation((0.1, 1.5), 0.1)
    with pytest.raises(ValueError, match="channels_last"):
        RandomFlip(data_format="channels_first")
    with pytest.raises(ValueError, match="images"):
        RandomFlip()(torch.rand(2, 3), training=True)


def test_augmentation_runs_in_fit_and_not_in_predict():
    import torchstrategy as tf

    seen = []

    class Probe(tf.keras.layers.Layer):
        def call(self, inputs, training=None):
            seen.append((bool(training), inputs.detach().clone()))
            return inputs

    x = np.random.RandomState(0).rand(8, 4, 4, 1).astype("float32")
    y = np.zeros((8, 1), dtype="float32")
    model = tf.keras.Sequential([tf.keras.Input((4, 4, 1)), RandomRotation(0.2, fill_mode="constant", seed=1),
                                 Probe(), tf.keras.layers.Flatten(), tf.keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(x, y, epochs=1, batch_size=8, shuffle=False, verbose=0)
    trained = [inputs for training, inputs in seen if training]
    assert len(trained) == 1 and not torch.allclose(trained[0], torch.from_numpy(x))
    seen.clear()
    model.predict(x, batch_size=8, verbose=0)
    assert [training for training, _ in seen] == [False] and torch.equal(seen[0][1], torch.from_numpy(x))


def test_configs_rebuild_the_layers():
    for layer in [CenterCrop(3, 4), RandomCrop(2, 2, seed=1), RandomFlip("vertical", seed=2),
                  RandomRotation((-0.1, 0.2), fill_mode="wrap", seed=3), RandomZoom(0.2, (0.1, 0.3)),
                  RandomTranslation(0.1, 0.2, interpolation="nearest"), RandomContrast(0.3, value_range=(0, 1)),
                  RandomBrightness((-0.1, 0.2))]:
        config = layer.get_config()
        clone = type(layer).from_config({**config, "name": config["name"] + "_clone"})
        assert {k: v for k, v in clone.get_config().items() if k != "name"} == \
            {k: v for k, v in config.items() if k != "name"}


def test_random_crop_output_shape_is_the_crops():
    # Keras 3.15: RandomCrop(2, 3).compute_output_shape((None, 8, 9, 3)) == (None, 2, 3, 3); (8, 9, 3) -> (2, 3, 3).
    from torchstrategy.keras import layers as keras_layers

    assert keras_layers.RandomCrop(2, 3).compute_output_shape((None, 8, 9, 3)) == (None, 2, 3, 3)
    assert keras_layers.RandomCrop(2, 3).compute_output_shape((8, 9, 3)) == (2, 3, 3)
