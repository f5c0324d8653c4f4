"""Shared inputs for the keras.backend / keras.ops reference tests (NumPy only, so TF can run it too).
`python tests/keras/backend_ops_cases.py` under TF 2.21 rewrites keras_backend_ops_reference.json."""
from __future__ import annotations

import json
import os

import numpy as np

A = np.array([[1.5, -2.0, 3.0], [0.25, 4.0, -1.0]], dtype=np.float32)
B = np.array([[0.5, 1.0, -3.0], [2.0, -0.5, 1.0]], dtype=np.float32)
P = np.array([[0.1, 0.7, 0.2], [0.3, 0.3, 0.4]], dtype=np.float32)
Y1 = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], dtype=np.float32)
I = np.array([[1, -2, 3], [4, 5, -6]], dtype=np.int32)
BOOL = np.array([[True, False, True], [False, False, True]])
LABELS = np.array([1, 2], dtype=np.int64)
X3 = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 10.0
Y3 = np.arange(24, dtype=np.float32).reshape(2, 4, 3) / 7.0

# (case id, function name, args, kwargs): args name the arrays above, or are literals.
BACKEND_CASES = [
    ("mean_all", "mean", ["A"], {}), ("mean_ax", "mean", ["A"], {"axis": -1}),
    ("mean_keep", "mean", ["A"], {"axis": 0, "keepdims": True}), ("mean_bool", "mean", ["BOOL"], {"axis": 1}),
    ("mean_int", "mean", ["I"], {"axis": 1}), ("sum_int", "sum", ["I"], {"axis": 0}), ("sum", "sum", ["A"], {}),
    ("prod", "prod", ["A"], {"axis": 1}), ("max", "max", ["A"], {"axis": 0}), ("min", "min", ["I"], {}),
    ("std", "std", ["A"], {"axis": 1}), ("var", "var", ["A"], {}), ("var_bool", "var", ["BOOL"], {}),
    ("any", "any", ["I"], {"axis": 1}), ("all", "all", ["BOOL"], {"axis": 0}),
    ("argmax", "argmax", ["A"], {}), ("argmin", "argmin", ["A"], {"axis": 0}),
    ("cumsum", "cumsum", ["A"], {}), ("cumprod", "cumprod", ["A"], {"axis": 1}),
    ("square", "square", ["A"], {}), ("abs", "abs", ["I"], {}), ("sqrt_neg", "sqrt", ["A"], {}),
    ("exp", "exp", ["B"], {}), ("log", "log", ["P"], {}), ("pow", "pow", ["A", 2.0], {}),
    ("round", "round", [np.array([0.5, 1.5, 2.5, -0.5], np.float32)], {}), ("sign", "sign", ["A"], {}),
    ("clip", "clip", ["A", -1.0, 2.0], {}), ("clip_swapped", "clip", ["A", 2.0, 1.0], {}),
    ("maximum", "maximum", ["A", "B"], {}), ("minimum", "minimum", ["A", "B"], {}),
    ("equal", "equal", ["A", "B"], {}), ("greater", "greater", ["A", "B"], {}),
    ("less_equal", "less_equal", ["A", 1.0], {}),
    ("relu", "relu", ["A"], {}), ("relu_alpha", "relu", ["A"], {"alpha": 0.1, "max_value": 2.0}),
    ("relu_thr", "relu", ["A"], {"threshold": 1.0}), ("relu_thr_alpha", "relu", ["A"], {"alpha": 0.2, "threshold": 1.0}),
    ("sigmoid", "sigmoid", ["A"], {}), ("softmax", "softmax", ["A"], {}), ("softmax_ax0", "softmax", ["A"], {"axis": 0}),
    ("softplus", "softplus", ["A"], {}), ("softsign", "softsign", ["A"], {}), ("hard_sigmoid", "hard_sigmoid", ["A"], {}),
    ("elu", "elu", ["A"], {}), ("tanh", "tanh", ["A"], {}),
    ("l2_normalize", "l2_normalize", ["A"], {"axis": -1}), ("l2_normalize_all", "l2_normalize", ["A"], {}),
    ("bce", "binary_crossentropy", ["Y1", "P"], {}), ("bce_logits", "binary_crossentropy", ["Y1", "A"], {"from_logits": True}),
    ("cce", "categorical_crossentropy", ["Y1", "P"], {}),
    ("cce_logits", "categorical_crossentropy", ["Y1", "A"], {"from_logits": True}),
    ("scce", "sparse_categorical_crossentropy", ["LABELS", "P"], {}),
    ("scce_logits", "sparse_categorical_crossentropy", ["LABELS", "A"], {"from_logits": True}),
    ("one_hot", "one_hot", ["LABELS", 4], {}), ("flatten", "flatten", ["A"], {}),
    ("batch_flatten", "batch_flatten", ["X3"], {}), ("expand_dims", "expand_dims", ["A"], {}),
    ("squeeze", "squeeze", [np.ones((2, 1, 3), np.float32)], {"axis": 1}),
    ("permute", "permute_dimensions", ["X3", (2, 0, 1)], {}), ("transpose", "transpose", ["A"], {}),
    ("concatenate", "concatenate", [["A", "B"]], {}), ("stack", "stack", [["A", "B"]], {"axis": 1}),
    ("reshape", "reshape", ["A", (3, 2)], {}), ("tile", "tile", ["A", (2, 1)], {}),
    ("repeat_elements", "repeat_elements", ["A", 2], {"axis": 1}), ("repeat", "repeat", ["A", 2], {}),
    ("gather", "gather", ["A", np.array([1, 0, 1], np.int32)], {}), ("reverse", "reverse", ["A", 1], {}),
    ("dot", "dot", ["A", np.ones((3, 2), np.float32)], {}), ("dot3", "dot", ["X3", "Y3"], {}),
    ("batch_dot", "batch_dot", ["X3", "Y3"], {}), ("batch_dot_2d", "batch_dot", ["A", "B"], {"axes": 1}),
    ("batch_dot_axes", "batch_dot", ["X3", np.ones((2, 3, 5), np.float32)], {"axes": (1, 1)}),
    ("in_top_k", "in_top_k", ["P", np.array([1, 0], np.int32), 2], {}),
    ("in_top_k_1", "in_top_k", ["P", np.array([1, 1], np.int32), 1], {}),
    ("switch", "switch", ["BOOL", "A", "B"], {}), ("switch_col", "switch", [np.array([[True], [False]]), "A", "B"], {}),
    ("arange", "arange", [5], {}), ("arange_f", "arange", [1, 7, 2], {"dtype": "float32"}),
    ("cast", "cast", ["A", "int32"], {}), ("ones_like", "ones_like", ["I"], {}),
    ("zeros_like", "zeros_like", ["A"], {}), ("constant", "constant", [[1, 2]], {}),
]

OPS_CASES = [
    ("mean", "mean", ["A"], {"axis": -1}), ("mean_int", "mean", ["I"], {}), ("mean_keep", "mean", ["A"], {"axis": (0, 1), "keepdims": True}),
    ("sum_int", "sum", ["I"], {"axis": 1}), ("sum_bool", "sum", ["BOOL"], {}), ("sum", "sum", ["A"], {"axis": 0}),
    ("prod", "prod", ["I"], {"axis": 0}), ("max", "max", ["A"], {"axis": 1}), ("min", "min", ["A"], {}),
    ("amax", "amax", ["A"], {"axis": 0, "keepdims": True}), ("var", "var", ["A"], {"axis": 0}), ("std", "std", ["A"], {}),
    ("any", "any", ["BOOL"], {"axis": 1}), ("all", "all", ["I"], {}),
    ("argmax", "argmax", ["A"], {}), ("argmax_ax", "argmax", ["A"], {"axis": -1}), ("argmin", "argmin", ["A"], {"axis": 0}),
    ("argsort", "argsort", ["A"], {}), ("sort", "sort", ["A"], {"axis": 0}),
    ("cumsum", "cumsum", ["I"], {}), ("cumsum_ax", "cumsum", ["A"], {"axis": 1}), ("cumprod", "cumprod", ["A"], {"axis": 0}),
    ("logsumexp", "logsumexp", ["A"], {"axis": -1}), ("logsumexp_all", "logsumexp", ["A"], {}),
    ("norm", "norm", ["A"], {}), ("norm_ax", "norm", ["A"], {"axis": -1}), ("norm_l1", "norm", ["A"], {"ord": 1, "axis": 1}),
    ("norm_fro", "norm", ["A"], {"axis": (0, 1)}), ("count_nonzero", "count_nonzero", ["I"], {"axis": 0}),
    ("median", "median", ["A"], {}), ("median_ax", "median", ["A"], {"axis": 1}),
    ("square", "square", ["I"], {}), ("sqrt_int", "sqrt", [np.array([1, 4, 9], np.int32)], {}),
    ("abs", "abs", ["A"], {}), ("exp", "exp", ["B"], {}), ("log", "log", ["P"], {}), ("log1p", "log1p", ["P"], {}),
    ("sign", "sign", ["A"], {}), ("round", "round", [np.array([0.5, 1.5, 2.5, -0.5], np.float32)], {}),
    ("floor", "floor", ["A"], {}), ("ceil", "ceil", ["A"], {}), ("clip", "clip", ["A", -1.0, 2.0], {}),
    ("clip_int", "clip", ["I", 0, 4], {}), ("maximum", "maximum", ["A", 0.0], {}), ("minimum", "minimum", ["A", "B"], {}),
    ("add_int_float", "add", ["I", 0.5], {}), ("add", "add", ["A", "B"], {}), ("subtract", "subtract", ["A", "B"], {}),
    ("multiply", "multiply", ["I", 2], {}), ("divide_int", "divide", ["I", 2], {}), ("divide", "divide", ["A", "B"], {}),
    ("divide_no_nan", "divide_no_nan", ["A", np.array([[1.0, 0.0, 2.0], [0.0, 1.0, 1.0]], np.float32)], {}),
    ("floor_divide", "floor_divide", ["I", 4], {}), ("mod", "mod", ["I", 4], {}), ("power", "power", ["A", 2], {}),
    ("negative", "negative", ["I"], {}), ("equal", "equal", ["A", "B"], {}), ("not_equal", "not_equal", ["I", 3], {}),
    ("greater", "greater", ["A", "B"], {}), ("greater_equal", "greater_equal", ["A", 1.0], {}),
    ("less", "less", ["A", "B"], {}), ("less_equal", "less_equal", ["I", 3], {}),
    ("logical_and", "logical_and", ["BOOL", np.array([True, True, False])], {}), ("logical_not", "logical_not", ["BOOL"], {}),
    ("where", "where", [np.array([[True, False, True], [False, True, False]]), "A", "B"], {}),
    ("where_scalar", "where", ["BOOL", "A", 0.0], {}),
    ("isnan", "isnan", [np.array([1.0, np.nan, np.inf], np.float32)], {}),
    ("isfinite", "isfinite", [np.array([1.0, np.nan, np.inf], np.float32)], {}),
    ("relu", "relu", ["A"], {}), ("relu6", "relu6", [np.array([-1.0, 3.0, 8.0], np.float32)], {}),
    ("sigmoid", "sigmoid", ["A"], {}), ("tanh", "tanh", ["A"], {}), ("softplus", "softplus", ["A"], {}),
    ("softsign", "softsign", ["A"], {}), ("silu", "silu", ["A"], {}), ("gelu", "gelu", ["A"], {}),
    ("gelu_exact", "gelu", ["A"], {"approximate": False}), ("elu", "elu", ["A"], {}), ("selu", "selu", ["A"], {}),
    ("leaky_relu", "leaky_relu", ["A"], {}), ("hard_sigmoid", "hard_sigmoid", ["A"], {}),
    ("hard_silu", "hard_silu", ["A"], {}), ("log_sigmoid", "log_sigmoid", ["A"], {}),
    ("softmax", "softmax", ["A"], {}), ("softmax_ax0", "softmax", ["A"], {"axis": 0}),
    ("log_softmax", "log_softmax", ["A"], {}), ("normalize", "normalize", ["A"], {}),
    ("moments", "moments", ["A", [0]], {}),
    ("bce", "binary_crossentropy", ["Y1", "P"], {}), ("bce_logits", "binary_crossentropy", ["Y1", "A"], {"from_logits": True}),
    ("cce", "categorical_crossentropy", ["Y1", "P"], {}),
    ("cce_logits", "categorical_crossentropy", ["Y1", "A"], {"from_logits": True}),
    ("scce", "sparse_categorical_crossentropy", ["LABELS", "P"], {}),
    ("scce_logits", "sparse_categorical_crossentropy", ["LABELS", "A"], {"from_logits": True}),
    ("one_hot", "one_hot", [np.array([0, 2, -1, 5], np.int32), 4], {}),
    ("multi_hot", "multi_hot", [np.array([[0, 2], [1, 1]], np.int32), 4], {}),
    ("matmul", "matmul", ["A", np.ones((3, 2), np.float32)], {}), ("matmul_b", "matmul", ["X3", "Y3"], {}),
    ("matmul_int", "matmul", ["I", np.ones((3, 2), np.int32)], {}),
    ("dot", "dot", ["X3", "Y3"], {}), ("dot_vec", "dot", ["A", np.ones(3, np.float32)], {}),
    ("tensordot", "tensordot", ["X3", "Y3"], {"axes": ([1, 2], [2, 1])}),
    ("einsum", "einsum", ["bij,bjk->bik", "X3", "Y3"], {}), ("outer", "outer", [np.arange(3, dtype=np.float32), np.ones(2, np.float32)], {}),
    ("reshape", "reshape", ["A", (3, 2)], {}), ("reshape_m1", "reshape", ["X3", (-1, 4)], {}),
    ("transpose", "transpose", ["X3"], {}), ("transpose_axes", "transpose", ["X3", (0, 2, 1)], {}),
    ("swapaxes", "swapaxes", ["X3", 0, 2], {}), ("moveaxis", "moveaxis", ["X3", 0, -1], {}),
    ("expand_dims", "expand_dims", ["A", 1], {}), ("squeeze", "squeeze", [np.ones((2, 1, 3), np.float32)], {}),
    ("concatenate", "concatenate", [["A", "B"]], {}), ("concatenate_ax", "concatenate", [["A", "B"]], {"axis": 1}),
    ("stack", "stack", [["A", "B"]], {}), ("hstack", "hstack", [["A", "B"]], {}), ("vstack", "vstack", [["A", "B"]], {}),
    ("split", "split", ["X3", 2], {"axis": 2}), ("split_idx", "split", ["A", [1]], {"axis": 1}),
    ("unstack", "unstack", ["A"], {}), ("tile", "tile", ["A", (1, 2)], {}), ("repeat", "repeat", ["A", 2], {}),
    ("repeat_ax", "repeat", ["A", 2], {"axis": 0}), ("flip", "flip", ["A"], {"axis": 1}),
    ("roll", "roll", ["A", 1], {"axis": 1}), ("roll_flat", "roll", ["A", 2], {}),
    ("broadcast_to", "broadcast_to", [np.array([1.0, 2.0, 3.0], np.float32), (2, 3)], {}),
    ("pad", "pad", ["A", ((1, 0), (0, 2))], {}), ("pad_reflect", "pad", ["A", ((0, 0), (1, 1))], {"mode": "reflect"}),
    ("take", "take", ["A", np.array([2, 0], np.int32)], {"axis": 1}), ("take_flat", "take", ["A", np.array([4, -1], np.int32)], {}),
    ("take_along_axis", "take_along_axis", ["A", np.array([[0], [2]], np.int64)], {"axis": 1}),
    ("tril", "tril", [np.ones((3, 3), np.float32)], {}), ("triu", "triu", [np.ones((3, 3), np.float32)], {"k": 1}),
    ("diag", "diag", [np.arange(3, dtype=np.float32)], {}), ("diagonal", "diagonal", ["A"], {}),
    ("trace", "trace", [np.arange(9, dtype=np.int32).reshape(3, 3)], {}),
    ("top_k", "top_k", ["A", 2], {}), ("in_top_k", "in_top_k", [np.array([1, 0], np.int32), "P", 2], {}),
    ("zeros", "zeros", [(2, 3)], {}), ("ones", "ones", [(2,)], {}), ("full", "full", [(2, 2), 7], {}),
    ("zeros_like", "zeros_like", ["I"], {}), ("ones_like", "ones_like", ["A"], {}), ("full_like", "full_like", ["I", 3], {}),
    ("arange", "arange", [5], {}), ("arange_f", "arange", [0.0, 1.0, 0.25], {}), ("arange_3", "arange", [2, 9, 3], {}),
    ("linspace", "linspace", [0, 1, 5], {}), ("eye", "eye", [3], {}), ("eye_k", "eye", [3, 4], {"k": 1}),
    ("identity", "identity", [2], {}), ("tri", "tri", [3], {}),
    ("convert_int", "convert_to_tensor", [[1, 2, 3]], {}), ("convert_float", "convert_to_tensor", [[1.0, 2.5]], {}),
    ("convert_f64", "convert_to_tensor", [np.array([1.0, 2.0])], {}), ("cast", "cast", ["A", "int32"], {}),
    ("stop_gradient", "stop_gradient", ["A"], {}), ("nan_to_num", "nan_to_num", [np.array([np.nan, np.inf, 1.0], np.float32)], {}),
    ("isclose", "isclose", ["A", "A"], {}), ("average", "average", ["A"], {"axis": 1, "weights": np.array([1.0, 2.0, 1.0], np.float32)}),
    ("quantile", "quantile", ["A", 0.25], {}), ("ravel", "ravel", ["A"], {}),
    ("append", "append", ["A", "B"], {}), ("logical_xor", "logical_xor", ["BOOL", np.array([True, False, False])], {}),
]

NAMES = {"A": A, "B": B, "P": P, "Y1": Y1, "I": I, "BOOL": BOOL, "LABELS": LABELS, "X3": X3, "Y3": Y3}


def resolve(value, convert):
    """Replaces array names by `convert(array)`, recursing into lists."""
    if isinstance(value, str) and value in NAMES:
        return convert(NAMES[value])
    if isinstance(value, list):
        return [resolve(v, convert) for v in value]
    if isinstance(value, np.ndarray):
        return convert(value)
    return value


def encode(result):
    """A result (tensor, tuple of tensors, number) as JSON: {'dtype', 'value'} or a list of them."""
    if isinstance(result, (tuple, list)):
        return [encode(r) for r in result]
    array = np.asarray(result)
    value = array.astype(np.float64) if array.dtype.kind in "fiub" else array
    value = np.where(np.isnan(value), 1e300, value) if value.dtype.kind == "f" else value
    return {"dtype": str(array.dtype), "shape": list(array.shape), "value": value.tolist()}


REFERENCE = os.path.join(os.path.dirname(__file__), "keras_backend_ops_reference.json")

if __name__ == "__main__":  # run with TF 2.21's Python to refresh the frozen reference
    import keras
    import tensorflow as tf

    out = {"backend": {}, "ops": {}}
    for section, module, cases in (("backend", tf.keras.backend, BACKEND_CASES), ("ops", keras.ops, OPS_CASES)):
        convert = tf.constant if section == "backend" else (lambda a: a)
        for case_id, name, args, kwargs in cases:
            try:
                result = getattr(module, name)(*resolve(list(args), convert), **kwargs)
                out[section][case_id] = encode(result.numpy() if hasattr(result, "numpy") else result
                                                if not isinstance(result, (tuple, list)) else
                                                [np.asarray(r) for r in result])
            except Exception as error:
                out[section][case_id] = {"error": f"{type(error).__name__}: {error}"[:200]}
    with open(REFERENCE, "w") as f:
        json.dump(out, f, indent=0, sort_keys=True)
    print("wrote", REFERENCE, sum(len(v) for v in out.values()), "cases")
