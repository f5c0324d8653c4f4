"""tf.io.gfile on local paths: results and errors as TF 2.21 gives them (frozen below)."""
from __future__ import annotations

import os

import pytest


def test_walk_listdir_glob_stat_and_reading(tmp_path):
    import torchstrategy as tf

    gfile = tf.io.gfile
    gfile.makedirs(str(tmp_path / "a" / "b"))
    gfile.makedirs(str(tmp_path / "a" / "b"))  # TF: an existing directory is fine
    with gfile.GFile(str(tmp_path / "a" / "f.txt"), "w") as handle:
        handle.write("x\ny\n")
    # TF 2.21: walk -> [(top, ['a'], []), (top/a, ['b'], ['f.txt']), (top/a/b, [], [])]
    assert list(gfile.walk(str(tmp_path))) == [(str(tmp_path), ["a"], []), (str(tmp_path / "a"), ["b"], ["f.txt"]),
                                               (str(tmp_path / "a" / "b"), [], [])]
    assert gfile.listdir(str(tmp_path / "a")) == ["b", "f.txt"]
    assert gfile.glob(str(tmp_path / "*" / "*.txt")) == [str(tmp_path / "a" / "f.txt")]
    info = gfile.stat(str(tmp_path / "a" / "f.txt"))
    assert (info.length, info.is_directory, isinstance(info.mtime_nsec, int)) == (4, False, True)
    reader = gfile.GFile(str(tmp_path / "a" / "f.txt"))
    assert (reader.read(), reader.size()) == ("x\ny\n", 4)  # TF 2.21: 'r' gives str
    reader.close()
    assert list(gfile.GFile(str(tmp_path / "a" / "f.txt"))) == ["x\n", "y\n"]
    assert gfile.GFile(str(tmp_path / "a" / "f.txt"), "rb").read() == b"x\ny\n"
    assert gfile.exists(str(tmp_path / "a")) and gfile.isdir(str(tmp_path / "a"))
    assert gfile.join("a", "b") == "a/b"
    gfile.copy(str(tmp_path / "a" / "f.txt"), str(tmp_path / "g.txt"))
    gfile.rename(str(tmp_path / "g.txt"), str(tmp_path / "h.txt"))
    gfile.remove(str(tmp_path / "h.txt"))
    gfile.rmtree(str(tmp_path / "a"))
    assert not os.path.exists(tmp_path / "a")


def test_missing_and_existing_paths_raise_tensorflows_errors(tmp_path):
    import torchstrategy as tf

    gfile, missing = tf.io.gfile, str(tmp_path / "nope")
    # TF 2.21 raises NotFoundError for each of these, and AlreadyExistsError for rename onto a file
    for call in (lambda: gfile.rmtree(missing), lambda: gfile.remove(missing), lambda: gfile.listdir(missing),
                 lambda: gfile.GFile(missing).read(), lambda: gfile.stat(missing)):
        with pytest.raises(tf.errors.NotFoundError, match="nope"):
            call()
    (tmp_path / "a.txt").write_text("a")
    (tmp_path / "b.txt").write_text("b")
    with pytest.raises(tf.errors.AlreadyExistsError, match="already exists"):
        gfile.rename(str(tmp_path / "a.txt"), str(tmp_path / "b.txt"))
    gfile.rename(str(tmp_path / "a.txt"), str(tmp_path / "b.txt"), overwrite=True)
    assert (tmp_path / "b.txt").read_text() == "a"
    with pytest.raises(NotImplementedError, match="local paths"):
        gfile.exists("gs://bucket/data")


def test_gfile_name_mode_and_next(tmp_path):
    import torchstrategy as tf

    path = tmp_path / "lines.txt"
    path.write_text("a\nb\n")
    with tf.io.gfile.GFile(str(path)) as handle:
        assert handle.name == str(path) and handle.mode == "r"
        assert handle.next() == "a\n" and next(handle) == "b\n"
    assert tf.io.TFRecordOptions.compression_type_map == {0: "", 1: "ZLIB", 2: "GZIP"}
