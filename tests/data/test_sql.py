"""tf.data.experimental.SqlDataset over a real SQLite file: typed rows, one type, and clear errors."""
from __future__ import annotations

import sqlite3

import pytest
import torch

import torchstrategy as tf


@pytest.fixture()
def database(tmp_path) -> str:
    path = str(tmp_path / "people.db")
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE people (name TEXT, age INTEGER, height REAL)")
        connection.executemany("INSERT INTO people VALUES (?, ?, ?)",
                               [("ada", 36, 1.65), ("alan", 41, 1.78), ("grace", None, 1.6)])
    return path


def test_rows_become_typed_tuples(database) -> None:
    ds = tf.data.experimental.SqlDataset("sqlite", database, "SELECT name, age, height FROM people WHERE age IS "
                                         "NOT NULL ORDER BY age", (tf.string, tf.int32, tf.float64))
    rows = [(name.item(), int(age), float(height)) for name, age, height in ds]
    assert rows == [(b"ada", 36, 1.65), (b"alan", 41, 1.78)]
    name, age, height = next(iter(ds))
    assert age.dtype == torch.int32 and height.dtype == torch.float64
    assert ds.element_spec[1] == tf.TensorSpec((), tf.int32)
    assert [r.item() for r in tf.data.experimental.SqlDataset("sqlite", database, "SELECT name FROM people "
                                                              "ORDER BY name", tf.string)] == [b"ada", b"alan", b"grace"]


def test_bad_input_says_what_to_fix(database) -> None:
    with pytest.raises(ValueError, match="driver_name must be 'sqlite'"):
        tf.data.experimental.SqlDataset("mysql", database, "SELECT 1", (tf.int32,))
    with pytest.raises(ValueError, match="NULL"):
        list(tf.data.experimental.SqlDataset("sqlite", database, "SELECT age FROM people", (tf.int32,)))
    with pytest.raises(ValueError, match="2 columns but output_types has 1"):
        list(tf.data.experimental.SqlDataset("sqlite", database, "SELECT name, age FROM people", (tf.string,)))
    with pytest.raises(ValueError, match="failed"):
        list(tf.data.experimental.SqlDataset("sqlite", database, "SELECT nope FROM people", (tf.string,)))
