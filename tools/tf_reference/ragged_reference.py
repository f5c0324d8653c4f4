"""Prints TF 2.21's results for the cases tests/ragged/ freezes (run with TF's venv, outside the suite):
    /path/to/tf-venv/bin/python tools/tf_reference/ragged_reference.py"""
from __future__ import annotations

import tensorflow as tf

c = tf.ragged.constant
CASES = {
    "constant_shape_3d": lambda: c([[[1, 2], [3, 4]], [[5, 6]]]).shape.as_list(),
    "constant_ragged_rank_1": lambda: c([[[1, 2]], [[3, 4], [5, 6]]], ragged_rank=1).shape.as_list(),
    "constant_big_int_dtype": lambda: c([[1, 2], [3, 2**40]]).dtype.name,
    "constant_empty_dtype": lambda: c([[], []]).dtype.name,
    "to_tensor_default_shape": lambda: c([[1, 2], [3]]).to_tensor(default_value=9, shape=[3, 3]).numpy().tolist(),
    "to_tensor_cut": lambda: c([[1, 2], [3]]).to_tensor(shape=[2, 1]).numpy().tolist(),
    "to_tensor_3d": lambda: c([[[1, 2], [3]], [[5, 6]]]).to_tensor().numpy().tolist(),
    "slice_inner": lambda: c([[1, 2], [3]])[:, :1].to_list(),
    "row_splits": lambda: c([[1, 2], [3], []]).row_splits.numpy().tolist(),
    "value_rowids": lambda: c([[1, 2], [3], []]).value_rowids().numpy().tolist(),
    "bounding_shape": lambda: c([[[1, 2], [3]], [[5, 6]]]).bounding_shape().numpy().tolist(),
    "from_value_rowids_nrows": lambda: tf.RaggedTensor.from_value_rowids([1, 2, 3], [0, 0, 2], nrows=5).to_list(),
    "from_tensor_padding": lambda: tf.RaggedTensor.from_tensor([[1, 0], [2, 3], [0, 0]], padding=0).to_list(),
    "from_tensor_lengths": lambda: tf.RaggedTensor.from_tensor([[1, 0], [2, 3]], lengths=[1, 2]).to_list(),
    "nested_row_splits": lambda: tf.RaggedTensor.from_nested_row_splits(
        [1, 2, 3, 4], [[0, 1, 3], [0, 2, 3, 4]]).to_list(),
    "sum_axis1": lambda: tf.reduce_sum(c([[1, 2], [3], []]), axis=1).numpy().tolist(),
    "sum_axis0": lambda: tf.reduce_sum(c([[1, 2], [3], []]), axis=0).numpy().tolist(),
    "sum_all": lambda: int(tf.reduce_sum(c([[1, 2], [3], []])).numpy()),
    "sum_keepdims": lambda: tf.reduce_sum(c([[1, 2], [3], []]), axis=1, keepdims=True).numpy().tolist(),
    "mean_int_axis1": lambda: (tf.reduce_mean(c([[1, 2], [3], []]), axis=1).numpy().tolist(),
                               tf.reduce_mean(c([[1, 2], [3], []]), axis=1).dtype.name),
    "mean_float_axis0": lambda: tf.reduce_mean(c([[1., 2], [3], []]), axis=0).numpy().tolist(),
    "max_float_axis1": lambda: tf.reduce_max(c([[1., 2], [3], []]), axis=1).numpy().tolist(),
    "max_int_axis1": lambda: tf.reduce_max(c([[1, 2], [3], []]), axis=1).numpy().tolist(),
    "min_int_axis1": lambda: tf.reduce_min(c([[1, 2], [3], []]), axis=1).numpy().tolist(),
    "prod_axis1": lambda: tf.reduce_prod(c([[1., 2], [3], []]), axis=1).numpy().tolist(),
    "any_axis1": lambda: tf.reduce_any(c([[True, False], [False], []]), axis=1).numpy().tolist(),
    "all_axis1": lambda: tf.reduce_all(c([[True, False], [True], []]), axis=1).numpy().tolist(),
    "sum_rank3_axis2": lambda: tf.reduce_sum(c([[[1, 2], [3]], [[4]]]), axis=2).to_list(),
    "sum_rank3_axis1": lambda: tf.reduce_sum(c([[[1, 2], [3]], [[4]]]), axis=1).to_list(),
    "sum_inner_dense_axis1": lambda: tf.reduce_sum(c([[[1, 2]], [[3, 4], [5, 6]]], ragged_rank=1),
                                                   axis=1).numpy().tolist(),
    "concat_axis0": lambda: tf.concat([c([[1, 2], [3]]), c([[4]])], axis=0).to_list(),
    "concat_axis1": lambda: tf.concat([c([[1, 2], [3]]), c([[4], [5, 6]])], axis=1).to_list(),
    "add_scalar": lambda: (c([[1, 2], [3]]) + 1).to_list(),
    "mul_ragged": lambda: (c([[1, 2], [3]]) * c([[1, 2], [3]])).to_list(),
    "range_one_arg": lambda: tf.ragged.range([3, 0, 2]).to_list(),
    "range_float": lambda: tf.ragged.range([1., 2.], [2., 4.], 0.5).to_list(),
    "boolean_mask_dense2d": lambda: tf.ragged.boolean_mask([[1, 2], [3, 4]], [[True, False], [False, True]]).to_list(),
    "boolean_mask_ragged": lambda: tf.ragged.boolean_mask(c([[1, 2], [3]]), c([[True, False], [True]])).to_list(),
    "boolean_mask_rows": lambda: tf.ragged.boolean_mask(c([[1, 2], [3]]), [True, False]).to_list(),
    "map_flat_values": lambda: tf.ragged.map_flat_values(tf.square, c([[1, 2], [3]])).to_list(),
    "stack": lambda: tf.ragged.stack([c([[1, 2], [3]]), c([[4]])]).to_list(),
    "segment_ids": lambda: tf.ragged.row_splits_to_segment_ids([0, 2, 3]).numpy().tolist(),
    "row_splits_from_ids": lambda: tf.ragged.segment_ids_to_row_splits([0, 0, 2]).numpy().tolist(),
    "strings_split": lambda: tf.strings.split(["a b", "c"]).to_list(),
    "ragged_batch": lambda: [b.to_list() for b in tf.data.Dataset.range(1, 5).map(tf.range).ragged_batch(3)],
    "dense_to_ragged_batch": lambda: [b.to_list() for b in tf.data.Dataset.range(1, 5).map(tf.range).apply(
        tf.data.experimental.dense_to_ragged_batch(2))],
    "ragged_batch_fixed": lambda: [type(b).__name__ for b in tf.data.Dataset.range(4).map(
        lambda x: tf.fill([2], x)).ragged_batch(2)],
}

if __name__ == "__main__":
    print(f"# TF {tf.__version__}")
    for key, case in CASES.items():
        print(f"{key!r}: {case()!r},")
