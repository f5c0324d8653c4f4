"""Writes TF 2.21's results for the tf.sparse, tf.sets and tf.lookup cases that tests/test_sparse.py,
tests/test_sets.py and tests/test_lookup.py check (run with TF's venv, outside the suite):
    /path/to/tf-venv/bin/python tools/tf_reference/sparse_reference.py
Each case is an expression over `tf` (TF here, torchstrategy in the tests) and the names set up in SETUP; a
SparseTensor result is stored as its indices, values (strings decoded) and dense_shape, a tensor as dtype and
values, a tuple/list item by item, a failure as its exception's class name."""
from __future__ import annotations

import json
import os
import sys
import tempfile

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "tests",
                   "sparse_reference.json")

SETUP = '''
st = tf.SparseTensor([[0, 1], [1, 0], [1, 2], [2, 3]], [1.0, 2.0, 3.0, 4.0], [3, 4])
unordered = tf.SparseTensor([[2, 3], [0, 1], [1, 2], [1, 0]], [4.0, 1.0, 3.0, 2.0], [3, 4])
sti = tf.SparseTensor([[0, 0], [0, 2], [1, 1], [3, 0]], [5, -1, 7, 2], [4, 3])
st3 = tf.SparseTensor([[0, 0, 1], [0, 1, 0], [1, 0, 2], [1, 1, 1]], [1.0, 2.0, 3.0, 4.0], [2, 2, 3])
other = tf.SparseTensor([[0, 1], [1, 1], [2, 3]], [10.0, -3.0, -4.0], [3, 4])
empty_rows = tf.SparseTensor([[1, 0], [3, 2]], [7, 8], [5, 3])
words = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], ["a", "b", "c"], [2, 2])
colors = tf.SparseTensor([[0, 0], [1, 0], [1, 1]], ["red", "blue", "green"], [2, 2])
ints = tf.SparseTensor([[0, 0], [1, 0]], tf.constant([7, 42], tf.int64), [2, 1])
set_a = tf.constant([[1, 2, 3, 0], [4, 5, 5, 6]])
set_b = tf.constant([[3, 4, 1, 1], [6, 6, 7, 0]])
sparse_set_a = tf.SparseTensor([[0, 0], [0, 1], [1, 0], [1, 1], [1, 3]], [1, 2, 4, 5, 5], [2, 4])
data = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
'''

CASES = [
    # SparseTensor and the conversions
    "st.indices", "st.values", "st.dense_shape", "st.shape", "st.dtype", "st.get_shape()", "st.with_values(st.values * 2)",
    "tf.sparse.to_dense(st)", "tf.sparse.to_dense(st, default_value=-1.0)", "tf.sparse.to_dense(sti)",
    "tf.sparse.to_dense(unordered)", "tf.sparse.from_dense(tf.constant([[0, 3], [4, 0]]))",
    "tf.sparse.to_dense(tf.sparse.reorder(unordered))", "tf.sparse.reorder(unordered)",
    "tf.sparse.to_dense(words, default_value='')",
    # structure
    "tf.sparse.reshape(st, [4, 3])", "tf.sparse.reshape(st, [-1, 2])", "tf.sparse.reshape(st3, [2, 6])",
    "tf.sparse.reshape(st, [5, 3])",
    "tf.sparse.concat(1, [st, other])", "tf.sparse.concat(0, [st, other])", "tf.sparse.concat(-1, [st, sti])",
    "tf.sparse.concat(1, [st, tf.SparseTensor([[0, 0]], [9.0], [2, 2])], expand_nonconcat_dims=True)",
    "tf.sparse.concat(1, [st, tf.SparseTensor([[0, 0]], [9.0], [2, 2])])",
    "tf.sparse.slice(st, [0, 1], [2, 3])", "tf.sparse.slice(st, [1, 0], [5, 5])", "tf.sparse.slice(st3, [1, 0, 1], [1, 2, 2])",
    "tf.sparse.split(sp_input=st, num_split=2, axis=1)", "tf.sparse.split(sp_input=st, num_split=2, axis=0)",
    "tf.sparse.split(sp_input=st, num_split=3, axis=1)",
    "tf.sparse.expand_dims(st, 0)", "tf.sparse.expand_dims(st, -1)", "tf.sparse.expand_dims(st, 1)",
    "tf.sparse.transpose(st)", "tf.sparse.transpose(st3, [2, 0, 1])", "tf.sparse.transpose(st3)",
    "tf.sparse.retain(st, [True, False, True, False])", "tf.sparse.reset_shape(st)",
    "tf.sparse.reset_shape(st, [5, 6])", "tf.sparse.reset_shape(st, [2, 2])",
    "tf.sparse.fill_empty_rows(empty_rows, -1)", "tf.sparse.fill_empty_rows(st, 0.5)",
    "tf.sparse.eye(3)", "tf.sparse.eye(2, 4, dtype=tf.int32)",
    "tf.sparse.to_indicator(tf.SparseTensor([[0, 0], [0, 1], [1, 0]], [2, 0, 3], [2, 2]), 4)",
    "tf.sparse.mask(tf.IndexedSlices(tf.constant([[1.0], [2.0], [3.0]]), tf.constant([0, 4, 6])), tf.constant([4]))",
    "tf.sparse.map_values(tf.math.square, st)", "tf.sparse.map_values(tf.add, st, 10.0)",
    "tf.sparse.map_values(tf.add, st, st)",
    # math
    "tf.sparse.add(st, other)", "tf.sparse.add(st, other, threshold=3.5)", "tf.sparse.add(st, tf.ones([3, 4]))",
    "tf.sparse.add(tf.ones([3, 4]), st)",
    "tf.sparse.maximum(st, other)", "tf.sparse.minimum(st, other)",
    "tf.sparse.reduce_sum(st)", "tf.sparse.reduce_sum(st, axis=0)", "tf.sparse.reduce_sum(st, axis=1, keepdims=True)",
    "tf.sparse.reduce_sum(st3, axis=[0, 2])", "tf.sparse.reduce_sum(st, axis=1, output_is_sparse=True)",
    "tf.sparse.reduce_sum(sti, axis=-1)",
    "tf.sparse.reduce_max(st)", "tf.sparse.reduce_max(st, axis=1)", "tf.sparse.reduce_max(sti, axis=0)",
    "tf.sparse.reduce_max(tf.SparseTensor([[0, 0], [0, 1]], [-3.0, -5.0], [2, 2]), axis=1)",
    "tf.sparse.reduce_max(st, axis=0, output_is_sparse=True)", "tf.sparse.reduce_max(st3, axis=2, keepdims=True)",
    "tf.sparse.softmax(st)", "tf.sparse.softmax(st3)",
    "tf.sparse.sparse_dense_matmul(st, tf.ones([4, 2]))", "tf.sparse.sparse_dense_matmul(st, tf.ones([3, 2]), adjoint_a=True)",
    "tf.sparse.sparse_dense_matmul(tf.ones([2, 3]), st)",
    "tf.sparse.segment_sum(data, tf.constant([0, 2, 1, 2]), tf.constant([0, 0, 1, 1]))",
    "tf.sparse.segment_mean(data, tf.constant([0, 2, 1, 2]), tf.constant([0, 0, 1, 1]))",
    "tf.sparse.segment_sqrt_n(data, tf.constant([0, 2, 1]), tf.constant([0, 0, 2]))",
    "tf.sparse.segment_sum(data, tf.constant([0, 1]), tf.constant([0, 2]), num_segments=4)",
    "tf.sparse.segment_mean(data, tf.constant([0, 1]), tf.constant([1, 1]), num_segments=3)",
    "tf.sparse.bincount(tf.constant([[1, 1, 3], [2, 2, 2]]))",
    "tf.sparse.bincount(tf.constant([[1, 1, 3], [2, 2, 2]]), axis=-1)",
    "tf.sparse.bincount(tf.constant([1, 4, 1, 0]), minlength=6)",
    "tf.sparse.bincount(tf.constant([1, 4, 1, 0]), maxlength=2)",
    "tf.sparse.bincount(tf.constant([1, 4, 1]), weights=tf.constant([0.5, 1.0, 2.0]))",
    "tf.sparse.bincount(tf.constant([[1, 1, 3], [2, 2, 2]]), axis=-1, binary_output=True)",
    "tf.sparse.bincount(sti, axis=-1)",
    "tf.sparse.sampled_addmm(tf.constant([[0, 0], [1, 1]]), tf.constant([1.0, 2.0]), tf.constant([2, 2]), "
    "tf.ones([2, 3]), tf.ones([3, 2]), beta=0.5, alpha=2.0)",
    "tf.sparse.cross([words, colors])", "tf.sparse.cross([words, colors], separator='+')",
    "tf.sparse.cross([words, tf.constant([['x'], ['y']])])", "tf.sparse.cross([words, ints])",
    "tf.sparse.cross_hashed([words, colors])", "tf.sparse.cross_hashed([words, colors], num_buckets=100)",
    "tf.sparse.cross_hashed([words, colors], num_buckets=100, hash_key=17)",
    "tf.sparse.cross_hashed([words, ints], num_buckets=1000)", "tf.sparse.cross_hashed([ints, tf.constant([[-3], [5]], "
    "tf.int64)])", "tf.sparse.cross_hashed([words, tf.SparseTensor([[0, 0]], [1.5], [2, 1])])",
    # bad input
    "tf.sparse.reshape(st, [5, 5])", "tf.sparse.concat(0, [st, tf.SparseTensor([[0, 0]], [1.0], [2, 5])])",
    "tf.sparse.add(st, tf.SparseTensor([[0, 0]], [1.0], [4, 4]))", "tf.sparse.retain(st, [True])",
    "tf.sparse.transpose(st, [0, 0])", "tf.sparse.split(sp_input=st, num_split=5, axis=0)",
    "tf.SparseTensor([[0, 5]], [1.0], [2, 2])", "tf.sparse.to_dense(tf.SparseTensor([[0, 5]], [1.0], [2, 2]))",
    "tf.sparse.softmax(tf.SparseTensor([[0]], [1.0], [2]))",
    # tf.sets
    "tf.sets.size(set_a)", "tf.sets.size(sparse_set_a)", "tf.sets.intersection(set_a, set_b)",
    "tf.sets.union(set_a, set_b)", "tf.sets.difference(set_a, set_b)", "tf.sets.difference(set_a, set_b, aminusb=False)",
    "tf.sets.intersection(sparse_set_a, set_b)", "tf.sets.union(sparse_set_a, sparse_set_a)",
    "tf.sets.size(tf.constant([[[1, 1], [2, 3]], [[4, 4], [4, 4]]]))",
    "tf.sets.intersection(tf.constant([['a', 'b'], ['c', 'a']]), tf.constant([['b', 'b'], ['a', 'c']]))",
    "tf.sets.union(tf.constant([1, 2]), tf.constant([2, 3]))", "tf.sets.size(tf.constant([1.5]))",
    "tf.sets.union(set_a, tf.constant([[1, 2]]))",
    # tf.lookup
    "table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(tf.constant(['a', 'b', 'c']), "
    "tf.constant([1, 2, 3], tf.int64)), default_value=-1)",
    "table.lookup(tf.constant(['a', 'x', 'c']))", "table.lookup(tf.constant([['b'], ['z']]))", "table.size()",
    "table.key_dtype", "table.value_dtype", "table.default_value", "table.export()",
    "table.lookup(tf.constant([1, 2]))",
    "ints = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer([1, 5, 9], [10.0, 50.0, 90.0]), -1.0)",
    "ints.lookup(tf.constant([5, 7, 1]))", "ints.key_dtype", "ints.value_dtype",
    "ints.lookup(tf.constant([5], tf.int64))", "ints.lookup(tf.constant(['a']))",
    "rev = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(tf.constant([1, 2], tf.int64), "
    "tf.constant(['one', 'two'])), 'none')",
    "rev.lookup(tf.constant([2, 3], tf.int64))",
    "tf.lookup.KeyValueTensorInitializer(['a', 'b'], [1, 2, 3])",
    "tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(['a'], [1]), default_value='x')",
    "vocab = tf.lookup.StaticVocabularyTable(tf.lookup.KeyValueTensorInitializer(tf.constant(['emerson', 'lake', "
    "'palmer']), tf.constant([0, 1, 2], tf.int64)), num_oov_buckets=5)",
    "vocab.lookup(tf.constant(['lake', 'king', 'crimson', 'emerson', 'yes', 'genesis', 'x', '']))", "vocab.size()",
    "vocab_ints = tf.lookup.StaticVocabularyTable(tf.lookup.KeyValueTensorInitializer(tf.constant([10, 20], "
    "tf.int64), tf.constant([0, 1], tf.int64)), num_oov_buckets=3)",
    "vocab_ints.lookup(tf.constant([20, 7, 10, 123456, -4], tf.int64))",
    "text = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(VOCAB, tf.string, "
    "tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64, tf.lookup.TextFileIndex.LINE_NUMBER), -1)",
    "text.lookup(tf.constant(['cat\\t3', 'dog\\t5', 'emu']))", "text.size()",
    "cols = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(VOCAB, tf.string, 0, tf.int64, 1, "
    "delimiter='\\t'), -1)",
    "cols.lookup(tf.constant(['cat', 'dog', 'bird']))",
    "tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(VOCAB, tf.string, 0, tf.int64, 1, vocab_size=5), -1)",
    "tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(VOCAB, tf.int64, 0, tf.int64, 1), -1)",
    "tf.lookup.TextFileIndex.WHOLE_LINE", "tf.lookup.TextFileIndex.LINE_NUMBER",
    "voc_file = tf.lookup.StaticVocabularyTable(tf.lookup.TextFileInitializer(VOCAB, tf.string, "
    "tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64, tf.lookup.TextFileIndex.LINE_NUMBER, value_index_offset=1), 2)",
    "voc_file.lookup(tf.constant(['dog\\t5', 'zebra']))",
    "mutable = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, default_value=-1)",
    "mutable.insert(tf.constant(['a', 'b']), tf.constant([1, 2], tf.int64))", "mutable.lookup(tf.constant(['b', 'q']))",
    "mutable.size()", "mutable.insert(tf.constant(['a']), tf.constant([7], tf.int64))", "mutable.lookup(['a'])",
    "mutable.remove(tf.constant(['b']))", "mutable.size()  # after remove", "mutable.export()",
    "mutable.lookup(tf.constant(['a', 'z']), dynamic_default_values=tf.constant([0, 99], tf.int64))",
    "mutable.insert(tf.constant([1]), tf.constant([1], tf.int64))",
    "dense = tf.lookup.experimental.DenseHashTable(tf.int64, tf.int64, default_value=-1, empty_key=0, deleted_key=-1)",
    "dense.insert(tf.constant([5, 9], tf.int64), tf.constant([50, 90], tf.int64))",
    "dense.lookup(tf.constant([9, 4], tf.int64))", "dense.size()", "dense.erase(tf.constant([9], tf.int64))",
    "dense.size()  # after erase", "dense.insert_or_assign(tf.constant([5], tf.int64), tf.constant([55], tf.int64))",
    "dense.lookup(tf.constant([5], tf.int64))", "dense.insert(tf.constant([0], tf.int64), tf.constant([1], tf.int64))",
]


def normalize(value):
    """A result as JSON (see the module docstring)."""
    import tensorflow as tf

    if isinstance(value, tf.SparseTensor):
        values = value.values.numpy()
        return {"sparse": {"indices": value.indices.numpy().tolist(),
                           "values": [v.decode() for v in values] if values.dtype == object else values.tolist(),
                           "dtype": value.dtype.name, "dense_shape": value.dense_shape.numpy().tolist()}}
    if isinstance(value, tf.IndexedSlices):
        return {"indexed_slices": {"values": value.values.numpy().tolist(), "indices": value.indices.numpy().tolist()}}
    if isinstance(value, (tuple, list)):
        return {"seq": [normalize(v) for v in value]}
    if isinstance(value, tf.DType):
        return {"dtype": value.name}
    if isinstance(value, tf.TensorShape):
        return {"shape": value.as_list()}
    if hasattr(value, "numpy"):
        array = value.numpy()
        listed = [v.decode() for v in array.reshape(-1)] if array.dtype == object else array.tolist()
        if array.dtype == object:
            listed = np.array(listed, dtype=object).reshape(array.shape).tolist()
        return {"tensor": {"dtype": value.dtype.name, "value": listed}}
    if value is None or isinstance(value, (bool, int, float, str)):
        return {"py": value}
    return {"type": type(value).__name__}


def main() -> None:
    import tensorflow as tf

    vocab = os.path.join(tempfile.mkdtemp(), "vocab.txt")
    with open(vocab, "w") as handle:
        handle.write("cat\t3\ndog\t5\nemu\t8\n")
    namespace = {"tf": tf, "VOCAB": vocab}
    exec(SETUP, namespace)  # noqa: S102 - fixed text above
    assert len(set(CASES)) == len(CASES), "cases must be unique (add a comment to repeat one)"
    results = []
    for case in CASES:
        try:
            if " = " in case.split("(")[0]:
                exec(case, namespace)  # noqa: S102
                results.append([case, {"py": None}])
            else:
                results.append([case, normalize(eval(case, namespace))])  # noqa: S307
        except Exception as error:  # noqa: BLE001
            results.append([case, {"error": type(error).__name__, "message": str(error).split("\n")[0][:200]}])
    with open(OUT, "w") as handle:
        json.dump({"tf": tf.__version__, "setup": SETUP, "vocab": "cat\t3\ndog\t5\nemu\t8\n", "cases": results},
                  handle, indent=0)
        handle.write("\n")
    print(f"{len(results)} cases -> {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
