"""keras.preprocessing (image, sequence, the dataset functions) and their keras.utils aliases, against
outputs of TF 2.21 / Keras 3 frozen in keras_preprocessing_reference.json."""
import io
import json
import pathlib

import numpy as np
import pytest

import torchstrategy as tf

keras = tf.keras
pytest.importorskip("PIL")

# TF 2.21 / Keras 3 outputs (keras.preprocessing.sequence.pad_sequences, keras.preprocessing.image.*),
# produced by the same inputs as below.
REFERENCE = json.loads((pathlib.Path(__file__).parent / "keras_preprocessing_reference.json").read_text())
SEQUENCES = [[1, 2, 3, 4], [5], [], [6, 7]]


@pytest.mark.parametrize("kwargs", [{}, {"maxlen": 3}, {"maxlen": 3, "padding": "post", "truncating": "post"},
                                    {"maxlen": 2, "truncating": "post", "value": -1},
                                    {"dtype": "float32", "value": 0.5}])
def test_pad_sequences_matches_keras(kwargs):
    out = keras.preprocessing.sequence.pad_sequences(SEQUENCES, **kwargs)
    assert out.dtype == np.dtype(kwargs.get("dtype", "int32"))
    np.testing.assert_array_equal(out, np.array(REFERENCE[json.dumps(kwargs)], dtype=out.dtype))


def test_pad_sequences_nested_strings_and_errors():
    pad = keras.utils.pad_sequences
    np.testing.assert_array_equal(pad([[[1, 2], [3, 4]], [[5, 6]]], maxlen=3), REFERENCE["nested"])
    assert pad([["a", "b"], ["c"]], dtype=object, value="_").tolist() == REFERENCE["strings"]
    with pytest.raises(ValueError, match='Padding type "mid" not understood'):
        pad(SEQUENCES, padding="mid")
    with pytest.raises(ValueError, match='Truncating type "mid" not understood'):
        pad(SEQUENCES, truncating="mid")
    with pytest.raises(ValueError, match="not compatible with `value`"):
        pad(SEQUENCES, value="x")
    with pytest.raises(ValueError, match="non-iterable"):
        pad([[1], 2])
    with pytest.raises(ValueError, match="differs from the expected shape"):
        pad([[[1, 2]], [[1, 2, 3]]])


def test_smart_resize_matches_keras():
    x = np.arange(7 * 5 * 3, dtype="float32").reshape(7, 5, 3)
    image = keras.preprocessing.image
    np.testing.assert_allclose(image.smart_resize(x, (4, 4)).numpy(), REFERENCE["smart"], atol=1e-4)
    np.testing.assert_allclose(image.smart_resize(x, (3, 6), interpolation="nearest").numpy(),
                               REFERENCE["smart_nearest"], atol=0)
    batch = image.smart_resize(np.stack([x, x + 1]), (4, 4)).numpy()
    np.testing.assert_allclose(batch[1] - 1, REFERENCE["smart"], atol=1e-4)
    with pytest.raises(ValueError, match="rank"):
        image.smart_resize(np.zeros((3, 3)), (2, 2))


def _reference_images(tmp_path):
    rng = np.random.default_rng(3)
    arr = rng.uniform(-1, 3, size=(6, 9, 3)).astype("float32")
    pixels = rng.integers(0, 256, size=(10, 14, 3)).astype("uint8")
    path = tmp_path / "p.png"
    keras.preprocessing.image.array_to_img(pixels, scale=False).save(path, format="PNG")
    return arr, pixels, path


def test_image_conversions_and_load_img_match_keras(tmp_path):
    image = keras.preprocessing.image
    arr, pixels, path = _reference_images(tmp_path)
    img = image.array_to_img(arr)
    np.testing.assert_array_equal(image.img_to_array(img), REFERENCE["array_to_img"])
    assert list(image.img_to_array(img, data_format="channels_first").shape) == REFERENCE["img_to_array_cf"]
    np.testing.assert_array_equal(image.img_to_array(image.load_img(path)), pixels.astype("float32"))
    np.testing.assert_array_equal(image.img_to_array(image.load_img(str(path), target_size=(5, 4))),
                                  REFERENCE["load_nearest"])
    kept = image.load_img(path, target_size=(4, 4), interpolation="bilinear", keep_aspect_ratio=True)
    np.testing.assert_array_equal(image.img_to_array(kept), REFERENCE["load_keep"])
    np.testing.assert_array_equal(image.img_to_array(image.load_img(io.BytesIO(path.read_bytes()),
                                                                    color_mode="grayscale")), REFERENCE["load_gray"])
    with pytest.raises(ValueError, match="color_mode"):
        image.load_img(path, color_mode="cmyk")
    with pytest.raises(ValueError, match="Invalid interpolation"):
        image.load_img(path, target_size=(3, 3), interpolation="fancy")
    with pytest.raises(ValueError, match="rank 3"):
        image.array_to_img(np.zeros((2, 2)))


def test_save_img_round_trip_and_namespace(tmp_path):
    _, pixels, _ = _reference_images(tmp_path)
    target = tmp_path / "saved.png"
    keras.utils.save_img(target, pixels, scale=False)
    np.testing.assert_array_equal(keras.utils.img_to_array(keras.utils.load_img(target)), pixels)
    from torchstrategy.keras import dataset_utils

    assert keras.preprocessing.image_dataset_from_directory is dataset_utils.image_dataset_from_directory
    assert keras.preprocessing.text_dataset_from_directory is dataset_utils.text_dataset_from_directory
    assert keras.preprocessing.timeseries_dataset_from_array is dataset_utils.timeseries_dataset_from_array
    assert keras.utils.array_to_img is keras.preprocessing.image.array_to_img
