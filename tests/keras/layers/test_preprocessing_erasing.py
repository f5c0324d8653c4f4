"""RandomErasing against Keras 3.15 (transform_images with hand-written transformations, frozen in
keras_augment_reference.json) and its random draws: how many images change, box sizes, fills, seeds."""
from __future__ import annotations

import pytest
import torch

from tests.keras.layers._augment_reference import cases_of, check_case
from torchstrategy.keras import layers


@pytest.mark.parametrize("case_id", cases_of("RandomErasing"))
def test_matches_keras(case_id):
    check_case(case_id)


def test_inference_is_identity_and_training_changes_images():
    images = torch.rand(4, 8, 8, 3) * 255
    layer = layers.RandomErasing(seed=1)
    assert torch.equal(layer(images, training=False), images)
    assert not torch.equal(layer(images, training=True), images)


@pytest.mark.parametrize("factor,share", [(0.0, 0.0), ((0.3, 0.3), 0.3), (1.0, None)])
def test_share_of_images_erased(factor, share):
    images = torch.full((600, 10, 10, 1), 100.0)
    out = layers.RandomErasing(factor=factor, fill_value=0, seed=3)(images, training=True)
    changed = float((out != images).flatten(1).any(1).float().mean())
    if share is None:  # factor 1.0 draws the probability from [0, 1]: about half
        assert 0.4 < changed < 0.6
    else:
        assert abs(changed - share) < 0.06


def test_box_area_follows_scale_and_fill_stays_in_range():
    images = torch.full((300, 20, 20, 1), 0.5)
    layer = layers.RandomErasing(factor=(1.0, 1.0), scale=(0.25, 0.25), value_range=(0, 1), seed=5)
    out = layer(images, training=True)
    erased = (out != images).flatten(1).float().sum(1)
    # sides sqrt(0.25) = 0.5 of 20 -> a 10 x 10 box (a few noise values may equal 0.5 only by chance)
    assert float(erased.median()) == 100.0
    assert float(out.min()) >= 0.0 and float(out.max()) <= 1.0


def test_per_channel_fill_value_and_channels_first():
    images = torch.zeros(1, 3, 6, 6)
    layer = layers.RandomErasing(factor=(1.0, 1.0), scale=(0.5, 0.5), fill_value=(10, 20, 30),
                                 data_format="channels_first", seed=0)
    last = layers.RandomErasing(factor=(1.0, 1.0), scale=(0.5, 0.5), fill_value=(10, 20, 30), seed=0)
    out = last(torch.zeros(2, 6, 6, 3), training=True)
    assert set(out[..., 0].unique().tolist()) == {0.0, 10.0}
    assert set(out[..., 2].unique().tolist()) == {0.0, 30.0}
    first = layer(images, training=True)  # channels_first: the three values go to the three channels
    assert set(first[:, 0].unique().tolist()) == {0.0, 10.0} and set(first[:, 1].unique().tolist()) == {0.0, 20.0}


def test_seeded_layers_repeat_and_unbatched_images_work():
    images = torch.rand(3, 8, 8, 3) * 255
    a = layers.RandomErasing(seed=11)(images, training=True)
    b = layers.RandomErasing(seed=11)(images, training=True)
    assert torch.equal(a, b)
    single = layers.RandomErasing(factor=(1.0, 1.0), fill_value=0, seed=2)(images[0], training=True)
    assert single.shape == images[0].shape and not torch.equal(single, images[0])


def test_dict_inputs_keep_labels_and_boxes():
    data = {"images": torch.rand(2, 8, 8, 3), "labels": torch.tensor([[1.0, 0.0], [0.0, 1.0]])}
    out = layers.RandomErasing(seed=1, value_range=(0, 1))(data, training=True)
    assert torch.equal(out["labels"], data["labels"]) and out["images"].shape == (2, 8, 8, 3)


@pytest.mark.parametrize("kwargs,message", [
    ({"factor": 1.5}, "factor"), ({"scale": (2, 3)}, "scale"), ({"fill_value": (1, 2)}, "fill_value"),
])
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        layers.RandomErasing(**kwargs)


def test_config_round_trip():
    layer = layers.RandomErasing(factor=0.4, scale=(0.1, 0.2), fill_value=3.0, value_range=(0, 10), seed=4)
    config = layer.get_config()
    assert config["factor"] == (0, 0.4) and config["scale"] == (0.1, 0.2) and config["seed"] == 4
    clone = layers.RandomErasing.from_config(config)
    assert clone.get_config()["scale"] == (0.1, 0.2)
