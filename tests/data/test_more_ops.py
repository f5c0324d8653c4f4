"""The remaining Dataset ops: window, scan, unique, group_by_window, bucket_by_sequence_length and
choose_from_datasets in TF 2.21's exact order (frozen below); seeded statistical checks for
sample_from_datasets and rejection_resample; list_files, ignore_errors, save/load and Optional."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf

Dataset = tf.data.Dataset


def _values(dataset) -> list:
    return [element.tolist() if hasattr(element, "tolist") else element for element in dataset]


def test_window_as_tf() -> None:
    windows = Dataset.range(7).window(3, shift=2)
    assert isinstance(windows.element_spec, tf.data.experimental.DatasetSpec)
    assert windows.element_spec.element_spec == tf.TensorSpec((), torch.int64)
    # TF 2.21
    assert [_values(w) for w in windows] == [[0, 1, 2], [2, 3, 4], [4, 5, 6], [6]]
    assert windows.cardinality() == 4
    strided = Dataset.range(7).window(3, shift=1, stride=2, drop_remainder=True)
    assert [_values(w) for w in strided] == [[0, 2, 4], [1, 3, 5], [2, 4, 6]]
    assert Dataset.range(7).window(3, 2, drop_remainder=True).cardinality() == 3
    assert [_values(w) for w in Dataset.range(7).window(3)] == [[0, 1, 2], [3, 4, 5], [6]]
    assert [_values(w) for w in Dataset.range(7).window(2, shift=3)] == [[0, 1], [3, 4], [6]]  # TF 2.21


def test_window_keeps_the_structure_and_flat_maps_to_batches() -> None:
    pairs = Dataset.zip(Dataset.range(5), Dataset.range(10, 15)).window(2)
    assert [(_values(a), _values(b)) for a, b in pairs] == [([0, 1], [10, 11]), ([2, 3], [12, 13]), ([4], [14])]
    dicts = Dataset.from_tensor_slices({"a": [1, 2, 3]}).window(2)
    assert [{key: _values(value) for key, value in element.items()} for element in dicts] == [
        {"a": [1, 2]}, {"a": [3]}]
    batched = Dataset.range(6).window(3, 1, drop_remainder=True).flat_map(lambda w: w.batch(3))
    assert _values(batched) == [[0, 1, 2], [1, 2, 3], [2, 3, 4], [3, 4, 5]]  # TF 2.21
    with pytest.raises(ValueError, match="window: size must be >= 1"):
        Dataset.range(3).window(0)


def test_scan_as_tf() -> None:
    running = Dataset.range(5).scan(torch.tensor(0), lambda state, x: (state + x, state * 10))
    assert _values(running) == [0, 0, 10, 30, 60]  # TF 2.21
    assert running.cardinality() == 5
    nested = Dataset.range(4).scan((torch.tensor(0), torch.tensor(1)),
                                   lambda s, x: ((s[0] + x, s[1] * 2), (s[0], s[1])))
    assert [(int(a), int(b)) for a, b in nested] == [(0, 1), (0, 2), (1, 4), (3, 8)]  # TF 2.21
    with pytest.raises(TypeError, match=r"scan_func must return \(new_state, output_element\)"):
        list(Dataset.range(2).scan(torch.tensor(0), lambda s, x: s))


def test_unique_as_tf() -> None:
    assert _values(Dataset.from_tensor_slices([1, 3, 1, 2, 3, 5, 2]).unique()) == [1, 3, 2, 5]  # TF 2.21
    assert Dataset.range(5).unique().cardinality() == tf.data.UNKNOWN_CARDINALITY  # TF 2.21: -2
    with pytest.raises(TypeError, match="scalar integers or strings"):
        list(Dataset.from_tensor_slices([1.5, 2.5]).unique())


def test_unique_strings(tmp_path) -> None:
    path = tmp_path / "w.txt"
    path.write_bytes(b"a\nb\na\n")
    assert [x.item() for x in tf.data.TextLineDataset(str(path)).unique()] == [b"a", b"b"]  # TF 2.21


def test_group_by_window_as_tf() -> None:
    grouped = Dataset.range(10).group_by_window(lambda x: x % 3, lambda key, ds: ds.batch(2), window_size=2)
    assert _values(grouped) == [[0, 3], [1, 4], [2, 5], [6, 9], [7], [8]]  # TF 2.21
    grouped = Dataset.range(10).group_by_window(lambda x: x % 2, lambda key, ds: ds.batch(10), window_size=3)
    assert _values(grouped) == [[0, 2, 4], [1, 3, 5], [6, 8], [7, 9]]  # TF 2.21
    # TF 2.21: what is left at the end comes out by increasing key, not by first appearance
    leftovers = Dataset.from_tensor_slices(torch.tensor([5, 2, 5, 1, 7])).group_by_window(
        lambda x: x, lambda key, ds: ds.batch(5), window_size=5)
    assert _values(leftovers) == [[1], [2], [5, 5], [7]]
    sized = Dataset.range(6).group_by_window(lambda x: x % 2, lambda key, ds: ds.batch(9),
                                             window_size_func=lambda key: key + 1)
    assert _values(sized) == [[0], [2], [1, 3], [4], [5]]  # TF 2.21
    with pytest.raises(ValueError, match="exactly one of window_size and window_size_func"):
        Dataset.range(3).group_by_window(lambda x: x, lambda k, ds: ds)


_SEQUENCES = [[1], [2, 2], [3, 3, 3], [4, 4, 4, 4], [5], [6, 6, 6, 6, 6], [7, 7], [8, 8, 8]]


def _sequences() -> Dataset:
    return Dataset.from_generator(lambda: _SEQUENCES, output_signature=tf.TensorSpec([None], torch.int64))


def test_bucket_by_sequence_length_as_tf() -> None:
    buckets = _sequences().bucket_by_sequence_length(lambda x: x.shape[0], [3, 5], [2, 2, 2])
    assert buckets.element_spec == tf.TensorSpec((None, None), torch.int64)  # TF 2.21
    assert _values(buckets) == [[[1, 0], [2, 2]], [[3, 3, 3, 0], [4, 4, 4, 4]], [[5, 0], [7, 7]], [[8, 8, 8]],
                                [[6, 6, 6, 6, 6]]]  # TF 2.21
    dropped = _sequences().bucket_by_sequence_length(lambda x: x.shape[0], [3, 5], [2, 2, 2], drop_remainder=True,
                                                     padding_values=torch.tensor(-1))
    assert _values(dropped) == [[[1, -1], [2, 2]], [[3, 3, 3, -1], [4, 4, 4, 4]], [[5, -1], [7, 7]]]  # TF 2.21
    to_boundary = Dataset.from_generator(lambda: [[1], [2, 2], [3, 3, 3]],
                                         output_signature=tf.TensorSpec([None], torch.int64))
    padded = to_boundary.bucket_by_sequence_length(lambda x: x.shape[0], [3, 5], [2, 2, 2],
                                                   pad_to_bucket_boundary=True)
    assert _values(padded) == [[[1, 0], [2, 2]], [[3, 3, 3, 0]]]  # TF 2.21
    with pytest.raises(ValueError, match="shorter than max\\(bucket_boundaries\\) = 5, got length 5"):
        list(_sequences().bucket_by_sequence_length(lambda x: x.shape[0], [3, 5], [2, 2, 2],
                                                    pad_to_bucket_boundary=True))
    with pytest.raises(ValueError, match="len\\(bucket_batch_sizes\\) == len\\(bucket_boundaries\\) \\+ 1"):
        _sequences().bucket_by_sequence_length(lambda x: x.shape[0], [3, 5], [2, 2])


def test_choose_from_datasets_as_tf() -> None:
    inputs = [Dataset.range(3), Dataset.range(10, 13)]
    choices = Dataset.from_tensor_slices(torch.tensor([0, 1, 1, 0, 0, 0, 1]))
    assert _values(Dataset.choose_from_datasets(inputs, choices)) == [0, 10, 11, 1, 2]  # TF 2.21
    assert _values(Dataset.choose_from_datasets(inputs, choices, stop_on_empty_dataset=False)) == [
        0, 10, 11, 1, 2, 12]  # TF 2.21
    with pytest.raises(ValueError, match="choice 2 is out of range for 2 datasets"):
        list(Dataset.choose_from_datasets(inputs, Dataset.from_tensor_slices(torch.tensor([2]))))
    with pytest.raises(TypeError, match="int64 scalars"):
        list(Dataset.choose_from_datasets(inputs, Dataset.from_tensor_slices([0.5])))


def test_sample_from_datasets_follows_the_weights() -> None:
    zeros, ones = Dataset.range(1000).map(lambda x: x * 0), Dataset.range(1000).map(lambda x: x * 0 + 1)
    sampled = Dataset.sample_from_datasets([zeros, ones], weights=[0.25, 0.75], seed=3).take(800)
    share = float(np.mean(_values(sampled)))
    assert abs(share - 0.75) < 0.05  # TF 2.21 (seed 3, 400 draws): 0.7425; 4 sigma here is 0.06
    again = Dataset.sample_from_datasets([zeros, ones], weights=[0.25, 0.75], seed=3).take(800)
    assert _values(again) == _values(sampled) == _values(sampled)  # TF 2.21: a seed repeats every pass
    fresh = Dataset.sample_from_datasets([zeros, ones], seed=3, rerandomize_each_iteration=True).take(50)
    assert _values(fresh) != _values(fresh)
    # TF 2.21: without stop_on_empty_dataset every element of every input comes out
    everything = Dataset.sample_from_datasets([Dataset.range(3), Dataset.range(10, 20)], seed=1)
    assert sorted(_values(everything)) == [0, 1, 2] + list(range(10, 20))
    stopped = _values(Dataset.sample_from_datasets([Dataset.range(3), Dataset.range(10, 20)], seed=1,
                                                   stop_on_empty_dataset=True))
    assert [x for x in stopped if x < 3] == [0, 1, 2] and len(stopped) < 13
    with pytest.raises(ValueError, match="one non-negative weight per dataset"):
        Dataset.sample_from_datasets([zeros, ones], weights=[1.0])


def test_rejection_resample_reaches_the_target_distribution() -> None:
    labels = Dataset.range(8000).map(lambda x: torch.where(x % 10 == 0, x * 0, x % 4))  # skewed to class 0
    resampled = labels.rejection_resample(lambda x: x, target_dist=[0.25] * 4, seed=2)
    pairs = list(resampled)
    assert all(int(label) == int(element) for label, element in pairs)
    counts = np.bincount([int(label) for label, _ in pairs], minlength=4)
    assert np.abs(counts / counts.sum() - 0.25).max() < 0.02, counts
    skewed = np.bincount(_values(labels), minlength=4) / 8000
    assert skewed[0] > 0.28  # the input really was skewed, so the check above can fail
    known = labels.rejection_resample(lambda x: x, [0.7, 0.1, 0.1, 0.1], initial_dist=skewed, seed=2)
    share = np.mean([int(label) == 0 for label, _ in known])
    assert abs(share - 0.7) < 0.03


def test_list_files(tmp_path) -> None:
    for name in ["b.txt", "a.txt", "c.csv"]:
        (tmp_path / name).write_text("x")
    pattern = str(tmp_path / "*.txt")
    ordered = [x.item() for x in Dataset.list_files(pattern, shuffle=False)]
    assert ordered == [str(tmp_path / "a.txt").encode(), str(tmp_path / "b.txt").encode()]  # TF 2.21: sorted
    assert Dataset.list_files(pattern).cardinality() == 2
    shuffled = [x.item() for x in Dataset.list_files(pattern, seed=1)]
    assert sorted(shuffled) == ordered
    with pytest.raises(ValueError, match="no files matched pattern"):
        Dataset.list_files(str(tmp_path / "*.none"))


def test_ignore_errors_skips_failing_elements() -> None:
    def invert(x):
        if float(x) == 0:
            raise ValueError("division by zero")
        return 1 / x
    dataset = Dataset.from_tensor_slices([1.0, 0.0, 2.0, 0.0, 4.0]).map(invert).ignore_errors()
    assert _values(dataset) == [1.0, 0.5, 0.25]  # TF 2.21 ([1., 0., 2.] with check_numerics): [1.0, 0.5]
    filtered = Dataset.range(6).map(lambda x: x if int(x) != 3 else None).filter(lambda x: x % 2 == 0)
    assert _values(filtered.ignore_errors()) == [0, 2, 4]
    applied = Dataset.from_tensor_slices([1.0, 0.0]).map(invert).apply(tf.data.experimental.ignore_errors())
    assert _values(applied) == [1.0]


def test_save_and_load_round_trip(tmp_path) -> None:
    source = Dataset.range(10).map(lambda x: {"x": x, "y": x * 2.0})
    source.save(str(tmp_path / "saved"))
    loaded = Dataset.load(str(tmp_path / "saved"))
    assert loaded.cardinality() == 10  # TF 2.21: 10
    assert loaded.element_spec == {"x": tf.TensorSpec((), torch.int64), "y": tf.TensorSpec((), torch.float32)}
    assert [(int(e["x"]), float(e["y"])) for e in loaded] == [(i, 2.0 * i) for i in range(10)]
    with pytest.raises(FileNotFoundError, match="holds no saved dataset"):
        Dataset.load(str(tmp_path / "nothing"))


def test_get_next_as_optional() -> None:
    iterator = iter(Dataset.range(2))
    first = tf.data.experimental.get_next_as_optional(iterator)
    assert bool(first.has_value()) and int(first.get_value()) == 0  # TF 2.21: True, 0
    next(iterator)
    empty = tf.data.experimental.get_next_as_optional(iterator)
    assert not bool(empty.has_value())  # TF 2.21: False, and get_value raises InvalidArgumentError
    with pytest.raises(ValueError, match="has no value"):
        empty.get_value()
    assert int(tf.data.experimental.Optional.from_value(torch.tensor(3)).get_value()) == 3


def test_experimental_transformation_functions() -> None:
    scanned = Dataset.range(3).apply(tf.data.experimental.scan(torch.tensor(0), lambda s, x: (s + x, s + x)))
    assert _values(scanned) == [0, 1, 3]
    assert _values(Dataset.from_tensor_slices([2, 2, 1]).apply(tf.data.experimental.unique())) == [2, 1]
    grouped = Dataset.range(4).apply(tf.data.experimental.group_by_window(
        lambda x: x % 2, lambda k, ds: ds.batch(2), window_size=2))
    assert _values(grouped) == [[0, 2], [1, 3]]
    zeros = Dataset.range(1).repeat(2).map(lambda x: x * 0)
    chosen = tf.data.experimental.choose_from_datasets([Dataset.range(2)], zeros)
    assert _values(chosen) == [0, 1]
