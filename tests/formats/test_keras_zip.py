"""The `.keras` zip as TF 2.21 / Keras 3.15.1 writes it (tests/formats/fixtures, tools/tf_reference): members,
config and metadata JSON, weights tree; damaged zips are refused with the file named."""
from __future__ import annotations

import io
import os
import zipfile

import numpy as np
import pytest

from torchstrategy import formats
from torchstrategy.formats import keras_zip

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")


def test_reads_a_tf_written_archive():
    archive = keras_zip.read(os.path.join(FIXTURES, "cnn.keras"))
    assert archive.metadata["keras_version"] == "3.15.1"
    assert archive.config["class_name"] == "Sequential"
    assert archive.config["compile_config"]["optimizer"]["class_name"] == "Adam"
    assert archive.weights["layers/conv2d"].name == "conv2d"
    assert [v.shape for v in archive.weights["layers/conv2d"].values] == [(3, 3, 3, 4), (4,)]  # HWIO, bias
    assert archive.weights["optimizer"].values[0].dtype == np.int64  # iteration first, as Keras


def test_write_then_read_keeps_everything_in_keras_member_order():
    archive = formats.KerasArchive({"class_name": "X", "config": {}}, {"keras_version": "3.15.1"},
                                   {"layers/dense": formats.VarGroup("dense", [np.ones((2, 3), "float32")])},
                                   {"vocab.txt": b"a\nb"})
    buffer = io.BytesIO()
    keras_zip.write(buffer, archive)
    assert zipfile.ZipFile(io.BytesIO(buffer.getvalue())).namelist() == [
        "metadata.json", "config.json", "model.weights.h5", "assets/vocab.txt"]
    again = keras_zip.read(io.BytesIO(buffer.getvalue()))
    assert again.config == archive.config and again.assets == {"vocab.txt": b"a\nb"}
    np.testing.assert_array_equal(again.weights["layers/dense"].values[0], np.ones((2, 3), "float32"))


def test_a_member_that_fails_its_crc_is_refused_before_anything_is_decoded(tmp_path):
    whole = bytearray(open(os.path.join(FIXTURES, "lstm.keras"), "rb").read())
    with zipfile.ZipFile(os.path.join(FIXTURES, "lstm.keras")) as archive:
        info = archive.getinfo("model.weights.h5")
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)  # the member's data
    whole[start + info.file_size // 2] ^= 0xFF  # one flipped byte in the middle of the weights
    damaged = tmp_path / "damaged.keras"
    damaged.write_bytes(bytes(whole))
    with pytest.raises(formats.FormatError, match="damaged.keras' is damaged.*CRC.*model.weights.h5"):
        keras_zip.read(str(damaged))


def test_a_truncated_archive_is_refused_with_its_name(tmp_path):
    whole = open(os.path.join(FIXTURES, "lstm.keras"), "rb").read()
    broken = tmp_path / "broken.keras"
    broken.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(formats.FormatError, match="broken.keras.*truncated"):
        keras_zip.read(str(broken))


def test_a_zip_without_keras_members_is_not_a_model(tmp_path):
    other = tmp_path / "other.keras"
    with zipfile.ZipFile(other, "w") as out:
        out.writestr("readme.txt", "hello")
    with pytest.raises(formats.FormatError, match="not a Keras model file.*config.json"):
        keras_zip.read(str(other))


def test_a_repacked_archive_with_compressed_members_reads_the_same(tmp_path):
    source = os.path.join(FIXTURES, "cnn.keras")  # Keras stores members; a repacked copy may deflate them
    repacked = tmp_path / "deflated.keras"
    with zipfile.ZipFile(source) as original, zipfile.ZipFile(repacked, "w", zipfile.ZIP_DEFLATED) as out:
        for name in original.namelist():
            out.writestr(name, original.read(name))
    stored, deflated = keras_zip.read(source), keras_zip.read(str(repacked))
    assert stored.config == deflated.config and list(stored.weights) == list(deflated.weights)
    for path, group in stored.weights.items():
        for a, b in zip(group.values, deflated.weights[path].values, strict=True):
            np.testing.assert_array_equal(a, b)
