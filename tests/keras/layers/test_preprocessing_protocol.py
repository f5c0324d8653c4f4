"""The augmentation protocol shared by the Keras 3 augmentation layers: factor parsing, value-range rescaling,
one draw per call handed to every entry of a dict, unbatched images, dtype and rank checks."""
from __future__ import annotations

import inspect

import pytest
import torch

from torchstrategy.keras import layers
from torchstrategy.keras.layers.preprocessing_protocol import AugmentationLayer, factor_pair, rescale


def test_factor_pair_follows_keras():
    assert factor_pair(0.3, "factor") == (0, 0.3)
    assert factor_pair(0.3, "factor", bounds=(-1, 1)) == (-0.3, 0.3)
    assert factor_pair((0.5, 0.2), "factor") == (0.2, 0.5)
    assert factor_pair((-3, 0.5), "factor") == (-3, 0.5)  # Keras only rejects a pair wholly outside the bounds
    for bad in (1.5, (2, 3), (0.1,), "0.5", True):
        with pytest.raises(ValueError, match="factor"):
            factor_pair(bad, "factor")


def test_rescale():
    x = torch.tensor([0.0, 0.5, 1.0])
    assert rescale(x, (0, 1), (0, 255)).tolist() == [0.0, 127.5, 255.0]
    assert rescale(x, (0, 1), (0, 1)) is x


class _AddOne(AugmentationLayer):
    """Adds the drawn amount to the images and to the labels, so a test can see one draw reach both."""

    def get_random_transformation(self, data, training=True, seed=None):
        return None if not training else {"amount": self._uniform((), 1.0, 2.0, torch.device("cpu"), seed)}

    def _augment(self, images, transformation):
        return images + transformation["amount"]

    def transform_labels(self, labels, transformation, training=True):
        return labels if transformation is None else labels + transformation["amount"]


def test_one_draw_reaches_images_and_labels():
    layer = _AddOne(seed=1)
    out = layer({"images": torch.zeros(2, 3, 3, 1), "labels": torch.zeros(2, 1)}, training=True)
    amount = out["labels"][0, 0]
    assert 1.0 <= float(amount) <= 2.0
    assert torch.equal(out["images"], torch.full((2, 3, 3, 1), float(amount)))
    unbatched = layer({"images": torch.zeros(3, 3, 1), "labels": torch.zeros(1)}, training=True)
    assert unbatched["images"].shape == (3, 3, 1) and unbatched["labels"].shape == (1,)
    inference = layer({"images": torch.zeros(1, 3, 3, 1), "labels": torch.zeros(1, 1)}, training=False)
    assert float(inference["images"].abs().sum()) == 0.0 and float(inference["labels"].sum()) == 0.0


def test_images_are_cast_to_the_compute_dtype_and_rank_is_checked():
    out = layers.RandomErasing(seed=0)(torch.zeros(1, 4, 4, 3, dtype=torch.uint8), training=False)
    assert out.dtype == torch.float32
    with pytest.raises(ValueError, match="rank 3"):
        layers.RandomShear(0.1)(torch.zeros(4, 4))


def test_a_call_with_no_training_flag_augments_as_keras():
    images = torch.rand(2, 8, 8, 3) * 255
    layer = layers.RandomShear(0.4, 0.4, seed=2)
    assert not torch.equal(layer(images), images)


@pytest.mark.parametrize("make", [
    lambda: layers.RandAugment(), lambda: layers.AugMix(), lambda: layers.RandomShear(0.2),
    lambda: layers.RandomPerspective(), lambda: layers.RandomElasticTransform(), lambda: layers.RandomErasing(),
    lambda: layers.ContrastLimitedAdaptiveHistogramEqualization(), lambda: layers.MaxNumBoundingBoxes(2),
])
def test_torch_module_methods_still_work(make):
    """The layers are torch modules: .to()/.float() walk them (nn.Module._apply must stay torch's)."""
    layer = make().to("cpu").float()
    assert layer.state_dict() == {} or all(isinstance(v, torch.Tensor) for v in layer.state_dict().values())


def test_layers_train_predict_save_and_load_in_a_model(tmp_path):
    from torchstrategy import keras

    model = keras.Sequential([keras.Input((12, 12, 3)), layers.RandAugment(value_range=(0, 1), seed=1),
                              layers.RandomErasing(value_range=(0, 1), seed=2), layers.RandomShear(0.2, 0.2),
                              layers.Flatten(), layers.Dense(2)])
    model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    x = torch.rand(8, 12, 12, 3).numpy()
    history = model.fit(x, (torch.arange(8) % 2).numpy(), epochs=1, verbose=0)
    assert history.history["loss"][0] > 0
    first = model.predict(x, verbose=0)
    assert (first == model.predict(x, verbose=0)).all()  # no augmentation at inference
    model.save(tmp_path / "m.keras")
    reloaded = keras.models.load_model(tmp_path / "m.keras")
    assert abs(reloaded.predict(x, verbose=0) - first).max() < 1e-5


@pytest.mark.parametrize("make", [
    lambda: layers.AutoContrast(), lambda: layers.Equalization(), lambda: layers.RandomColorDegeneration(0.5),
    lambda: layers.RandomColorJitter(brightness_factor=0.2), lambda: layers.RandomGaussianBlur(),
    lambda: layers.RandomGrayscale(), lambda: layers.RandomHue(0.2), lambda: layers.RandomInvert(),
    lambda: layers.RandomPosterization(4), lambda: layers.RandomSaturation(0.2), lambda: layers.RandomSharpness(0.2),
    lambda: layers.Solarization(), lambda: layers.MixUp(), lambda: layers.CutMix(), lambda: layers.Resizing(2, 3),
], ids=lambda make: type(make()).__name__)
def test_augmentation_call_takes_data_and_training_as_keras(make):
    # Keras 3.15: every augmentation layer's call is (self, data, training=True); positional calls still work.
    layer = make()
    assert list(inspect.signature(type(layer).call).parameters) == ["self", "data", "training"]
    images = torch.rand(2, 4, 5, 3) * 255
    by_keyword = layer.call(data=images, training=False)
    by_position = layer(images, training=False)
    assert torch.equal(torch.as_tensor(by_keyword), torch.as_tensor(by_position))
