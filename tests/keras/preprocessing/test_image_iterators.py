"""Iterator / NumpyArrayIterator / DirectoryIterator: flow_from_directory over real PNG folders written here,
against Keras 3.15 (file order, classes, subsets, batches) frozen in keras_imggen_reference.json."""
from __future__ import annotations

import numpy as np
import pytest

from torchstrategy import keras
from tests.keras.preprocessing._imggen_reference import REFERENCE, write_images

IMG = keras.preprocessing.image
DIR = REFERENCE["directory"]
pytest.importorskip("PIL")


@pytest.fixture()
def image_root(tmp_path):
    write_images(tmp_path)
    return tmp_path


def test_flow_from_directory_lists_and_reads_like_keras(image_root, capsys):
    gen = IMG.ImageDataGenerator(rescale=1 / 255.0, validation_split=0.5)
    it = gen.flow_from_directory(str(image_root), target_size=(4, 5), batch_size=2, shuffle=False)
    assert "Found 5 images belonging to 2 classes." in capsys.readouterr().out
    assert isinstance(it, IMG.DirectoryIterator) and isinstance(it, keras.utils.PyDataset)
    assert it.filenames == DIR["filenames"]
    assert it.classes.tolist() == DIR["classes"] and it.class_indices == DIR["class_indices"]
    assert it.labels.tolist() == DIR["classes"] and it.sample_weight is None
    assert [p[len(str(image_root)) + 1:] for p in it.filepaths] == DIR["filenames"]
    x, y = it[0]
    np.testing.assert_allclose(x, np.asarray(DIR["batch0_x"]), rtol=1e-6)
    np.testing.assert_array_equal(y, DIR["batch0_y"])
    assert len(it) == 3 and it[2][0].shape == (1, 4, 5, 3)


def test_directory_subsets_grayscale_and_class_modes(image_root):
    gen = IMG.ImageDataGenerator(rescale=1 / 255.0, validation_split=0.5)
    train = gen.flow_from_directory(str(image_root), target_size=(4, 5), batch_size=2, subset="training",
                                    class_mode="sparse", color_mode="grayscale", shuffle=False)
    assert train.filenames == DIR["train_filenames"]
    np.testing.assert_allclose(train[0][0], np.asarray(DIR["train_batch0_x"]), rtol=1e-6)
    np.testing.assert_array_equal(train[0][1], DIR["train_batch0_y"])
    val = gen.flow_from_directory(str(image_root), target_size=(4, 5), batch_size=2, subset="validation",
                                  class_mode="binary", shuffle=False)
    assert val.filenames == DIR["val_filenames"]
    assert set(val.filenames).isdisjoint(train.filenames)
    only_b = gen.flow_from_directory(str(image_root), target_size=(4, 5), classes=["b"], class_mode=None,
                                     shuffle=False)
    assert only_b.filenames == [f for f in DIR["filenames"] if f.startswith("b")]
    assert only_b[0].shape == (2, 4, 5, 3)  # class_mode=None: images only


def test_directory_augmented_shuffled_batch_matches_keras(image_root):
    gen = IMG.ImageDataGenerator(rotation_range=20, horizontal_flip=True)
    it = gen.flow_from_directory(str(image_root), target_size=(6, 6), batch_size=3, seed=1, class_mode="input",
                                 keep_aspect_ratio=True, interpolation="bilinear")
    x, y = it[0]
    np.testing.assert_allclose(x, np.asarray(DIR["aug_batch0_x"]), rtol=1e-4, atol=1e-3)
    assert np.array_equal(x, y) == DIR["aug_input_equal"]


def test_directory_bad_arguments(image_root, tmp_path):
    gen = IMG.ImageDataGenerator()
    with pytest.raises(ValueError, match="Invalid class_mode"):
        gen.flow_from_directory(str(image_root), class_mode="multi")
    with pytest.raises(ValueError, match="Invalid color mode"):
        gen.flow_from_directory(str(image_root), color_mode="cmyk")
    with pytest.raises(ValueError, match="not a directory"):
        gen.flow_from_directory(str(tmp_path / "missing"))
    with pytest.raises(ValueError, match="Invalid subset"):
        IMG.ImageDataGenerator(validation_split=0.2).flow_from_directory(str(image_root), subset="test")


def test_iterator_epoch_order_reshuffles_and_base_class_is_abstract():
    x = np.arange(10, dtype="float32").reshape(10, 1, 1, 1)
    it = IMG.ImageDataGenerator().flow(x, np.arange(10), batch_size=10, shuffle=True, seed=3)
    first = it[0][1].tolist()
    it.on_epoch_end()
    second = it[0][1].tolist()
    assert sorted(first) == sorted(second) == list(range(10)) and first != second
    it.reset()
    assert it.batch_index == 0
    with pytest.raises(NotImplementedError):
        IMG.Iterator(4, 2, False, None)[0]
    assert IMG.Iterator.white_list_formats == ("png", "jpg", "jpeg", "bmp", "ppm", "tif", "tiff")


def test_model_fit_on_flow_from_directory(image_root):
    gen = IMG.ImageDataGenerator(rescale=1 / 255.0)
    it = gen.flow_from_directory(str(image_root), target_size=(4, 4), batch_size=2, seed=0)
    model = keras.Sequential([keras.Input((4, 4, 3)), keras.layers.Flatten(), keras.layers.Dense(2, activation="softmax")])
    model.compile(optimizer="sgd", loss="categorical_crossentropy")
    history = model.fit(it, epochs=2, verbose=0)
    assert len(history.history["loss"]) == 2 and np.isfinite(history.history["loss"]).all()


def test_flow_from_dataframe_needs_pandas_or_reads_it(image_root):
    gen = IMG.ImageDataGenerator()
    try:
        import pandas as pd
    except ImportError:
        with pytest.raises(ImportError, match="pip install pandas"):
            gen.flow_from_dataframe({"filename": ["a/img0.png"], "class": ["a"]}, directory=str(image_root))
        return
    frame = pd.DataFrame({"filename": ["a/img0.png", "b/img1.png", "a/notes.txt"], "class": ["a", "b", "a"]})
    with pytest.warns(UserWarning, match="1 invalid image filename"):
        it = gen.flow_from_dataframe(frame, directory=str(image_root), target_size=(4, 5), shuffle=False)
    x, y = it[0]
    assert x.shape == (2, 4, 5, 3) and y.tolist() == [[1.0, 0.0], [0.0, 1.0]]


def test_directory_save_to_dir_writes_the_augmented_batch(image_root, tmp_path_factory):
    out = tmp_path_factory.mktemp("saved")
    it = IMG.ImageDataGenerator(vertical_flip=True).flow_from_directory(
        str(image_root), target_size=(4, 5), batch_size=2, shuffle=False, save_to_dir=str(out), save_prefix="aug",
        save_format="png")
    x, _ = it[0]
    saved = sorted(out.glob("aug_*.png"))
    assert [p.name.split("_")[1] for p in saved] == ["0", "1"]
    reread = IMG.img_to_array(IMG.load_img(str(saved[0])))
    np.testing.assert_allclose(reread, np.round(IMG.img_to_array(IMG.array_to_img(x[0]))))
