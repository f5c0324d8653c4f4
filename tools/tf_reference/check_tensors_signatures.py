"""Compares the signatures of the top-level names the tensors work added (issue 21 points 3-4) with TF 2.21's.
Run: /work/tf-venv/bin/python tools/tf_reference/check_tensors_signatures.py > /tmp/tf_sigs.json, then
PYTHONPATH=. python tools/tf_reference/check_tensors_signatures.py /tmp/tf_sigs.json (prints mismatches)."""
import inspect
import json
import sys

NAMES = """shape size rank function constant convert_to_tensor Module device name_scope init_scope get_current_name_scope
executing_eagerly inside_function get_logger no_op group tuple control_dependencies timestamp is_tensor is_symbolic_tensor
get_static_value cond case switch_case while_loop map_fn vectorized_map scan foldl foldr TensorArray custom_gradient
grad_pass_through clip_by_norm clip_by_global_norm clip_by_value tensor_scatter_nd_add tensor_scatter_nd_sub
tensor_scatter_nd_min tensor_scatter_nd_max scatter_nd dynamic_partition dynamic_stitch unique unique_with_counts
searchsorted histogram_fixed_width histogram_fixed_width_bins sequence_mask repeat roll meshgrid tensordot ensure_shape
broadcast_static_shape broadcast_dynamic_shape bitcast slice reverse_sequence unravel_index identity_n shape_n
parallel_stack guarantee_const random_normal_initializer random_uniform_initializer zeros_initializer ones_initializer
constant_initializer tan asin acos atan atan2 sinh cosh asinh acosh atanh realdiv truncatediv truncatemod complex
scalar_mul saturate_cast print autograph.experimental.do_not_convert autograph.experimental.set_loop_options
autograph.set_verbosity autograph.to_code autograph.to_graph autograph.trace Module.with_name_scope
Assert gradients hessians no_gradient make_ndarray as_string bitwise.bitwise_and bitwise.bitwise_or
bitwise.bitwise_xor bitwise.invert bitwise.left_shift bitwise.right_shift strided_slice space_to_batch_nd space_to_batch
batch_to_space required_space_to_batch_paddings fingerprint approx_top_k eig eigvals matrix_square_root""".split()


def signature(obj):
    target = obj.__init__ if inspect.isclass(obj) else obj
    params = []
    for p in inspect.signature(target).parameters.values():
        if p.name == "self":
            continue
        default = None if p.default is inspect.Parameter.empty else repr(p.default)
        params.append([p.name, str(p.kind), default])
    return params


def collect(module):
    out = {}
    for name in NAMES:
        obj = module
        for part in name.split("."):
            obj = getattr(obj, part)
        out[name] = signature(obj)
    return out


if __name__ == "__main__":
    if len(sys.argv) == 1:
        import tensorflow as tf

        print(json.dumps(collect(tf)))
    else:
        import torchstrategy as tf

        reference = json.load(open(sys.argv[1]))
        ours = collect(tf)
        for name, params in reference.items():
            mine = ours[name]
            if [p[:2] for p in params] != [p[:2] for p in mine]:
                print("NAMES/KINDS", name, "\n  tf:  ", params, "\n  ours:", mine)
            elif [p[2] for p in params] != [p[2] for p in mine]:
                print("DEFAULTS", name, "\n  tf:  ", [p[2] for p in params], "\n  ours:", [p[2] for p in mine])
