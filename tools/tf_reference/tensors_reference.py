"""Prints the TF 2.21 numbers frozen into the tests of the top-level ops (tests/test_control_flow.py,
tests/test_scatter_ops.py, tests/test_manip_ops.py, tests/test_clip_ops.py, tests/math/test_trig.py, ...).
Run outside the suite: /work/tf-venv/bin/python tools/tf_reference/tensors_reference.py"""
import json
import sys

import numpy as np
import tensorflow as tf


def out(value):
    if isinstance(value, (list, tuple)):
        return [out(v) for v in value]
    if value is None:
        return None
    if hasattr(value, "numpy"):
        value = value.numpy()
    if isinstance(value, (np.ndarray, np.generic)):
        value = np.asarray(value)
        return {"dtype": str(value.dtype), "value": value.tolist() if value.dtype != object else
                [v.decode() for v in value.reshape(-1)]}
    return value


def printed(*args, **kwargs):
    import os
    import tempfile

    path = os.path.join(tempfile.mkdtemp(), "printed.txt")
    tf.print(*args, output_stream="file://" + path, **kwargs)
    with open(path) as handle:
        return handle.read()


x = np.array([-0.9, -0.3, 0.0, 0.4, 0.8], np.float32)
ref = {
    "trig": {name: out(getattr(tf.math, name)(x)) for name in ["tan", "asin", "acos", "atan", "sinh", "cosh", "asinh",
                                                            "atanh"]},
    "acosh": out(tf.math.acosh(tf.constant([1.0, 2.5, 10.0]))),
    "atan2": out(tf.math.atan2(tf.constant([1.0, -1.0, 0.0]), tf.constant([-1.0, -1.0, 2.0]))),
    "truncatediv": out(tf.truncatediv(tf.constant([7, -7, 7, -7]), tf.constant([2, 2, -2, -2]))),
    "truncatemod": out(tf.truncatemod(tf.constant([7, -7, 7, -7]), tf.constant([2, 2, -2, -2]))),
    "saturate_cast": out(tf.saturate_cast(tf.constant([-300.0, 12.7, 300.0]), tf.uint8)),
    "saturate_cast_int": out(tf.saturate_cast(tf.constant([-70000, 5, 70000]), tf.int16)),
    "clip_by_norm": out(tf.clip_by_norm(tf.constant([[3.0, 4.0], [0.3, 0.4]]), 1.0, axes=[1])),
    "clip_by_global_norm": out(tf.clip_by_global_norm([tf.constant([3.0]), tf.constant([[4.0, 12.0]])], 2.0)),
    "scatter_add": out(tf.tensor_scatter_nd_add(tf.constant([[1, 2], [3, 4], [5, 6]]), [[0], [2], [0]],
                                                tf.constant([[10, 10], [20, 20], [1, 1]]))),
    "scatter_sub": out(tf.tensor_scatter_nd_sub(tf.constant([1.0, 2.0, 3.0]), [[1], [1]], [0.5, 0.25])),
    "scatter_min": out(tf.tensor_scatter_nd_min(tf.constant([[1, 9], [9, 1]]), [[0, 1], [1, 0]], [5, 5])),
    "scatter_max": out(tf.tensor_scatter_nd_max(tf.constant([[1, 9], [9, 1]]), [[0, 1], [1, 0]], [5, 5])),
    "scatter_nd": out(tf.scatter_nd([[4], [3], [1], [7], [1]], tf.constant([9, 10, 11, 12, 1]), [8])),
    "dynamic_partition": out(tf.dynamic_partition(tf.constant([10, 20, 30, 40, 50]), [0, 0, 1, 1, 0], 2)),
    "dynamic_stitch": out(tf.dynamic_stitch([[6], [4, 1], [[5, 2], [0, 3]]],
                                            [[[61.0, 62.0]], [[41.0, 42.0], [11.0, 12.0]],
                                             [[[51.0, 52.0], [21.0, 22.0]], [[1.0, 2.0], [31.0, 32.0]]]])),
    "unique_with_counts": out(tf.unique_with_counts(tf.constant([4, 5, 4, 4, 7, 5]))),
    "searchsorted_right": out(tf.searchsorted([[1.0, 3.0, 3.0, 5.0]], [[3.0, 0.0, 6.0]], side="right")),
    "histogram_bins": out(tf.histogram_fixed_width_bins(tf.constant([-1.0, 0.0, 1.5, 2.0, 5.0, 15.0]),
                                                        [0.0, 5.0], nbins=5)),
    "sequence_mask": out(tf.sequence_mask([[1, 3], [2, 0]])),
    "repeat_axis": out(tf.repeat([[1, 2], [3, 4]], repeats=[1, 2], axis=0)),
    "repeat_flat": out(tf.repeat([[1, 2], [3, 4]], repeats=2)),
    "roll": out(tf.roll([[0, 1, 2], [3, 4, 5]], shift=[1, -1], axis=[0, 1])),
    "meshgrid_xy": out(tf.meshgrid([1, 2, 3], [4, 5])),
    "tensordot": out(tf.tensordot(tf.reshape(tf.range(6.0), [2, 3]), tf.reshape(tf.range(12.0), [3, 4]), axes=1)),
    "tensordot_pairs": out(tf.tensordot(tf.reshape(tf.range(6.0), [2, 3]), tf.reshape(tf.range(6.0), [3, 2]),
                                        axes=[[0, 1], [1, 0]])),
    "bitcast_f32_i32": out(tf.bitcast(tf.constant([1.0, -2.5]), tf.int32)),
    "bitcast_i32_u8": out(tf.bitcast(tf.constant([1, 258]), tf.uint8)),
    "slice": out(tf.slice(tf.reshape(tf.range(24), [2, 3, 4]), [1, 0, 1], [1, 2, -1])),
    "reverse_sequence": out(tf.reverse_sequence(tf.reshape(tf.range(12), [3, 4]), [2, 4, 0], seq_axis=1,
                                                batch_axis=0)),
    "unravel_index": out(tf.unravel_index([2, 5, 7], [3, 3])),
    "broadcast_dynamic": out(tf.broadcast_dynamic_shape([1, 3, 1], [4, 1, 5])),
    "broadcast_static": tf.broadcast_static_shape(tf.TensorShape([None, 1, 3]), tf.TensorShape([4, 3])).as_list(),
    "scan_init_reverse": out(tf.scan(lambda a, x: a * 2 + x, tf.constant([1, 2, 3]), initializer=tf.constant(1),
                                     reverse=True)),
    "scan_nested": out(tf.scan(lambda a, x: (a[0] + x, a[1] * x), tf.constant([1, 2, 3]),
                               initializer=(tf.constant(0), tf.constant(1)))),
    "foldl_init": out(tf.foldl(lambda a, x: a * 10 + x, tf.constant([1, 2, 3]), initializer=tf.constant(5))),
    "while": out(tf.while_loop(lambda i, s: i < 5, lambda i, s: (i + 1, s + tf.cast(i * i, tf.float32)), (tf.constant(0), tf.constant(0.5)),
                               maximum_iterations=4)),
    "switch_default": out(tf.switch_case(tf.constant(7), [lambda: tf.constant(1), lambda: tf.constant(2)],
                                         default=lambda: tf.constant(-1))),
    "print_summarize": printed(tf.reshape(tf.range(30), [5, 6]), summarize=2),
    "print_mixed": printed("loss:", tf.constant(0.1234567), [tf.constant(1), 2], tf.constant([True, False]),
                           tf.constant(["a", "b"]), sep="|", end="!\n"),
    "print_floats": printed(tf.constant([1.0, 2.5e-10, 3.14159265, 1e20])),
    "shape_dtypes": [str(tf.shape([[1]]).dtype), str(tf.shape([[1]], out_type=tf.int64).dtype),
                     str(tf.size([[1]]).dtype), str(tf.rank([[1]]).dtype)],
    "string_constant": out(tf.constant([["a", b"b"], ["c", "d"]])),
}
print(json.dumps(ref))

cube = tf.reshape(tf.range(24), [2, 3, 4])
slicing = {
    "ss_basic": out(tf.strided_slice(cube, [1, 0, 0], [2, 2, 4], [1, 1, 2])),
    "ss_neg": out(tf.strided_slice(cube, [0, -1, 3], [2, 0, 0], [1, -1, -2], end_mask=1)),
    "ss_masks": out(tf.strided_slice(cube, [0, 1], [0, 0], [1, 1], ellipsis_mask=1, shrink_axis_mask=2)),
    "ss_newaxis": out(tf.strided_slice(cube, [1, 0, 0], [2, 0, 2], [1, 1, 1], new_axis_mask=2, shrink_axis_mask=1,
                                       end_mask=0)),
    "s2b": out(tf.space_to_batch_nd(tf.reshape(tf.range(2 * 4 * 3 * 1), [2, 4, 3, 1]), [2, 2], [[0, 0], [1, 0]])),
    "b2s": out(tf.batch_to_space(tf.reshape(tf.range(8 * 2 * 2 * 1), [8, 2, 2, 1]), [2, 2], [[0, 1], [1, 0]])),
    "req_pad": out(tf.required_space_to_batch_paddings([5, 7], [2, 3], base_paddings=[[1, 0], [0, 2]])),
}
print(json.dumps(slicing))
