"""ImageDataGenerator (draws, apply/random_transform, standardize, fit, flow) against Keras 3.15 numbers frozen
in keras_imggen_reference.json (same NumPy seeds, so the same draws), and model.fit on datagen.flow(...)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from torchstrategy import keras
from tests.keras.preprocessing._imggen_reference import REFERENCE

IMG = keras.preprocessing.image
GEN = REFERENCE["generator"]
FULL = {"rotation_range": 30, "width_shift_range": 0.2, "height_shift_range": [1, 2], "shear_range": 10,
        "zoom_range": 0.2, "channel_shift_range": 20.0, "brightness_range": [0.8, 1.2], "horizontal_flip": True,
        "vertical_flip": True, "fill_mode": "reflect"}


def test_get_random_transform_draws_what_keras_draws():
    params = IMG.ImageDataGenerator(**FULL).get_random_transform((5, 6, 3), seed=5)
    assert set(params) == set(GEN["params"])
    for key, want in GEN["params"].items():
        assert (params[key] is None) == (want is None), key
        if want is not None:
            assert float(params[key]) == pytest.approx(want, rel=1e-12), key


def test_random_transform_matches_keras():
    pytest.importorskip("PIL")  # the brightness step goes through PIL, as in Keras
    x = np.asarray(GEN["x"], np.float32)
    out = IMG.ImageDataGenerator(**FULL).random_transform(x, seed=5)
    np.testing.assert_allclose(out, np.asarray(GEN["random_transform"]), rtol=1e-5, atol=1e-3)


@pytest.mark.filterwarnings("ignore:Expected input to be images")
def test_fit_statistics_and_standardize_match_keras():
    ref = GEN["fit"]
    data = np.asarray(ref["data"], np.float32)  # 2 channels: fit warns, as in Keras
    gen = IMG.ImageDataGenerator(featurewise_center=True, featurewise_std_normalization=True, rescale=2.0)
    gen.fit(data)
    np.testing.assert_allclose(gen.mean, np.asarray(ref["mean"]), rtol=1e-5)
    np.testing.assert_allclose(gen.std, np.asarray(ref["std"]), rtol=1e-5)
    np.testing.assert_allclose(gen.standardize(np.copy(data[0])), np.asarray(ref["standardized"]), rtol=1e-4,
                               atol=1e-5)
    with pytest.warns(UserWarning, match="zca_whitening"):
        zca = IMG.ImageDataGenerator(zca_whitening=True, zca_epsilon=0.1)
    zca.fit(data)
    np.testing.assert_allclose(zca.zca_whitening_matrix, np.asarray(ref["zca_matrix"]), rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(zca.standardize(np.copy(data[:2])), np.asarray(ref["zca_standardized"]),
                               rtol=1e-3, atol=1e-4)
    aug = IMG.ImageDataGenerator(featurewise_center=True, rotation_range=20)
    aug.fit(data, augment=True, rounds=2, seed=3)
    np.testing.assert_allclose(aug.mean, np.asarray(ref["augmented_mean"]), rtol=1e-5)


def test_standardize_before_fit_warns_and_fit_checks_rank():
    gen = IMG.ImageDataGenerator(featurewise_center=True)
    with pytest.warns(UserWarning, match="hasn't been fit"):
        gen.standardize(np.ones((2, 2, 1), np.float32))
    with pytest.raises(ValueError, match="rank 4"):
        gen.fit(np.zeros((2, 2, 1)))


def test_flow_batches_match_keras_with_seed_and_validation_split():
    ref = GEN["flow"]
    images = np.asarray(ref["images"], np.float32)
    labels = np.asarray(ref["labels"])
    gen = IMG.ImageDataGenerator(rotation_range=15, width_shift_range=0.1, horizontal_flip=True,
                                 samplewise_center=True, validation_split=0.3)
    train = gen.flow(images, labels, batch_size=3, shuffle=True, seed=9, subset="training")
    val = gen.flow(images, labels, batch_size=3, shuffle=False, subset="validation")
    assert isinstance(train, keras.utils.PyDataset) and isinstance(train, IMG.Iterator)
    assert (len(train), len(val)) == (ref["len_train"], ref["len_val"])
    first, second = train[0], train[1]
    np.testing.assert_allclose(first[0], np.asarray(ref["train0_x"]), rtol=1e-4, atol=1e-3)
    np.testing.assert_array_equal(first[1], ref["train0_y"])
    np.testing.assert_allclose(second[0], np.asarray(ref["train1_x"]), rtol=1e-4, atol=1e-3)
    np.testing.assert_array_equal(second[1], ref["train1_y"])
    np.testing.assert_array_equal(val[0][1], ref["val0_y"])
    nxt = gen.flow(images, labels, batch_size=4, shuffle=True, seed=2)
    assert [next(nxt)[1].tolist() for _ in range(4)] == GEN["flow_next"]


def test_flow_channels_first_constant_fill_matches_keras():
    images = np.asarray(GEN["flow"]["images"], np.float32)
    gen = IMG.ImageDataGenerator(rotation_range=25, zoom_range=[0.8, 1.1], data_format="channels_first",
                                 fill_mode="constant", cval=1.0)
    batch = gen.flow(np.transpose(images[:2], (0, 3, 1, 2)), batch_size=2, shuffle=False, seed=4)[0]
    np.testing.assert_allclose(batch, np.asarray(GEN["flow_channels_first"]["x"]), rtol=1e-4, atol=1e-3)


def test_flow_extras_sample_weight_and_errors(tmp_path):
    x = np.random.rand(6, 4, 4, 3).astype("float32")
    extra = np.arange(6) * 10
    gen = IMG.ImageDataGenerator(rescale=0.5)
    bx, by, bw = gen.flow((x, extra), np.arange(6), batch_size=4, shuffle=False,
                          sample_weight=np.linspace(0, 1, 6))[1]
    np.testing.assert_allclose(bx[0], x[4:] * 0.5)
    np.testing.assert_array_equal(bx[1], [40, 50])
    np.testing.assert_array_equal(by, [4, 5])
    np.testing.assert_allclose(bw, [0.8, 1.0])
    with pytest.raises(ValueError, match="same length"):
        gen.flow(x, np.arange(5))
    with pytest.raises(ValueError, match="rank 4"):
        gen.flow(x[0])
    with pytest.raises(ValueError, match="different number of classes"):
        IMG.ImageDataGenerator(validation_split=0.5).flow(x, np.array([0, 0, 0, 1, 1, 1]), subset="training")
    with pytest.raises(ValueError, match="Invalid subset"):
        IMG.ImageDataGenerator(validation_split=0.5).flow(x, subset="test")
    with pytest.raises(ValueError, match="length 2"):
        gen.flow(x, batch_size=3)[2]
    gen.flow(x[:2], batch_size=2, save_to_dir=str(tmp_path), save_prefix="aug")[0]
    assert len(list(tmp_path.glob("aug_*.png"))) == 2


def test_constructor_checks():
    with pytest.raises(ValueError, match="zoom_range"):
        IMG.ImageDataGenerator(zoom_range=(1, 2, 3))
    with pytest.raises(ValueError, match="validation_split"):
        IMG.ImageDataGenerator(validation_split=1.5)
    with pytest.raises(ValueError, match="brightness_range"):
        IMG.ImageDataGenerator(brightness_range=0.2)
    with pytest.raises(ValueError, match="data_format"):
        IMG.ImageDataGenerator(data_format="nhwc")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gen = IMG.ImageDataGenerator(featurewise_std_normalization=True, samplewise_std_normalization=True)
    assert gen.featurewise_center and gen.samplewise_center and len(caught) == 2
    assert IMG.ImageDataGenerator(zoom_range=0.25).zoom_range == [0.75, 1.25]


def test_model_fit_trains_on_datagen_flow():
    rng = np.random.RandomState(0)
    y = (np.arange(64) % 2).astype("float32")
    x = (rng.rand(64, 8, 8, 1) * 0.2 + y[:, None, None, None]).astype("float32")  # class 1: bright images
    gen = IMG.ImageDataGenerator(horizontal_flip=True, vertical_flip=True)
    model = keras.Sequential([keras.Input((8, 8, 1)), keras.layers.Flatten(), keras.layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer=keras.optimizers.Adam(0.05), loss="binary_crossentropy", metrics=["accuracy"])
    history = model.fit(gen.flow(x, y, batch_size=16, seed=1), epochs=6, verbose=0)
    assert len(history.history["loss"]) == 6
    assert history.history["loss"][-1] < history.history["loss"][0]
    assert history.history["accuracy"][-1] > 0.9
    probabilities = model.predict(x, verbose=0).reshape(-1)
    assert np.mean((probabilities > 0.5) == (y == 1)) > 0.9
