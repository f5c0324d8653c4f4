"""Format choice: from the path's suffix for writing, from the file's header for reading (never from a failure)."""
from __future__ import annotations

import os

import pytest

from torchstrategy import formats

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")


@pytest.mark.parametrize("path,name", [("m.keras", "keras"), ("w.weights.h5", "weights.h5"), ("m.h5", "h5"),
                                       ("M.HDF5", "h5"), ("dir/x.weights.h5", "weights.h5")])
def test_the_suffix_names_the_format_to_write(path, name):
    assert formats.for_path(path).name == name


def test_other_suffixes_name_no_keras_format():
    assert formats.for_path("model.ckpt") is None


@pytest.mark.parametrize("fixture,name", [("cnn.keras", "keras"), ("cnn.weights.h5", "weights.h5"), ("cnn.h5", "h5"),
                                          ("lstm.h5", "h5"), ("subclassed.weights.h5", "weights.h5")])
def test_the_header_names_the_format_of_a_tf_written_file(fixture, name):
    assert formats.of_file(os.path.join(FIXTURES, fixture)).name == name


def test_the_header_wins_over_a_misleading_suffix(tmp_path):
    renamed = tmp_path / "really_a_zip.h5"
    renamed.write_bytes(open(os.path.join(FIXTURES, "cnn.keras"), "rb").read())
    assert formats.of_file(str(renamed)).name == "keras"
    foreign = tmp_path / "notes.keras"
    foreign.write_bytes(b"just some text, no model here")
    assert formats.of_file(str(foreign)) is None


def test_a_missing_file_and_a_folder_are_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="nothing_here.keras"):
        formats.of_file(str(tmp_path / "nothing_here.keras"))
    with pytest.raises(formats.FormatError, match="is a directory"):
        formats.of_file(str(tmp_path))
