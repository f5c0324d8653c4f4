"""tf.data.TextLineDataset, tf.data.experimental.CsvDataset and make_csv_dataset: lines and records as TF 2.21
gives them (frozen below), CSV parsing compared with Python's csv module, and errors naming file and line."""
from __future__ import annotations

import csv
import gzip
import io
import zlib

import numpy as np
import pytest
import torch

import torchstrategy as tf


def _texts(dataset) -> list:
    return [element.item() for element in dataset]


def _write(path, data: bytes) -> str:
    path.write_bytes(data)
    return str(path)


@pytest.fixture
def text_files(tmp_path) -> list:
    return [_write(tmp_path / "a.txt", b"one\ntwo\r\n\nlast"), _write(tmp_path / "b.txt", b"b1\nb2\n")]


def test_text_lines_in_file_order_as_scalar_strings(text_files) -> None:
    dataset = tf.data.TextLineDataset(text_files)
    assert dataset.element_spec.shape == () and dataset.element_spec.dtype == np.dtype(object)
    assert dataset.cardinality() == tf.data.UNKNOWN_CARDINALITY  # TF 2.21: -2
    # TF 2.21: '\r\n' loses the '\r', an empty line is kept, a last line without '\n' is kept
    assert _texts(dataset) == [b"one", b"two", b"", b"last", b"b1", b"b2"]


def test_text_lines_interleaved_with_num_parallel_reads(text_files) -> None:
    # TF 2.21 order with num_parallel_reads=2
    assert _texts(tf.data.TextLineDataset(text_files, num_parallel_reads=2)) == [
        b"one", b"b1", b"two", b"b2", b"", b"last"]


def test_text_lines_from_gzip_and_zlib_and_a_dataset_of_names(tmp_path) -> None:
    content = b"g1\ng2\n"
    gz = _write(tmp_path / "c.gz", gzip.compress(content))
    zl = _write(tmp_path / "c.zlib", zlib.compress(content))
    assert _texts(tf.data.TextLineDataset(gz, compression_type="GZIP")) == [b"g1", b"g2"]
    assert _texts(tf.data.TextLineDataset(zl, compression_type="ZLIB")) == [b"g1", b"g2"]
    names = tf.data.Dataset.list_files(str(tmp_path / "*.gz"), shuffle=False)
    assert _texts(tf.data.TextLineDataset(names, compression_type="GZIP")) == [b"g1", b"g2"]


def test_text_line_errors(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match="missing.txt"):
        list(tf.data.TextLineDataset(str(tmp_path / "missing.txt")))
    with pytest.raises(ValueError, match="compression_type"):
        tf.data.TextLineDataset("x.txt", compression_type="LZ4")
    plain = _write(tmp_path / "plain.txt", b"not compressed\n")
    with pytest.raises(OSError, match="plain.txt"):
        list(tf.data.TextLineDataset(plain, compression_type="ZLIB"))


def _csv_values(dataset) -> list:
    def plain(value):
        return value.item() if isinstance(value, np.ndarray) else value.item()
    return [tuple(plain(value) for value in record) for record in dataset]


def test_csv_types_defaults_quotes_and_header(tmp_path) -> None:
    path = _write(tmp_path / "d.csv", b'h1,h2,h3,h4\n1,2.5,"x,y",\n3,,"q""z",7\n')
    dataset = tf.data.experimental.CsvDataset(
        path, [tf.int32, 9.0, str, torch.tensor(-1, dtype=torch.int64)], header=True)
    specs = dataset.element_spec
    assert [spec.dtype for spec in specs] == [torch.int32, torch.float32, np.dtype(object), torch.int64]
    records = list(dataset)
    assert [value.dtype for value in records[0] if isinstance(value, torch.Tensor)] == [
        torch.int32, torch.float32, torch.int64]
    # TF 2.21: [(1, 2.5, b'x,y', -1), (3, 9.0, b'q"z', 7)]
    assert _csv_values(records) == [(1, 2.5, b"x,y", -1), (3, 9.0, b'q"z', 7)]
    selected = tf.data.experimental.CsvDataset(path, [tf.int32, str], header=True, select_cols=[0, 2])
    assert _csv_values(selected) == [(1, b"x,y"), (3, b'q"z')]  # TF 2.21
    excluded = tf.data.experimental.CsvDataset(path, [tf.int32, str], header=True, exclude_cols=[1, 3])
    assert _csv_values(excluded) == [(1, b"x,y"), (3, b'q"z')]


def test_csv_parsing_matches_pythons_csv_module(tmp_path) -> None:
    rows = [["plain", "with,comma", 'a "quote"', "multi\nline", ""], ["x", "", "  spaced ", "7", "end"]]
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    text = buffer.getvalue()
    path = _write(tmp_path / "py.csv", text.encode())
    expected = [tuple(field.encode() for field in row) for row in csv.reader(io.StringIO(text))]
    dataset = tf.data.experimental.CsvDataset(path, [""] * 5)  # TF 2.21 parses this file the same way
    assert _csv_values(dataset) == expected
    semicolons = _write(tmp_path / "semi.csv", b"a;b\n")
    assert _csv_values(tf.data.experimental.CsvDataset(semicolons, [str, str], field_delim=";")) == [(b"a", b"b")]
    literal = _write(tmp_path / "literal.csv", b'"a"b,c\n')
    # TF 2.21 with use_quote_delim=False: quotes are ordinary characters
    assert _csv_values(tf.data.experimental.CsvDataset(literal, [str, str], use_quote_delim=False)) == [
        (b'"a"b', b"c")]


def test_csv_na_value_and_number_parsing(tmp_path) -> None:
    path = _write(tmp_path / "n.csv", b"NA, 1,1e3,nan\n")
    dataset = tf.data.experimental.CsvDataset(path, [5, tf.int64, tf.float32, tf.float64], na_value="NA")
    (record,) = _csv_values(dataset)
    assert record[:3] == (5, 1, 1000.0) and np.isnan(record[3])  # TF 2.21: (5, 1, 1000.0, nan)


@pytest.mark.parametrize("text, defaults, message", [
    (b"1,2\n3\n", [tf.int32, tf.int32], r"bad.csv', line 2: expected 2 fields .* got 1"),
    (b"1,2,3\n", [str, str], r"bad.csv', line 1: expected 2 fields .* got 3"),
    (b"a,\n", [str, str], r"line 1: field 1 is required but missing"),
    (b"x,99999999999\n", [str, tf.int32], r"line 1: field 1 is not a valid int32: '99999999999'"),
    (b"x,abc\n", [str, tf.float32], r"line 1: field 1 is not a valid float32: 'abc'"),
    (b'ok,fine\na"b,c\n', [str, str], r"line 2: unquoted fields cannot have quotes"),
    (b'ok,fine\n"open,c\n', [str, str], r"line 2: end of file inside a quoted field"),
])
def test_csv_bad_records_name_file_and_line(tmp_path, text, defaults, message) -> None:
    # TF 2.21 rejects each of these (InvalidArgumentError); here a ValueError names the file and line
    path = _write(tmp_path / "bad.csv", text)
    with pytest.raises(ValueError, match=message):
        list(tf.data.experimental.CsvDataset(path, defaults))


def test_csv_line_numbers_count_the_header_and_quoted_newlines(tmp_path) -> None:
    path = _write(tmp_path / "bad.csv", b'h1,h2\n"two\nlines",x\n1\n')
    with pytest.raises(ValueError, match=r"bad.csv', line 4: expected 2 fields"):
        list(tf.data.experimental.CsvDataset(path, [str, str], header=True))


def test_csv_ignore_errors_skips_bad_records(tmp_path) -> None:
    path = _write(tmp_path / "mixed.csv", b"1,2\n3\n4,x\n5,6\n")
    dataset = tf.data.experimental.CsvDataset(path, [tf.int32, tf.int32]).ignore_errors()
    assert _csv_values(dataset) == [(1, 2), (5, 6)]


def test_csv_argument_errors(tmp_path) -> None:
    with pytest.raises(ValueError, match="select_cols or exclude_cols"):
        tf.data.experimental.CsvDataset("x.csv", [str], select_cols=[0], exclude_cols=[1])
    with pytest.raises(ValueError, match="select_cols has 1 columns but record_defaults has 2"):
        tf.data.experimental.CsvDataset("x.csv", [str, str], select_cols=[0])
    with pytest.raises(TypeError, match=r"record_defaults\[0\] has dtype torch.bool"):
        tf.data.experimental.CsvDataset("x.csv", [torch.bool])


def test_csv_string_defaults_are_values_not_type_names(tmp_path) -> None:
    path = _write(tmp_path / "s.csv", b",a\n")
    # as tf.constant("float32") in TF: a Python str is the default value of a string column
    assert _csv_values(tf.data.experimental.CsvDataset(path, ["float32", np.dtype(object)])) == [(b"float32", b"a")]


def _batches(dataset) -> list:
    def plain(value):
        return value.tolist()
    return [{key: (str(value.dtype), plain(value)) for key, value in batch.items()} for batch in dataset]


def test_make_csv_dataset_infers_types_as_tf(tmp_path) -> None:
    path = _write(tmp_path / "m.csv", b"a,b,c,d,e\n1,2.5,x,true,3\n2,3,y,false,4.5\n3,,z,,\n")
    dataset = tf.data.experimental.make_csv_dataset(path, batch_size=2, shuffle=False, num_epochs=1)
    # TF 2.21: a int32, b float32, c string, d string (bools stay strings), e float32; empty -> 0 / b''
    assert _batches(dataset) == [
        {"a": ("torch.int32", [1, 2]), "b": ("torch.float32", [2.5, 3.0]), "c": ("object", [b"x", b"y"]),
         "d": ("object", [b"true", b"false"]), "e": ("torch.float32", [3.0, 4.5])},
        {"a": ("torch.int32", [3]), "b": ("torch.float32", [0.0]), "c": ("object", [b"z"]),
         "d": ("object", [b""]), "e": ("torch.float32", [0.0])}]
    wide = _write(tmp_path / "w.csv", b"a,b,c\n1,,x\n2,,\n99999999999,,y\n")
    (batch,) = _batches(tf.data.experimental.make_csv_dataset(wide, batch_size=3, shuffle=False, num_epochs=1))
    # TF 2.21: a int64 (too big for int32), b string (no values at all)
    assert batch["a"] == ("torch.int64", [1, 2, 99999999999]) and batch["b"] == ("object", [b"", b"", b""])


def test_make_csv_dataset_label_select_and_epochs(tmp_path) -> None:
    path = _write(tmp_path / "m.csv", b"a,b,e\n1,7,3\n2,8,4.5\n3,9,\n")
    dataset = tf.data.experimental.make_csv_dataset(path, batch_size=2, shuffle=False, num_epochs=2,
                                                    label_name="e", select_columns=["a", "e"])
    batches = [(features["a"].tolist(), label.tolist()) for features, label in dataset]
    assert batches == [([1, 2], [3.0, 4.5]), ([3, 1], [0.0, 3.0]), ([2, 3], [4.5, 0.0])]  # TF 2.21


def test_make_csv_dataset_shuffles_with_a_seed(tmp_path) -> None:
    path = _write(tmp_path / "s.csv", ("n\n" + "".join(f"{i}\n" for i in range(50))).encode())
    def values(seed):
        dataset = tf.data.experimental.make_csv_dataset(path, batch_size=50, num_epochs=1, shuffle_seed=seed)
        return next(iter(dataset))["n"].tolist()
    first = values(3)
    assert sorted(first) == list(range(50)) and first != list(range(50)) and values(3) == first


def test_make_csv_dataset_errors(tmp_path) -> None:
    with pytest.raises(ValueError, match="no files match"):
        tf.data.experimental.make_csv_dataset(str(tmp_path / "*.csv"), batch_size=2)
    path = _write(tmp_path / "short.csv", b"a,b\n1,2\n3\n")
    with pytest.raises(ValueError, match=r"short.csv', line 3 has 1 fields, expected 2"):
        tf.data.experimental.make_csv_dataset(path, batch_size=2)  # TF 2.21 also fails while inferring
    with pytest.raises(ValueError, match="label_name 'z'"):
        tf.data.experimental.make_csv_dataset(_write(tmp_path / "ok.csv", b"a\n1\n"), batch_size=1, label_name="z")
