"""tf.data semantics of torchstrategy.data.Dataset: sources, element-wise ops, batching,
counting ops, cache, cardinality, specs, options and error messages."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from torchstrategy import data
from torchstrategy.data import Dataset


def values(ds):
    return [element.tolist() for element in ds]


# ---------------------------------------------------------------- sources


def test_from_tensor_slices_tuple_of_numpy_gives_rows_as_shared_torch_tensors():
    x = np.arange(24, dtype=np.float32).reshape(6, 4)
    y = np.arange(6, dtype=np.int64)
    elements = list(Dataset.from_tensor_slices((x, y)))
    assert len(elements) == 6
    for i, (xi, yi) in enumerate(elements):
        assert isinstance(xi, torch.Tensor) and isinstance(yi, torch.Tensor)
        np.testing.assert_array_equal(xi.numpy(), x[i])
        assert yi.dim() == 0 and int(yi) == y[i] and yi.dtype == torch.int64
    # No copy: the first row starts at the NumPy buffer's address.
    assert elements[0][0].data_ptr() == x.ctypes.data


def test_from_tensor_slices_python_lists_follow_tf_constant_dtypes():
    ints = list(Dataset.from_tensor_slices([1, 2, 3]))
    floats = list(Dataset.from_tensor_slices([[1.5, 2.0], [3.0, 4.0]]))
    assert [int(v) for v in ints] == [1, 2, 3] and ints[0].dtype == torch.int32
    assert floats[0].dtype == torch.float32 and floats[1].tolist() == [3.0, 4.0]


def test_from_tensor_slices_dict_and_nested_structures():
    features = {"a": np.arange(3), "b": (torch.ones(3, 2), np.zeros(3))}
    elements = list(Dataset.from_tensor_slices((features, np.arange(3) * 10)))
    assert len(elements) == 3
    feat, label = elements[2]
    assert set(feat) == {"a", "b"} and int(feat["a"]) == 2 and int(label) == 20
    assert feat["b"][0].tolist() == [1.0, 1.0] and float(feat["b"][1]) == 0.0


def test_from_tensor_slices_mismatched_lengths_is_a_clear_error():
    with pytest.raises(ValueError, match=r"same size in dimension 0.*\[5, 4\]"):
        Dataset.from_tensor_slices((np.zeros((5, 2)), np.zeros(4)))
    with pytest.raises(ValueError, match="from_tensors"):
        Dataset.from_tensor_slices(np.float32(3.0))


def test_from_tensors_is_one_element():
    ds = Dataset.from_tensors((np.arange(4), 7))
    (only,) = list(ds)
    assert only[0].tolist() == [0, 1, 2, 3] and int(only[1]) == 7
    assert ds.cardinality() == 1


@pytest.mark.parametrize("args", [(5,), (2, 9), (1, 10, 3), (10, 0, -2), (4, 2)])
def test_range_matches_python_range_as_int64(args):
    ds = Dataset.range(*args)
    out = list(ds)
    assert [int(v) for v in out] == list(range(*args))
    assert all(v.dtype == torch.int64 for v in out)
    assert ds.cardinality() == len(range(*args))
    with pytest.raises(ValueError, match="step"):
        Dataset.range(0, 5, 0)


def test_range_keywords_are_output_type_and_name():
    # TF 2.21: Dataset.range(*args, **kwargs) with output_type and name read from kwargs.
    out = list(Dataset.range(3, output_type=torch.int32, name="r"))
    assert [int(v) for v in out] == [0, 1, 2] and all(v.dtype == torch.int32 for v in out)
    with pytest.raises(TypeError, match=r"unexpected keyword arguments \['stop'\]"):
        Dataset.range(3, stop=5)


def test_zip_tuple_dict_and_varargs_stop_at_shortest():
    a, b = Dataset.range(5), Dataset.range(10, 13)
    assert [(int(x), int(y)) for x, y in Dataset.zip((a, b))] == list(zip(range(5), range(10, 13)))
    assert [(int(x), int(y)) for x, y in Dataset.zip(a, b)] == list(zip(range(5), range(10, 13)))
    assert [int(y) for _, y in Dataset.zip(datasets=(a, b))] == [10, 11, 12]
    as_dict = list(Dataset.zip({"p": a, "q": b}))
    assert [int(e["q"]) for e in as_dict] == [10, 11, 12]
    assert Dataset.zip((a, b)).cardinality() == 3
    assert Dataset.zip((a.repeat(), b)).cardinality() == 3
    assert Dataset.zip((a.repeat(), b.repeat())).cardinality() == data.INFINITE_CARDINALITY
    assert Dataset.zip((a.filter(lambda x: x > 0), b)).cardinality() == data.UNKNOWN_CARDINALITY


def test_concatenate_order_and_cardinality():
    ds = Dataset.range(3).concatenate(Dataset.range(10, 12))
    assert values(ds) == [0, 1, 2, 10, 11]
    assert ds.cardinality() == 5
    assert Dataset.range(3).concatenate(Dataset.range(2).repeat()).cardinality() == data.INFINITE_CARDINALITY
    with pytest.raises(TypeError, match="different element structures"):
        Dataset.range(3).concatenate(Dataset.zip((Dataset.range(2), Dataset.range(2))))


# ---------------------------------------------------------------- element-wise ops


def test_map_unpacks_tuples_passes_dicts_whole_and_converts_outputs():
    pairs = Dataset.from_tensor_slices((np.arange(4), np.arange(4) * 2))
    assert values(pairs.map(lambda x, y: x + y)) == [3 * i for i in range(4)]
    dicts = Dataset.from_tensor_slices({"a": np.arange(3)})
    assert values(dicts.map(lambda d: d["a"] * 5)) == [0, 5, 10]
    as_list = list(pairs.map(lambda x, y: [y, x]))
    assert type(as_list[1]) is tuple and (int(as_list[1][0]), int(as_list[1][1])) == (2, 1)
    numpy_out = list(Dataset.range(2).map(lambda x: np.float32(0.5) * np.ones(2, np.float32)))
    assert isinstance(numpy_out[0], torch.Tensor) and numpy_out[0].tolist() == [0.5, 0.5]
    with pytest.raises(TypeError, match="Dataset.map: the function returned None"):
        list(Dataset.range(2).map(lambda x: None))


def test_filter_keeps_matching_elements_and_rejects_non_boolean_predicates():
    ds = Dataset.range(20).filter(lambda x: x % 3 == 0)
    assert values(ds) == [i for i in range(20) if i % 3 == 0]
    assert ds.cardinality() == data.UNKNOWN_CARDINALITY
    with pytest.raises(TypeError, match="scalar boolean"):
        list(Dataset.range(3).filter(lambda x: x))


def test_take_while_flat_map_reduce_apply_enumerate():
    assert values(Dataset.range(10).take_while(lambda x: x < 4)) == [0, 1, 2, 3]
    flat = Dataset.range(1, 4).flat_map(lambda n: Dataset.range(int(n)))
    assert values(flat) == [j for n in range(1, 4) for j in range(n)]
    assert int(Dataset.range(101).reduce(np.int64(0), lambda s, x: s + x)) == sum(range(101))
    assert values(Dataset.range(6).apply(lambda d: d.skip(4))) == [4, 5]
    pairs = [(int(i), int(v)) for i, v in Dataset.range(10, 13).enumerate(start=5)]
    assert pairs == [(5, 10), (6, 11), (7, 12)]
    assert int(Dataset.from_tensors(np.int64(9)).get_single_element()) == 9
    with pytest.raises(ValueError, match="more than one"):
        Dataset.range(2).get_single_element()


def test_interleave_follows_the_documented_tf_order():
    ds = Dataset.range(1, 6).interleave(lambda x: Dataset.from_tensors(x).repeat(6), cycle_length=2, block_length=4)
    expected = [1] * 4 + [2] * 4 + [1, 1, 2, 2] + [3] * 4 + [4] * 4 + [3, 3, 4, 4] + [5] * 6
    assert values(ds) == expected


# ---------------------------------------------------------------- batching


@pytest.mark.parametrize("n,size,drop", [(10, 3, False), (10, 3, True), (9, 3, False), (2, 5, False), (2, 5, True),
                                          (0, 4, False)])
def test_batch_sizes_remainder_and_cardinality(n, size, drop):
    for source in (Dataset.from_tensor_slices(np.arange(n)), Dataset.range(n).map(lambda x: x)):
        batches = values(source.batch(size, drop_remainder=drop))
        full, rest = divmod(n, size)
        expected = [list(range(i * size, (i + 1) * size)) for i in range(full)]
        if rest and not drop:
            expected.append(list(range(full * size, n)))
        assert batches == expected
        expected_count = full if drop else math.ceil(n / size)
        if source.cardinality() >= 0:
            assert source.batch(size, drop).cardinality() == expected_count


def test_batch_stacks_nested_leaves_and_reports_shape_errors():
    ds = Dataset.from_tensor_slices(({"a": np.ones((5, 2))}, np.arange(5))).map(lambda f, y: (f, y))
    features, labels = next(iter(ds.batch(4)))
    assert features["a"].shape == (4, 2) and labels.tolist() == [0, 1, 2, 3]
    ragged = Dataset.range(1, 3).map(lambda n: torch.zeros(int(n)))
    with pytest.raises(ValueError, match="padded_batch"):
        list(ragged.batch(2))


@pytest.mark.parametrize("bad", [0, -1, -5])
def test_batch_size_must_be_positive(bad):
    with pytest.raises(ValueError, match=rf"batch_size must be >= 1, got {bad}"):
        Dataset.range(4).batch(bad)


def test_padded_batch_pads_to_the_longest_element():
    ds = Dataset.range(1, 5).map(lambda n: torch.arange(int(n)) + 1).padded_batch(3)
    first, second = list(ds)
    expected = np.zeros((3, 3), dtype=np.int64)
    for row, length in enumerate(range(1, 4)):
        expected[row, :length] = np.arange(length) + 1
    np.testing.assert_array_equal(first.numpy(), expected)
    assert second.tolist() == [[1, 2, 3, 4]]
    fixed = next(iter(Dataset.range(1, 3).map(lambda n: torch.ones(int(n))).padded_batch(2, [5], -1.0)))
    assert fixed.tolist() == [[1, -1, -1, -1, -1], [1, 1, -1, -1, -1]]


def test_unbatch_round_trip_and_cardinality():
    x = np.arange(14).reshape(7, 2)
    ds = Dataset.from_tensor_slices(x).batch(3).unbatch()
    assert values(ds) == x.tolist()
    assert ds.cardinality() == data.UNKNOWN_CARDINALITY  # partial last batch: leading size unknown
    assert Dataset.from_tensor_slices(x).batch(3, drop_remainder=True).unbatch().cardinality() == 6
    assert Dataset.from_tensors(np.zeros((4, 2))).unbatch().cardinality() == 4
    with pytest.raises(ValueError, match="at least one dimension"):
        list(Dataset.range(2).unbatch())


def test_repeat_then_batch_crosses_epochs_but_batch_then_repeat_does_not():
    n, size, epochs = 5, 2, 2
    stream = list(range(n)) * epochs
    across = [stream[i:i + size] for i in range(0, len(stream), size)]
    per_epoch = [list(range(n))[i:i + size] for i in range(0, n, size)] * epochs
    assert values(Dataset.range(n).repeat(epochs).batch(size)) == across
    assert values(Dataset.range(n).batch(size).repeat(epochs)) == per_epoch


# ---------------------------------------------------------------- counting ops


def test_repeat_counts_and_forever():
    assert values(Dataset.range(3).repeat(3)) == [0, 1, 2] * 3
    assert values(Dataset.range(3).repeat(0)) == []
    assert values(Dataset.range(3).repeat().take(7)) == [i % 3 for i in range(7)]
    assert values(Dataset.range(3).repeat(-1).take(4)) == [0, 1, 2, 0]
    empty_forever = Dataset.range(0).repeat()
    assert values(empty_forever) == [] and empty_forever.cardinality() == 0
    assert Dataset.range(3).repeat().cardinality() == data.INFINITE_CARDINALITY
    assert Dataset.range(3).repeat(4).cardinality() == 12
    assert Dataset.range(3).filter(lambda x: x > 0).repeat(2).cardinality() == data.UNKNOWN_CARDINALITY
    with pytest.raises(TypeError, match="repeat"):  # negative counts: tests/data/test_dataset_errors.py
        Dataset.range(3).repeat("twice")


def test_take_and_skip_order_counts_and_errors():
    ds = Dataset.range(10)
    assert values(ds.take(3)) == [0, 1, 2] and values(ds.take(-1)) == list(range(10))
    assert values(ds.take(0)) == [] and values(ds.take(50)) == list(range(10))
    assert values(ds.skip(7)) == [7, 8, 9] and values(ds.skip(-1)) == [] and values(ds.skip(20)) == []
    assert values(ds.skip(2).take(3)) == [2, 3, 4]
    assert [ds.take(c).cardinality() for c in (3, -1, 50)] == [3, 10, 10]
    assert [ds.skip(c).cardinality() for c in (7, -1, 20)] == [3, 0, 0]
    assert ds.repeat().take(5).cardinality() == 5 and ds.repeat().skip(5).cardinality() == -1
    for op in ("take", "skip"):  # negative counts other than -1: tests/data/test_dataset_errors.py
        with pytest.raises(TypeError, match=rf"Dataset.{op}: count must be an integer, got 1.5"):
            getattr(ds, op)(1.5)


@pytest.mark.parametrize("n,shards", [(10, 3), (7, 7), (5, 8), (12, 4)])
def test_shard_takes_every_nth_from_index(n, shards):
    x = np.arange(n) * 3
    for index in range(shards):
        ds = Dataset.from_tensor_slices(x).shard(shards, index)
        assert values(ds) == x[index::shards].tolist()
        assert ds.cardinality() == len(x[index::shards])


def test_shard_validates_index():
    with pytest.raises(ValueError, match=r"index must be < num_shards, got index=3 with num_shards=3"):
        Dataset.range(9).shard(3, 3)
    with pytest.raises(ValueError, match="index must be >= 0"):
        Dataset.range(9).shard(3, -1)
    with pytest.raises(ValueError, match="num_shards must be >= 1"):
        Dataset.range(9).shard(0, 0)


def test_len_bool_and_cardinality_numpy():
    assert len(Dataset.range(7).batch(2)) == 4
    with pytest.raises(TypeError, match="infinite"):
        len(Dataset.range(2).repeat())
    with pytest.raises(TypeError, match="unknown"):
        len(Dataset.range(2).filter(lambda x: x > 0))
    assert bool(Dataset.range(2).filter(lambda x: x > 0))
    assert Dataset.range(4).cardinality().numpy() == np.int64(4)
    assert data.experimental.cardinality(Dataset.range(4).map(lambda x: x)) == 4


# ---------------------------------------------------------------- cache


def _counting_generator(n):
    calls = {"count": 0}

    def generate():
        calls["count"] += 1
        yield from range(n)

    return generate, calls


def test_cache_fills_on_the_first_complete_pass_only():
    generate, calls = _counting_generator(5)
    ds = Dataset.from_generator(generate, output_signature=data.TensorSpec((), torch.int64)).cache()
    partial = iter(ds)
    assert int(next(partial)) == 0 and int(next(partial)) == 1
    partial.close()
    assert values(ds) == [0, 1, 2, 3, 4]  # the cut-short pass left no truncated cache
    assert values(ds) == [0, 1, 2, 3, 4]
    assert values(ds.repeat(2)) == [0, 1, 2, 3, 4] * 2
    assert calls["count"] == 2


def test_cache_to_file_is_reused_by_a_new_pipeline(tmp_path):
    generate, calls = _counting_generator(4)
    make = lambda: Dataset.from_generator(generate, output_types=torch.int64).map(lambda x: x * 2).cache(
        str(tmp_path / "c"))
    assert values(make()) == [0, 2, 4, 6]
    assert values(make()) == [0, 2, 4, 6] and calls["count"] == 1


# ---------------------------------------------------------------- from_generator, specs, numpy


def test_from_generator_signature_casts_and_checks_shapes():
    def generate(n):
        for i in range(int(n)):
            yield [float(i)] * 2, i

    signature = (data.TensorSpec((2,), torch.float64), data.TensorSpec((), torch.int64))
    ds = Dataset.from_generator(generate, output_signature=signature, args=(3,))
    out = list(ds)
    assert len(out) == 3 and out[2][0].dtype == torch.float64 and out[2][0].tolist() == [2.0, 2.0]
    assert out[2][1].dtype == torch.int64 and ds.element_spec == signature
    assert ds.cardinality() == data.UNKNOWN_CARDINALITY
    bad = Dataset.from_generator(generate, output_signature=(data.TensorSpec((3,)), data.TensorSpec((), torch.int64)),
                                 args=(1,))
    with pytest.raises(TypeError, match=r"shape \(2,\)"):
        list(bad)
    legacy = Dataset.from_generator(lambda: iter([(1, 2)]), output_types=(torch.float32, torch.int32),
                                    output_shapes=((), ()))
    (element,) = list(legacy)
    assert element[0].dtype == torch.float32 and element[1].dtype == torch.int32
    with pytest.raises(TypeError, match="callable"):
        Dataset.from_generator(generate(3))


def test_element_spec_of_sources_and_batches():
    ds = Dataset.from_tensor_slices((np.zeros((10, 3), np.float32), np.zeros(10, np.int64)))
    assert ds.element_spec == (data.TensorSpec((3,), torch.float32), data.TensorSpec((), torch.int64))
    assert ds.batch(4).element_spec[0].shape.as_list() == [None, 3]
    assert ds.batch(4, drop_remainder=True).element_spec[0].shape.as_list() == [4, 3]
    assert ds.map(lambda x, y: x).batch(2).element_spec == data.TensorSpec((None, 3), torch.float32)


def test_spec_and_shape_take_tfs_keyword_names():
    # TF 2.21: TensorSpec(shape, dtype=tf.float32, name=None); shape has no default, nor TensorShape's dims.
    spec = data.TensorSpec(shape=[None, 3], dtype=torch.float32, name="x")
    assert spec.is_compatible_with(spec_or_tensor=torch.zeros(2, 3))
    assert not spec.is_compatible_with(spec_or_tensor=torch.zeros(2, 4))
    assert data.TensorShape(dims=[2, None]).is_compatible_with(other=[2, 5])
    assert not data.TensorShape(dims=[2, None]).is_compatible_with(other=[3, 5])
    with pytest.raises(TypeError, match="shape"):
        data.TensorSpec(dtype=torch.float32)
    with pytest.raises(TypeError, match="dims"):
        data.TensorShape()


def test_as_numpy_iterator_yields_numpy_values():
    out = list(Dataset.from_tensor_slices({"x": np.arange(3.0), "y": np.ones((3, 2))}).as_numpy_iterator())
    assert isinstance(out[1]["x"], np.floating) and out[1]["x"] == 1.0
    assert isinstance(out[1]["y"], np.ndarray) and out[1]["y"].shape == (2,)


def test_iterator_counts_produced_elements():
    iterator = iter(Dataset.range(10).batch(3))
    next(iterator)
    next(iterator)
    assert iterator.produced == 2
    assert len(list(iterator)) == 2 and iterator.produced == 4


# ---------------------------------------------------------------- options


def test_options_defaults_merge_and_validation():
    assert data.Options().experimental_distribute.auto_shard_policy == data.experimental.AutoShardPolicy.AUTO
    options = data.Options()
    options.experimental_distribute.auto_shard_policy = data.experimental.AutoShardPolicy.DATA
    ds = Dataset.range(4).with_options(options)
    later = data.Options()
    later.deterministic = False
    merged = ds.map(lambda x: x).with_options(later).options()
    assert merged.experimental_distribute.auto_shard_policy == data.experimental.AutoShardPolicy.DATA
    assert merged.deterministic is False and Dataset.range(2).options().deterministic is None
    assert values(ds) == [0, 1, 2, 3]
    zipped = Dataset.zip((ds, Dataset.range(2)))
    assert zipped.options().experimental_distribute.auto_shard_policy == data.experimental.AutoShardPolicy.DATA
    with pytest.raises(AttributeError, match="Cannot set option 'no_such_option'"):
        options.no_such_option = 1
    options.experimental_optimization.map_parallelization = True
    assert data.AUTOTUNE == data.experimental.AUTOTUNE == -1
    assert [p.name for p in data.experimental.AutoShardPolicy] == ["OFF", "AUTO", "FILE", "DATA", "HINT"]
