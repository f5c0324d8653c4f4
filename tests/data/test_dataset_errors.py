"""Dataset inputs that tf.data rejects or reads in a particular way: concatenating incompatible
datasets, negative take/skip/repeat counts, generator elements that miss their signature (TF 2.21 semantics)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from torchstrategy import data
from torchstrategy.data import Dataset


def values(ds):
    return [int(x) for x in ds]


# ---------------------------------------------------------------- concatenate


@pytest.mark.parametrize("make_second, shown", [
    # TF 2.21: range(3).concatenate(from_tensor_slices([1., 2.])) -> TypeError "Incompatible dataset
    # elements: TensorSpec(shape=(), dtype=tf.int64) vs. TensorSpec(shape=(), dtype=tf.float32)"
    (lambda: Dataset.from_tensor_slices([1.0, 2.0]), "torch.float32"),
    # TF 2.21: int64 vs int32 is refused too (no promotion)
    (lambda: Dataset.from_tensor_slices(np.zeros(3, np.int32)), "torch.int32"),
    # TF 2.21: a scalar vs a pair -> TypeError naming both structures
    (lambda: Dataset.zip((Dataset.range(2), Dataset.range(2))), "(TensorSpec"),
])
def test_concatenate_of_incompatible_datasets_names_both_specs(make_second, shown):
    with pytest.raises(TypeError, match="incompatible dataset elements") as caught:
        Dataset.range(3).concatenate(make_second())
    message = str(caught.value)
    assert "dtype=torch.int64" in message and shown in message and " vs." in message


def test_concatenate_of_dicts_with_other_keys_is_refused():
    # TF 2.21: {'a': ...} vs. {'b': ...} -> TypeError
    with pytest.raises(TypeError, match=r"\{'a': TensorSpec.*vs\.\n  \{'b': TensorSpec"):
        Dataset.from_tensor_slices({"a": [1]}).concatenate(Dataset.from_tensor_slices({"b": [1]}))


def test_concatenate_with_spec_known_only_from_elements_is_checked_on_iteration():
    first = Dataset.range(3).map(lambda x: x)
    second = Dataset.range(2).map(lambda x: x.to(torch.float32))
    joined = first.concatenate(second)  # map specs are unknown until an element is made
    iterator = iter(joined)
    assert [int(next(iterator)) for _ in range(3)] == [0, 1, 2]
    with pytest.raises(TypeError, match="incompatible dataset elements"):
        next(iterator)
    # compatible lazily-typed inputs still concatenate
    assert values(first.concatenate(Dataset.range(10, 12).map(lambda x: x + 1))) == [0, 1, 2, 11, 12]


def test_concatenate_with_other_sizes_or_ranks_is_allowed_with_unknown_sizes():
    # TF 2.21: (3,) then (5,) float32 -> element_spec TensorSpec(shape=(None,)); the last element has shape (5,)
    wide = Dataset.from_tensor_slices(np.zeros((4, 3), np.float32)).concatenate(
        Dataset.from_tensor_slices(np.ones((2, 5), np.float32)))
    assert wide.element_spec.shape.as_list() == [None] and wide.element_spec.dtype == torch.float32
    assert [tuple(e.shape) for e in wide] == [(3,)] * 4 + [(5,)] * 2
    # TF 2.21: (3,) then () -> element_spec TensorSpec(shape=<unknown>), all 8 elements
    ranks = Dataset.from_tensor_slices(np.zeros((4, 3), np.float32)).concatenate(
        Dataset.from_tensor_slices(np.zeros(4, np.float32)))
    assert ranks.element_spec.shape.rank is None and "<unknown>" in repr(ranks.element_spec)
    assert len(list(ranks)) == 8


# ---------------------------------------------------------------- negative counts


@pytest.mark.parametrize("count", [-1, -2, -5])
def test_every_negative_count_means_all_or_forever(count):
    ds = Dataset.range(3)
    # TF 2.21, for -1, -2 and -5 alike: take -> all 3 elements, cardinality 3;
    # repeat -> forever, cardinality INFINITE (-1); skip -> nothing, cardinality 0
    assert values(ds.take(count)) == [0, 1, 2] and ds.take(count).cardinality() == 3
    assert values(ds.repeat(count).take(7)) == [0, 1, 2, 0, 1, 2, 0]
    assert ds.repeat(count).cardinality() == data.INFINITE_CARDINALITY
    assert values(ds.skip(count)) == [] and ds.skip(count).cardinality() == 0
    # TF 2.21 reports the raw count (-2, -5) as take's cardinality on an infinite input; here it is
    # INFINITE, which is what such a dataset is
    assert ds.repeat().take(count).cardinality() == data.INFINITE_CARDINALITY
    assert values(ds.repeat().take(count).take(5)) == [0, 1, 2, 0, 1]
    # the fast index path and a resumed pass agree with a plain pass
    shuffled = Dataset.range(6).shuffle(6, seed=1, reshuffle_each_iteration=False).take(count).batch(4)
    assert [b.tolist() for b in shuffled._iterate_from(1)] == [b.tolist() for b in shuffled][1:]


# ---------------------------------------------------------------- from_generator against its signature


def _generator_of(*items):
    return lambda: iter(items)


def test_generator_element_of_wrong_type_names_its_index_and_spec():
    # TF 2.21 (raised inside the iterator): TypeError "`generator` yielded an element that could not be
    # converted to the expected type. The expected type was float32, but the yielded element was x."
    ds = Dataset.from_generator(_generator_of(1.0, 2.0, "x"), output_signature=data.TensorSpec((), torch.float32))
    with pytest.raises(TypeError, match=r"yielded element 2 .*'x'.*expected TensorSpec\(shape=\(\), "
                                        r"dtype=torch.float32"):
        list(ds)


@pytest.mark.parametrize("kwargs", [
    {"output_signature": data.TensorSpec((3,), torch.float32)},
    {"output_types": torch.float32, "output_shapes": (3,)},
])
def test_generator_element_of_wrong_shape_names_its_index_and_spec(kwargs):
    # TF 2.21: TypeError "`generator` yielded an element of shape (4,) where an element of shape (3,) was expected."
    ds = Dataset.from_generator(_generator_of(np.zeros(3, np.float32), np.zeros(3, np.float32),
                                              np.zeros(4, np.float32)), **kwargs)
    with pytest.raises(TypeError, match=r"yielded element 2 .*shape \(4,\) where TensorSpec\(shape=\(3,\)"):
        list(ds)


def test_generator_element_of_wrong_structure_names_its_index_and_structure():
    # TF 2.21: TypeError "`generator` yielded an element that did not match the expected structure. The
    # expected structure was (tf.float32, tf.float32), but the yielded element was 1.0."
    signature = (data.TensorSpec((), torch.float32), data.TensorSpec((), torch.float32))
    ds = Dataset.from_generator(_generator_of((1.0, 2.0), 1.0), output_signature=signature)
    with pytest.raises(TypeError, match=r"yielded element 1 .*1\.0, which does not match the expected structure "
                                        r"\(TensorSpec"):
        list(ds)
    # each pass counts from 0 again
    with pytest.raises(TypeError, match="yielded element 1 "):
        list(ds)
