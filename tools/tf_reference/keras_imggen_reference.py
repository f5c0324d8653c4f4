"""Freezes Keras 3.15's legacy image augmentation numbers (keras.preprocessing.image: apply_affine_transform
over fill modes / orders / axes, the random_* helpers, ImageDataGenerator draws, fit statistics, flow and
flow_from_directory batches) and audio_dataset_from_directory batches into
tests/keras/preprocessing/keras_imggen_reference.json. The image folder and WAV files are written by the same
rules the tests use (`pattern`). The affine transforms need SciPy and the image API needs Pillow, which the
TF venv lacks, so install them beside it first:

    /work/tf-venv/bin/python -m pip install --no-deps --target /tmp/scipy_site scipy
    /work/tf-venv/bin/python -m pip install --no-deps --target /tmp/pil_site pillow==13.0.0
    PYTHONPATH=/tmp/scipy_site:/tmp/pil_site /work/tf-venv/bin/python tools/tf_reference/keras_imggen_reference.py
"""
from __future__ import annotations

import json
import os
import tempfile
import warnings

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import keras  # noqa: E402
import tensorflow as tf  # noqa: E402
from keras.src.legacy.preprocessing import image as legacy  # noqa: E402

warnings.filterwarnings("ignore")
OUT = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "keras", "preprocessing",
                   "keras_imggen_reference.json")


def pattern(shape, offset=0.0, low=0.0, high=255.0):
    """Deterministic values in [low, high]: a sine of the flat index, mapped linearly."""
    n = int(np.prod(shape))
    unit = (np.sin(np.arange(n, dtype=np.float64) * 0.731 + 0.37 + offset) + 1) / 2
    return (low + unit * (high - low)).reshape(shape).astype(np.float32)


def affine_cases():
    cases = []
    rng = np.random.RandomState(7)
    for k in range(32):
        h, w = int(rng.randint(3, 8)), int(rng.randint(3, 8))
        params = {"theta": float(rng.uniform(-70, 70)) if k % 5 else 0.0, "tx": float(rng.uniform(-3, 3)),
                  "ty": float(rng.uniform(-3, 3)), "shear": float(rng.uniform(-30, 30)) if k % 3 else 0.0,
                  "zx": float(rng.uniform(0.5, 1.6)), "zy": float(rng.uniform(0.5, 1.6))}
        fill_mode = ("nearest", "reflect", "wrap", "constant")[k % 4]
        order = (1, 1, 0)[k % 3]
        channels_first = k % 2 == 1
        x = pattern((2, h, w) if channels_first else (h, w, 2), offset=k, low=0, high=10)
        axes = ({"row_axis": 1, "col_axis": 2, "channel_axis": 0} if channels_first
                else {"row_axis": 0, "col_axis": 1, "channel_axis": 2})
        y = legacy.apply_affine_transform(x, **params, **axes, fill_mode=fill_mode, cval=-1.5, order=order)
        cases.append({"x": x.tolist(), "params": params, "axes": axes, "fill_mode": fill_mode, "order": order,
                      "y": np.asarray(y, np.float64).tolist()})
    # exact integer shifts in constant mode land on the border (the tolerance case)
    x = pattern((1, 4, 5), low=0, high=10)
    for tx, ty in ((1, 0), (0, -2), (-1, 1)):
        y = legacy.apply_affine_transform(x, tx=tx, ty=ty, fill_mode="constant", cval=3.0)
        cases.append({"x": x.tolist(), "params": {"tx": tx, "ty": ty}, "axes": {"row_axis": 1, "col_axis": 2,
                      "channel_axis": 0}, "fill_mode": "constant", "order": 1, "cval": 3.0,
                      "y": np.asarray(y, np.float64).tolist()})
    return cases


def random_helpers():
    x = pattern((3, 5, 6), low=0, high=200)
    out = {"x": x.tolist()}
    calls = {
        "random_rotation": lambda: legacy.random_rotation(x, 40),
        "random_shift": lambda: legacy.random_shift(x, 0.2, 0.3, fill_mode="reflect"),
        "random_shear": lambda: legacy.random_shear(x, 25, fill_mode="wrap"),
        "random_zoom": lambda: legacy.random_zoom(x, (0.7, 1.3), fill_mode="constant", cval=7.0),
        "random_channel_shift": lambda: legacy.random_channel_shift(x, 30.0),
        "apply_channel_shift": lambda: legacy.apply_channel_shift(x, -50.0, channel_axis=0),
    }
    for name, call in calls.items():
        np.random.seed(11)
        out[name] = np.asarray(call(), np.float64).tolist()
    hwc = np.transpose(x, (1, 2, 0))
    np.random.seed(11)
    out["random_brightness"] = np.asarray(legacy.random_brightness(hwc, (0.5, 1.5)), np.float64).tolist()
    out["apply_brightness_shift_noscale"] = np.asarray(
        legacy.apply_brightness_shift(hwc * 2 - 100, 1.3, scale=False), np.float64).tolist()
    return out


FULL = {"rotation_range": 30, "width_shift_range": 0.2, "height_shift_range": [1, 2], "shear_range": 10,
        "zoom_range": 0.2, "channel_shift_range": 20.0, "brightness_range": [0.8, 1.2], "horizontal_flip": True,
        "vertical_flip": True, "fill_mode": "reflect"}


def generator_cases():
    out = {}
    gen = legacy.ImageDataGenerator(**FULL)
    params = gen.get_random_transform((5, 6, 3), seed=5)
    out["params"] = {k: (None if v is None else float(v)) for k, v in params.items()}
    x = pattern((5, 6, 3), low=0, high=255)
    out["x"] = x.tolist()
    out["random_transform"] = np.asarray(gen.random_transform(x, seed=5), np.float64).tolist()
    # fit: featurewise statistics and ZCA
    data = pattern((6, 4, 3, 2), offset=1.0, low=0, high=1)
    fit_gen = legacy.ImageDataGenerator(featurewise_center=True, featurewise_std_normalization=True, rescale=2.0)
    fit_gen.fit(data)
    zca = legacy.ImageDataGenerator(zca_whitening=True, zca_epsilon=0.1)
    zca.fit(data)
    aug = legacy.ImageDataGenerator(featurewise_center=True, rotation_range=20)
    aug.fit(data, augment=True, rounds=2, seed=3)
    out["fit"] = {"data": data.tolist(), "mean": fit_gen.mean.tolist(), "std": fit_gen.std.tolist(),
                  "standardized": fit_gen.standardize(np.copy(data[0])).tolist(),
                  "zca_matrix": zca.zca_whitening_matrix.tolist(),
                  "zca_standardized": zca.standardize(np.copy(data[:2])).tolist(),
                  "augmented_mean": aug.mean.tolist()}
    # flow: seeded shuffled batches with augmentation and a validation split
    images = pattern((10, 5, 4, 3), offset=2.0, low=0, high=255)
    labels = np.arange(10) % 3
    flow_gen = legacy.ImageDataGenerator(rotation_range=15, width_shift_range=0.1, horizontal_flip=True,
                                         samplewise_center=True, validation_split=0.3)
    train = flow_gen.flow(images, labels, batch_size=3, shuffle=True, seed=9, subset="training")
    val = flow_gen.flow(images, labels, batch_size=3, shuffle=False, subset="validation")
    first, second = train[0], train[1]
    out["flow"] = {"images": images.tolist(), "labels": labels.tolist(), "len_train": len(train),
                   "len_val": len(val), "train0_x": first[0].tolist(), "train0_y": first[1].tolist(),
                   "train1_x": second[0].tolist(), "train1_y": second[1].tolist(),
                   "val0_y": val[0][1].tolist()}
    nxt = flow_gen.flow(images, labels, batch_size=4, shuffle=True, seed=2)
    out["flow_next"] = [next(nxt)[1].tolist() for _ in range(4)]
    channels_first = legacy.ImageDataGenerator(rotation_range=25, zoom_range=[0.8, 1.1], data_format="channels_first",
                                               fill_mode="constant", cval=1.0)
    cf_x = np.transpose(images[:2], (0, 3, 1, 2))
    batch = channels_first.flow(cf_x, batch_size=2, shuffle=False, seed=4)[0]
    out["flow_channels_first"] = {"x": batch.tolist()}
    return out


def write_images(root):
    """The class folders the tests write too: a/ and b/ with PNGs of sizes 6x8 / 8x6, values from pattern."""
    from PIL import Image

    for klass, count in (("a", 3), ("b", 2)):
        os.makedirs(os.path.join(root, klass, "sub"), exist_ok=True)
        for i in range(count):
            h, w = (6, 8) if i % 2 == 0 else (8, 6)
            pixels = np.round(pattern((h, w, 3), offset=10 * i + (0 if klass == "a" else 100))).astype(np.uint8)
            folder = os.path.join(root, klass, "sub" if i == 2 else "")
            Image.fromarray(pixels, "RGB").save(os.path.join(folder, f"img{i}.png"))
    with open(os.path.join(root, "a", "notes.txt"), "w") as handle:
        handle.write("not an image")


def directory_cases():
    out = {}
    with tempfile.TemporaryDirectory() as root:
        write_images(root)
        gen = legacy.ImageDataGenerator(rescale=1 / 255.0, validation_split=0.5)
        it = gen.flow_from_directory(root, target_size=(4, 5), batch_size=2, shuffle=False)
        out["filenames"] = it.filenames
        out["classes"] = it.classes.tolist()
        out["class_indices"] = it.class_indices
        x, y = it[0]
        out["batch0_x"] = x.tolist()
        out["batch0_y"] = y.tolist()
        train = gen.flow_from_directory(root, target_size=(4, 5), batch_size=2, subset="training",
                                        class_mode="sparse", color_mode="grayscale", shuffle=False)
        out["train_filenames"] = train.filenames
        out["train_batch0_x"] = train[0][0].tolist()
        out["train_batch0_y"] = train[0][1].tolist()
        val = gen.flow_from_directory(root, target_size=(4, 5), batch_size=2, subset="validation",
                                      class_mode="binary", shuffle=False)
        out["val_filenames"] = val.filenames
        aug = legacy.ImageDataGenerator(rotation_range=20, horizontal_flip=True)
        shuffled = aug.flow_from_directory(root, target_size=(6, 6), batch_size=3, seed=1, class_mode="input",
                                           keep_aspect_ratio=True, interpolation="bilinear")
        x, y = shuffled[0]
        out["aug_batch0_x"] = x.tolist()
        out["aug_input_equal"] = bool(np.array_equal(x, y))
    return out


def write_wavs(root):
    """Class folders of 16-bit WAV clips (2 channels, lengths 5..9) the tests write too."""
    lengths = {"down": (5, 9, 7), "up": (6, 8)}
    for klass, sizes in lengths.items():
        os.makedirs(os.path.join(root, klass), exist_ok=True)
        for i, n in enumerate(sizes):
            samples = pattern((n, 2), offset=3 * i + len(klass), low=-0.9, high=0.9)
            wav = tf.audio.encode_wav(samples, 16000)
            tf.io.write_file(os.path.join(root, klass, f"clip{i}.wav"), wav)


def audio_cases():
    out = {}
    with tempfile.TemporaryDirectory() as root:
        write_wavs(root)
        ds = keras.utils.audio_dataset_from_directory(root, batch_size=2, shuffle=False)
        out["padded"] = [[x.numpy().tolist(), y.numpy().tolist()] for x, y in ds]
        out["class_names"] = ds.class_names
        ds = keras.utils.audio_dataset_from_directory(root, batch_size=2, shuffle=False, output_sequence_length=7,
                                                      label_mode="categorical")
        out["fixed"] = [[x.numpy().tolist(), y.numpy().tolist()] for x, y in ds]
        ds = keras.utils.audio_dataset_from_directory(root, batch_size=4, shuffle=False, ragged=True,
                                                      label_mode=None)
        out["ragged_rows"] = [[int(n) for n in x.row_lengths().numpy()] for x in ds]
        train, val = keras.utils.audio_dataset_from_directory(root, batch_size=None, validation_split=0.4,
                                                              subset="both", seed=5, output_sequence_length=5)
        out["split_sizes"] = [len(list(train)), len(list(val))]
    return out


def main():
    result = {"keras": keras.__version__, "tf": tf.__version__, "affine": affine_cases(),
              "random_helpers": random_helpers(), "generator": generator_cases(), "directory": directory_cases(),
              "audio": audio_cases()}
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as handle:
        json.dump(result, handle)
    print("wrote", OUT)


if __name__ == "__main__":
    main()
