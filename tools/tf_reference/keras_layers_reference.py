"""Freezes Keras 3 outputs of the layers in torchstrategy/keras/layers/ added for issue 22 into
tests/keras/layers/keras_layers_reference.json: each case holds the constructor kwargs, a deterministic input,
the layer's weights (set by hand), Keras's output and its get_config. Run under /work/tf-venv (TF 2.21, Keras 3.15):

    /work/tf-venv/bin/python tools/tf_reference/keras_layers_reference.py
"""
from __future__ import annotations

import json
import os
import sys

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import keras  # noqa: E402

OUT = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "keras", "layers", "keras_layers_reference.json")


def pattern(shape, offset=0.0, scale=1.0):
    """Deterministic values in about [-1, 1]: sin of the flat index."""
    n = int(np.prod(shape)) if shape else 1
    return (scale * np.sin(np.arange(n, dtype=np.float64) * 0.731 + 0.37 + offset)).reshape(shape).astype(np.float32)


# (case id, class name, kwargs, input shape(s) or ("int", shape, high), call kwargs)
CASES = [
    ("group_norm", "GroupNormalization", {"groups": 2}, [(2, 3, 4)], {}),
    ("group_norm_axis1", "GroupNormalization", {"groups": 3, "axis": 1, "epsilon": 0.01}, [(2, 6, 2, 2)], {}),
    ("group_norm_instance", "GroupNormalization", {"groups": -1, "center": False}, [(2, 5, 3)], {}),
    ("unit_norm", "UnitNormalization", {}, [(3, 4)], {}),
    ("unit_norm_axes", "UnitNormalization", {"axis": [1, 2]}, [(2, 3, 4)], {}),
    ("rms_norm", "RMSNormalization", {"epsilon": 1e-3}, [(2, 3, 5)], {}),
    ("prelu", "PReLU", {}, [(2, 3, 4)], {}),
    ("prelu_shared", "PReLU", {"shared_axes": [1]}, [(2, 3, 4)], {}),
    ("attention_dot", "Attention", {}, [(2, 3, 4), (2, 5, 4)], {}),
    ("attention_scale_key", "Attention", {"use_scale": True}, [(2, 3, 4), (2, 5, 4), (2, 5, 4)], {}),
    ("attention_concat", "Attention", {"score_mode": "concat", "use_scale": True}, [(2, 3, 4), (2, 5, 4)], {}),
    ("attention_causal", "Attention", {}, [(2, 4, 3), (2, 4, 3)], {"use_causal_mask": True}),
    ("additive_attention", "AdditiveAttention", {}, [(2, 3, 4), (2, 5, 4)], {}),
    ("additive_attention_noscale", "AdditiveAttention", {"use_scale": False}, [(2, 3, 4), (2, 5, 4)], {}),
    ("repeat_vector", "RepeatVector", {"n": 3}, [(2, 4)], {}),
    ("zero_padding1d", "ZeroPadding1D", {"padding": (1, 2)}, [(2, 3, 2)], {}),
    ("zero_padding3d", "ZeroPadding3D", {"padding": ((1, 0), (0, 2), (1, 1))}, [(1, 2, 2, 2, 1)], {}),
    ("cropping3d", "Cropping3D", {"cropping": ((1, 0), (0, 1), (1, 1))}, [(1, 3, 3, 4, 2)], {}),
    ("upsampling3d", "UpSampling3D", {"size": (2, 1, 3)}, [(1, 2, 2, 2, 1)], {}),
    ("identity", "Identity", {}, [(2, 3)], {}),
    ("einsum_dense_2d", "EinsumDense", {"equation": "ab,bc->ac", "output_shape": 4, "bias_axes": "c"}, [(2, 3)], {}),
    ("einsum_dense_3d", "EinsumDense", {"equation": "abc,cde->abde", "output_shape": [None, 2, 3],
                                        "bias_axes": "de", "activation": "relu"}, [(2, 3, 4)], {}),
    ("einsum_dense_left_ellipsis", "EinsumDense", {"equation": "...b,bc->...c", "output_shape": 3},
     [(2, 3, 4)], {}),
    ("einsum_dense_right_ellipsis", "EinsumDense", {"equation": "ab...,bc->ac...", "output_shape": 5,
                                                    "bias_axes": "c"}, [(2, 3, 4)], {}),
    ("rnn_lstm_cell", "RNN", {"cell": ["LSTMCell", {"units": 3}], "return_sequences": True}, [(2, 4, 5)], {}),
    ("rnn_gru_cell_backwards", "RNN", {"cell": ["GRUCell", {"units": 3}], "go_backwards": True,
                                       "return_state": True}, [(2, 4, 5)], {}),
    ("rnn_stacked", "RNN", {"cell": [["SimpleRNNCell", {"units": 3}], ["LSTMCell", {"units": 2}]],
                            "return_state": True}, [(2, 4, 5)], {}),
    ("stacked_cells_rnn_seq", "RNN", {"cell": ["StackedRNNCells", [["GRUCell", {"units": 2, "reset_after": False}],
                                                                   ["SimpleRNNCell", {"units": 3}]]],
                                      "return_sequences": True}, [(2, 3, 4)], {}),
    ("conv_lstm1d", "ConvLSTM1D", {"filters": 2, "kernel_size": 3}, [(2, 3, 6, 2)], {}),
    ("conv_lstm1d_same_seq", "ConvLSTM1D", {"filters": 2, "kernel_size": 2, "padding": "same", "strides": 2,
                                            "return_sequences": True}, [(1, 3, 5, 2)], {}),
    ("conv_lstm2d_states", "ConvLSTM2D", {"filters": 2, "kernel_size": (2, 3), "padding": "same",
                                          "return_state": True, "dilation_rate": (1, 2)}, [(1, 3, 4, 5, 2)], {}),
    ("conv_lstm2d_channels_first", "ConvLSTM2D", {"filters": 3, "kernel_size": 2, "data_format": "channels_first",
                                                  "go_backwards": True}, [(1, 2, 2, 4, 4)], {}),
    ("conv_lstm3d", "ConvLSTM3D", {"filters": 2, "kernel_size": 2, "use_bias": False}, [(1, 2, 3, 3, 3, 1)], {}),
    ("hashing_str", "Hashing", {"num_bins": 7}, [("str", [["a", "bb", "x"], ["ccc", "dddd", "héllo"]])], {}),
    ("hashing_salt_mask", "Hashing", {"num_bins": 5, "salt": [133, 137], "mask_value": ""},
     [("str", ["a", "", "some longer token", "z"])], {}),
    ("hashing_int_salt", "Hashing", {"num_bins": 9, "salt": 7}, [("int", (2, 3), 1000)], {}),
    ("hashing_int_multi_hot", "Hashing", {"num_bins": 6, "output_mode": "multi_hot"}, [("int", (3, 2), 1000)], {}),
    ("hashing_count", "Hashing", {"num_bins": 4, "output_mode": "count", "mask_value": 0},
     [("int", (2, 5), 3)], {}),
    ("hashing_one_hot", "Hashing", {"num_bins": 4, "output_mode": "one_hot"}, [("str", [["a"], ["b"], ["c"]])], {}),
    ("hashed_crossing", "HashedCrossing", {"num_bins": 11}, [("str", ["a", "b", "c"]), ("int", (3,), 50)], {}),
    ("hashed_crossing_one_hot", "HashedCrossing", {"num_bins": 4, "output_mode": "one_hot"},
     [("int", (3, 1), 50), ("str", [["p"], ["q"], ["r"]]), ("int", (3, 1), 9)], {}),
    ("category_one_hot", "CategoryEncoding", {"num_tokens": 5, "output_mode": "one_hot"}, [("int", (4,), 5)], {}),
    ("category_multi_hot", "CategoryEncoding", {"num_tokens": 5}, [("int", (3, 2), 5)], {}),
    ("category_count", "CategoryEncoding", {"num_tokens": 4, "output_mode": "count"}, [("int", (6,), 4)], {}),
    ("discretization_int", "Discretization", {"bin_boundaries": [-0.5, 0.0, 0.5]}, [(2, 4)], {}),
    ("discretization_one_hot", "Discretization", {"bin_boundaries": [0.0, 0.25], "output_mode": "one_hot"},
     [(4, 1)], {}),
    ("discretization_multi_hot", "Discretization", {"bin_boundaries": [-0.2, 0.3], "output_mode": "multi_hot"},
     [(2, 3)], {}),
    ("discretization_count", "Discretization", {"bin_boundaries": [0.1], "output_mode": "count"}, [(5,)], {}),
    ("depthwise_conv1d", "DepthwiseConv1D", {"kernel_size": 3, "depth_multiplier": 2}, [(2, 6, 3)], {}),
    ("depthwise_conv1d_same", "DepthwiseConv1D", {"kernel_size": 2, "strides": 2, "padding": "same",
                                                  "activation": "relu"}, [(1, 5, 2)], {}),
    ("depthwise_conv1d_cf", "DepthwiseConv1D", {"kernel_size": 2, "data_format": "channels_first",
                                                "dilation_rate": 2}, [(1, 3, 6)], {}),
    ("separable_conv1d", "SeparableConv1D", {"filters": 4, "kernel_size": 3, "depth_multiplier": 2},
     [(2, 6, 3)], {}),
    ("separable_conv1d_same", "SeparableConv1D", {"filters": 2, "kernel_size": 3, "padding": "same",
                                                  "use_bias": False}, [(1, 5, 3)], {}),
    ("adaptive_avg1d", "AdaptiveAveragePooling1D", {"output_size": 3}, [(2, 7, 2)], {}),
    ("adaptive_max1d", "AdaptiveMaxPooling1D", {"output_size": 4}, [(2, 7, 2)], {}),
    ("adaptive_avg2d", "AdaptiveAveragePooling2D", {"output_size": (2, 3)}, [(1, 5, 7, 2)], {}),
    ("adaptive_max2d_cf", "AdaptiveMaxPooling2D", {"output_size": 3, "data_format": "channels_first"},
     [(1, 2, 5, 4)], {}),
    ("adaptive_avg3d", "AdaptiveAveragePooling3D", {"output_size": (2, 2, 3)}, [(1, 3, 5, 4, 1)], {}),
    ("adaptive_max3d", "AdaptiveMaxPooling3D", {"output_size": 2}, [(1, 3, 3, 5, 2)], {}),
    ("spectral_norm_dense", "SpectralNormalization", {"layer": ["Dense", {"units": 3}], "power_iterations": 2},
     [(2, 4)], {"training": True}),
    ("spectral_norm_conv", "SpectralNormalization", {"layer": ["Conv1D", {"filters": 2, "kernel_size": 2}]},
     [(1, 4, 3)], {"training": True}),
    ("auto_contrast", "AutoContrast", {"value_range": (-1, 1)}, [(2, 3, 4, 3)], {}),
    ("solarization_all", "Solarization", {"value_range": (-1, 1)}, [(2, 3, 3, 3)], {"training": True}),
    ("random_invert_always", "RandomInvert", {"factor": (1.0, 1.0), "value_range": (-1, 1)}, [(2, 3, 3, 3)],
     {"training": True}),
    ("random_grayscale_always", "RandomGrayscale", {"factor": 1.0}, [(2, 3, 3, 3)], {"training": True}),
    ("random_posterization_4", "RandomPosterization", {"factor": (4, 4), "value_range": (-1, 1)},
     [(1, 3, 3, 3)], {"training": True}),
    ("random_color_degeneration", "RandomColorDegeneration", {"factor": (0.3, 0.3), "value_range": (-1, 1)},
     [(2, 3, 3, 3)], {"training": True}),
    ("random_sharpness", "RandomSharpness", {"factor": (0.2, 0.2), "value_range": (-1, 1)}, [(1, 4, 5, 3)],
     {"training": True}),
    ("random_sharpness_cf", "RandomSharpness", {"factor": (0.9, 0.9), "value_range": (-1, 1),
                                                "data_format": "channels_first"}, [(1, 3, 4, 4)], {"training": True}),
    ("reversible_embedding", "ReversibleEmbedding", {"input_dim": 6, "output_dim": 3}, [("int", (2, 3), 6)], {}),
    ("reversible_embedding_reverse", "ReversibleEmbedding", {"input_dim": 6, "output_dim": 3, "tie_weights": False,
                                                             "logit_soft_cap": 0.5}, [(2, 3)], {"reverse": True}),
    ("reversible_embedding_reverse_tied", "ReversibleEmbedding", {"input_dim": 5, "output_dim": 4},
     [(2, 4)], {"reverse": True}),
    ("gqa_self", "GroupQueryAttention", {"head_dim": 3, "num_query_heads": 4, "num_key_value_heads": 2},
     [(2, 3, 5), (2, 3, 5)], {}),
    ("gqa_cross_key_scores", "GroupQueryAttention", {"head_dim": 2, "num_query_heads": 2, "num_key_value_heads": 1,
                                                     "use_bias": False}, [(1, 3, 4), (1, 5, 4), (1, 5, 4)],
     {"return_attention_scores": True}),
    ("gqa_causal_gate_window", "GroupQueryAttention", {"head_dim": 2, "num_query_heads": 2, "num_key_value_heads": 2,
                                                       "use_gate": True, "sliding_window": 2}, [(1, 4, 3), (1, 4, 3)],
     {"use_causal_mask": True}),
    ("gqa_masks", "GroupQueryAttention", {"head_dim": 2, "num_query_heads": 2, "num_key_value_heads": 1},
     [(2, 3, 4), (2, 4, 4)], {"query_mask": [[1, 1, 0], [1, 1, 1]], "value_mask": [[1, 0, 1, 1], [1, 1, 1, 0]],
                              "return_attention_scores": True}),
    ("random_saturation_fixed", "RandomSaturation", {"factor": (0.7, 0.7), "value_range": (0, 1)},
     [("rgb", (2, 3, 4, 3))], {"training": True}),
    ("random_saturation_gray", "RandomSaturation", {"factor": (0.0, 0.0), "value_range": (0, 1),
                                                    "data_format": "channels_first"},
     [("rgb_cf", (1, 3, 3, 2))], {"training": True}),
    ("equalization", "Equalization", {}, [("u8", (2, 4, 5, 3))], {"training": True}),
    ("equalization_bins_range", "Equalization", {"bins": 16, "value_range": (-1, 1)}, [(1, 6, 6, 2)],
     {"training": True}),
    ("equalization_cf", "Equalization", {"data_format": "channels_first"}, [("u8", (1, 2, 4, 4))],
     {"training": True}),
    ("gaussian_blur", "RandomGaussianBlur", {"factor": (1.0, 1.0), "sigma": (0.6, 0.6), "value_range": (-1, 1)},
     [(2, 5, 5, 2)], {"training": True}),
    ("gaussian_blur_5", "RandomGaussianBlur", {"factor": (1.0, 1.0), "kernel_size": 5, "sigma": (0.9, 0.9),
                                               "value_range": (-1, 1), "data_format": "channels_first"},
     [(1, 2, 6, 6)], {"training": True}),
    ("conv1d_transpose_alias", "Convolution1DTranspose", {"filters": 2, "kernel_size": 3, "strides": 2},
     [(1, 4, 3)], {}),
]


def build_kwargs(kwargs, module):
    """Turns a case's JSON kwargs into constructor kwargs: a "cell" entry [class, kwargs] (or a list of them,
    or ["StackedRNNCells", [...]]) becomes cell objects of `module` (keras.layers, or ours in the tests)."""
    def cell(spec):
        if spec[0] == "StackedRNNCells":
            return module.StackedRNNCells([cell(c) for c in spec[1]])
        if isinstance(spec[0], list):
            return [cell(c) for c in spec]
        return getattr(module, spec[0])(**spec[1])

    out = dict(kwargs)
    if "cell" in out:
        out["cell"] = cell(out["cell"])
    if "layer" in out:
        out["layer"] = getattr(module, out["layer"][0])(**out["layer"][1])
    return out


POSITIONAL = ("GroupQueryAttention",)  # called as layer(query, value, key) rather than on a list


def make_inputs(specs):
    out = []
    for i, spec in enumerate(specs):
        if spec and spec[0] == "int":
            _, shape, high = spec
            out.append((np.arange(int(np.prod(shape))) * 7 % high).reshape(shape).astype(np.int64))
        elif spec and spec[0] == "u8":  # pixel values 0..255 as floats, unevenly spread
            out.append(np.round(127.5 + 127.5 * pattern(spec[1], offset=float(i)) ** 3).astype(np.float32))
        elif spec and spec[0] in ("rgb", "rgb_cf"):  # colours in [0, 1]
            out.append((pattern(spec[1], offset=float(i)) + 1.0) / 2.0)
        elif spec and spec[0] == "str":
            out.append(np.array(spec[1]))
        else:
            out.append(pattern(spec, offset=float(i)))
    return out


def to_list(value):
    if isinstance(value, (list, tuple)):
        return [to_list(v) for v in value]
    return np.asarray(keras.ops.convert_to_numpy(value)).tolist()


def jsonable(config):
    return json.loads(json.dumps(config, default=lambda o: repr(o)))


def run_case(case_id, class_name, kwargs, input_specs, call_kwargs):
    layer = getattr(keras.layers, class_name)(**build_kwargs(kwargs, keras.layers))
    inputs = make_inputs(input_specs)
    arg = inputs if len(inputs) > 1 else inputs[0]
    kwargs_call = {k: (np.array(v, bool) if k.endswith("_mask") else v) for k, v in call_kwargs.items()}
    call = (lambda: layer(*inputs, **kwargs_call)) if class_name in POSITIONAL else (lambda: layer(arg, **kwargs_call))
    call()  # builds
    weights = [pattern(w.shape, offset=10.0 + k, scale=0.5) for k, w in enumerate(layer.get_weights())]
    layer.set_weights(weights)
    output = call()
    return {
        "class": class_name, "kwargs": kwargs, "call_kwargs": call_kwargs,
        "inputs": [x.tolist() for x in inputs], "input_dtypes": [str(x.dtype) for x in inputs],
        "weights": [w.tolist() for w in weights], "output": to_list(output),
        "config": jsonable(layer.get_config()),
    }


def main() -> None:
    only = set(sys.argv[1:])
    data = {"keras_version": keras.__version__, "cases": {}}
    if os.path.exists(OUT) and only:
        with open(OUT) as f:
            data["cases"] = json.load(f)["cases"]
    for case in CASES:
        if only and case[0] not in only:
            continue
        data["cases"][case[0]] = run_case(*case)
    tmp = OUT + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, separators=(",", ":"))
    os.replace(tmp, OUT)
    print(f"wrote {len(data['cases'])} cases to {OUT}")


if __name__ == "__main__":
    main()
