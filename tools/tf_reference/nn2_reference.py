"""Writes TF 2.21's numbers for the second tf.nn / tf.linalg / tf.random / tf.strings / tf.math round (run with
/work/tf-venv; not part of the test suite): tests/nn/nn2_reference.json, tests/linalg/operator_reference.json,
tests/random_strings_reference.json, tests/math/special_reference.json and tests/extra_reference.json.
Inputs come from the `arr` formula mirrored in tests/nn/_reference.py."""
import json
import os

import numpy as np
import tensorflow as tf

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "tests")


def arr(*shape, offset=0.0):
    n = int(np.prod(shape))
    t = np.arange(n, dtype=np.float64)
    return (np.sin(0.7 * t + offset) + 0.3 * np.cos(2.3 * t)).reshape(shape).astype(np.float32)


def write(out, rel):
    def enc(v):
        a = np.asarray(v)
        if a.dtype == object:
            return {"dtype": "bytes", "shape": list(a.shape), "data": [x.decode("latin-1") for x in a.ravel()]}
        if a.dtype.kind == "c":
            return {"dtype": str(a.dtype), "shape": list(a.shape), "data": a.real.ravel().tolist(),
                    "imag": a.imag.ravel().tolist()}
        return {"dtype": str(a.dtype), "shape": list(a.shape), "data": a.ravel().tolist()}
    doc = {"tf_version": tf.__version__, "arrays": {k: enc(v) for k, v in out.items()}}
    path = os.path.join(ROOT, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "w") as fh:
        json.dump(doc, fh)
    os.replace(path + ".tmp", path)
    print(len(out), "arrays ->", path)


def nn_part():
    out = {}
    true = np.array([[1, 5], [3, 0], [7, 7]], np.int64)
    for fn in ("uniform_candidate_sampler", "log_uniform_candidate_sampler", "learned_unigram_candidate_sampler"):
        s, t, c = getattr(tf.random, fn)(true, 2, 4, False, 10, seed=3)
        out[f"{fn}_true"], out[f"{fn}_ids"], out[f"{fn}_sampled"] = t.numpy(), s.numpy(), c.numpy()
        s, t, c = getattr(tf.random, fn)(true, 2, 4, True, 10, seed=3)
        out[f"{fn}_unique_true"], out[f"{fn}_unique_ids"], out[f"{fn}_unique_sampled"] = t.numpy(), s.numpy(), c.numpy()
    # The learned sampler: does a second eager call see the first call's counts?
    s, t, c = tf.random.learned_unigram_candidate_sampler(true, 2, 4, False, 10, seed=3)
    out["learned_second_true"] = t.numpy()
    uni = [1.0, 2.0, 3.0, 4.0, 0.5, 6.0, 7.0, 2.5]
    s, t, c = tf.random.fixed_unigram_candidate_sampler(np.array([[0, 1], [2, 3]], np.int64), 2, 3, False, 5,
                                                         distortion=0.75, num_reserved_ids=2, num_shards=2, shard=1,
                                                         unigrams=uni, seed=2)
    out["fixed_true"], out["fixed_ids"], out["fixed_sampled"] = t.numpy(), s.numpy(), c.numpy()
    s, t, c = tf.random.fixed_unigram_candidate_sampler(np.array([[0], [7]], np.int64), 1, 3, False, 8,
                                                         unigrams=uni, seed=2)
    out["fixed_plain_true"] = t.numpy()
    s, t, c = tf.random.all_candidate_sampler(true, 2, 8, True)
    out["all_ids"], out["all_true"], out["all_sampled"] = s.numpy(), t.numpy(), c.numpy()
    i, ids, w = tf.nn.compute_accidental_hits(true, np.array([5, 7, 2, 1, 7], np.int64), 2)
    out["hits_indices"], out["hits_ids"], out["hits_weights"] = i.numpy(), ids.numpy(), w.numpy()
    weights, biases, inputs = arr(10, 4), arr(10, offset=1.0), arr(3, 4, offset=2.0)
    labels = np.array([[1, 5], [3, 0], [7, 2]], np.int64)
    sampled = (np.array([5, 8, 2, 9], np.int64), np.abs(arr(3, 2, offset=0.3)) + 0.1,
               np.abs(arr(4, offset=0.9)) + 0.1)
    for hits in (False, True):
        out[f"nce_{hits}"] = tf.nn.nce_loss(weights, biases, labels, inputs, 4, 10, num_true=2,
                                            sampled_values=sampled, remove_accidental_hits=hits).numpy()
        out[f"ssl_{hits}"] = tf.nn.sampled_softmax_loss(weights, biases, labels, inputs, 4, 10, num_true=2,
                                                        sampled_values=sampled, remove_accidental_hits=hits).numpy()
    out["nce_shards"] = tf.nn.nce_loss([weights[:5], weights[5:]], biases, labels[:, :1], inputs, 4, 10,
                                       sampled_values=(sampled[0], sampled[1][:, :1], sampled[2])).numpy()
    logits = arr(6, 2, 5, offset=0.4) * 2
    for width, top in ((3, 2), (10, 3), (1, 1)):
        decoded, probs = tf.nn.ctc_beam_search_decoder(logits, [6, 4], beam_width=width, top_paths=top)
        out[f"beam_{width}_probs"] = probs.numpy()
        for p, sp in enumerate(decoded):
            out[f"beam_{width}_{p}_indices"] = sp.indices.numpy()
            out[f"beam_{width}_{p}_values"] = sp.values.numpy()
            out[f"beam_{width}_{p}_shape"] = sp.dense_shape.numpy()
    x = arr(2, 6, 8, 3)
    for pseudo in (False, True):
        for overlap in (False, True):
            for kind in ("max", "avg"):
                fn = getattr(tf.nn, f"fractional_{kind}_pool")
                v, r, c = fn(x, [1.0, 2.0, 2.0, 1.0], pseudo_random=pseudo, overlapping=overlap, seed=5)
                key = f"frac_{kind}_{pseudo}_{overlap}"
                out[key], out[key + "_rows"], out[key + "_cols"] = v.numpy(), r.numpy(), c.numpy()
    filt = arr(3, 3, 3, 2, offset=0.6)
    for pad in ("SAME", "VALID"):
        out[f"wstb_{pad}"] = tf.nn.with_space_to_batch(
            x, [2, 2], pad, lambda inp, n, p: tf.nn.convolution(inp, filt, padding=p), filter_shape=[3, 3]).numpy()
    write(out, "nn/nn2_reference.json")




def operator_cases():
    """(name, TF operator) pairs; tests/linalg/test_operators.py builds the same ones from the same numbers."""
    a = arr(2, 4, 4) + 4 * np.eye(4, dtype=np.float32)
    spd = np.einsum("bij,bkj->bik", a, a).astype(np.float32)
    d = np.abs(arr(2, 4, offset=0.5)) + 0.5
    lo = arr(4, 4, offset=1.5) + 3 * np.eye(4, dtype=np.float32)
    small = arr(2, 2, offset=0.2) + 2 * np.eye(2, dtype=np.float32)
    L = tf.linalg
    return [
        ("full", L.LinearOperatorFullMatrix(a)),
        ("full_spd", L.LinearOperatorFullMatrix(spd, is_self_adjoint=True, is_positive_definite=True)),
        ("diag", L.LinearOperatorDiag(d)),
        ("identity", L.LinearOperatorIdentity(4, batch_shape=[2])),
        ("scaled", L.LinearOperatorScaledIdentity(4, np.array([1.5, -2.0], np.float32))),
        ("tril", L.LinearOperatorLowerTriangular(lo)),
        ("householder", L.LinearOperatorHouseholder(arr(4, offset=0.8))),
        ("permutation", L.LinearOperatorPermutation(np.array([2, 0, 3, 1], np.int32))),
        ("toeplitz", L.LinearOperatorToeplitz(arr(4, offset=0.1) + np.array([3, 0, 0, 0], np.float32),
                                              arr(4, offset=0.1) * np.array([1, -1, 0.5, 2], np.float32))),
        ("tridiag", L.LinearOperatorTridiag(arr(3, 4, offset=0.3) + np.array([[0], [3], [0]], np.float32))),
        ("circulant", L.LinearOperatorCirculant(np.array([4.0, 1 + 1j, 2.0, 1 - 1j], np.complex64),
                                                input_output_dtype=tf.float32)),
        ("circulant2d", L.LinearOperatorCirculant2D(
            (np.abs(arr(2, 3, offset=0.4)) + 1).astype(np.complex64), input_output_dtype=tf.complex64)),
        ("composition", L.LinearOperatorComposition([L.LinearOperatorFullMatrix(lo), L.LinearOperatorDiag(d[0])])),
        ("blockdiag", L.LinearOperatorBlockDiag([L.LinearOperatorFullMatrix(small),
                                                 L.LinearOperatorDiag(d[0, :2])])),
        ("blocklower", L.LinearOperatorBlockLowerTriangular(
            [[L.LinearOperatorFullMatrix(small)],
             [L.LinearOperatorFullMatrix(arr(2, 2, offset=2.2)), L.LinearOperatorDiag(d[0, :2])]])),
        ("kronecker", L.LinearOperatorKronecker([L.LinearOperatorFullMatrix(small),
                                                 L.LinearOperatorFullMatrix(small.T.copy())])),
        ("lowrank", L.LinearOperatorLowRankUpdate(L.LinearOperatorDiag(d[0]), arr(4, 2, offset=0.9),
                                                  diag_update=np.array([0.5, 2.0], np.float32))),
        ("adjoint", L.LinearOperatorAdjoint(L.LinearOperatorFullMatrix(lo))),
        ("inversion", L.LinearOperatorInversion(L.LinearOperatorFullMatrix(lo))),
    ]


def linalg_part():
    out = {}
    for name, op in operator_cases():
        n = op.shape[-1]
        batch = list(op.batch_shape)
        x = arr(*(batch + [n, 3]), offset=0.25).astype(op.dtype.as_numpy_dtype)
        out[f"{name}_dense"] = op.to_dense().numpy()
        out[f"{name}_matmul"] = op.matmul(x).numpy()
        out[f"{name}_matmul_adj"] = op.matmul(x, adjoint=True).numpy()
        out[f"{name}_matvec"] = op.matvec(x[..., 0]).numpy()
        out[f"{name}_solve"] = op.solve(x).numpy()
        out[f"{name}_solve_adj"] = op.solve(x, adjoint=True).numpy()
        out[f"{name}_det"] = op.determinant().numpy()
        out[f"{name}_logdet"] = op.log_abs_determinant().numpy()
        out[f"{name}_diag"] = op.diag_part().numpy()
        out[f"{name}_trace"] = op.trace().numpy()
        out[f"{name}_shape"] = np.array(op.shape.as_list())
        out[f"{name}_hints"] = np.array([{None: -1, False: 0, True: 1}[h] for h in
                                         (op.is_non_singular, op.is_self_adjoint, op.is_positive_definite,
                                          op.is_square)])
    spd = operator_cases()[1][1]
    out["full_spd_cholesky"] = spd.cholesky().to_dense().numpy()
    out["full_spd_eigvals"] = spd.eigvals().numpy()
    out["circulant_kernel"] = operator_cases()[10][1].convolution_kernel().numpy()
    state = tf.linalg.experimental.conjugate_gradient(spd, tf.constant(arr(2, 4, offset=0.5)), max_iter=3)
    out["cg_x"], out["cg_i"], out["cg_r"] = state.x.numpy(), state.i.numpy(), state.r.numpy()
    write(out, "linalg/operator_reference.json")


def random_strings_part():
    out = {}
    for seed in ([1, 2], [-5, 2**40]):
        tag = f"{seed[0]}_{seed[1] % 1000}"
        for dt in ("float32", "float64", "float16", "bfloat16"):
            out[f"uniform_{dt}_{tag}"] = tf.cast(tf.random.stateless_uniform([7], seed, dtype=dt), tf.float64).numpy()
        out[f"uniform_range_{tag}"] = tf.random.stateless_uniform([5], seed, minval=-2.0, maxval=3.0).numpy()
        out[f"int32_{tag}"] = tf.random.stateless_uniform([7], seed, minval=-3, maxval=11, dtype=tf.int32).numpy()
        out[f"int64_{tag}"] = tf.random.stateless_uniform([7], seed, minval=-3, maxval=2**40, dtype=tf.int64).numpy()
        out[f"full32_{tag}"] = tf.random.stateless_uniform([5], seed, minval=None, maxval=None, dtype=tf.int32).numpy()
        out[f"full64_{tag}"] = tf.random.stateless_uniform([5], seed, minval=None, maxval=None, dtype=tf.int64).numpy()
        out[f"normal32_{tag}"] = tf.random.stateless_normal([7], seed, mean=1.0, stddev=2.0).numpy()
        out[f"normal64_{tag}"] = tf.random.stateless_normal([5], seed, dtype=tf.float64).numpy()
        out[f"trunc32_{tag}"] = tf.random.stateless_truncated_normal([9], seed).numpy()
    out["split"] = tf.random.split([3, 4], 3).numpy()
    out["split64"] = tf.random.split(np.array([3, 4], np.int64)).numpy()
    out["fold_in"] = tf.random.fold_in([3, 4], 7).numpy()
    out["rng_state_1"] = tf.random.create_rng_state(1, "philox").numpy()
    out["rng_state_big"] = tf.random.create_rng_state(2**70 + 5, "philox").numpy()
    out["rng_state_list"] = tf.random.create_rng_state([7, 8], "philox").numpy()
    g = tf.random.Generator.from_seed(7)
    out["gen_uniform"] = g.uniform([5]).numpy()
    out["gen_state_after_uniform"] = g.state.numpy()
    out["gen_normal"] = g.normal([3]).numpy()
    out["gen_state_after_normal"] = g.state.numpy()
    out["gen_full"] = g.uniform_full_int([2], dtype=tf.int64).numpy()
    out["gen_seeds"] = g.make_seeds(2).numpy()
    g.skip(10)
    out["gen_state_after_skip"] = g.state.numpy()
    out["gen_split_keys"] = np.array([c.state.numpy() for c in g.split(2)])
    out["gen_trunc"] = g.truncated_normal([5]).numpy()
    words = np.array([b"hello", b"", b"tensorflow strings", b"abcdefgh", b"abcdefghi"], dtype=object)
    out["hash_bucket"] = tf.strings.to_hash_bucket(words, 1000).numpy()
    out["hash_bucket_strong"] = tf.strings.to_hash_bucket_strong(words, 1000, [17, 2**40 + 3]).numpy()
    toks = np.array([b"a", b"b", b"c", b"d"], dtype=object)
    out["ngrams_2"] = tf.strings.ngrams(toks, 2).numpy()
    out["ngrams_23_pad"] = tf.strings.ngrams(toks, [2, 3], separator="_", pad_values=("<", ">")).numpy()
    out["ngrams_pad1"] = tf.strings.ngrams(toks, 3, pad_values="#", padding_width=1).numpy()
    rag = tf.ragged.constant([[b"a", b"b", b"c"], [b"x"], []])
    r = tf.strings.ngrams(rag, 2, preserve_short_sequences=True)
    out["ngrams_short_values"], out["ngrams_short_splits"] = r.flat_values.numpy(), r.row_splits.numpy()
    out["format"] = np.array(tf.strings.format("x={} and {}", (tf.constant([1.5, 2.0, 3.25, 4.0, 5.0]),
                                                                 tf.constant([[1, 2], [3, 4]]))).numpy(), dtype=object)
    bad = np.array([b"h\xc3\xa9llo", b"a\xffb\xe2\x82", b"\x01x"], dtype=object)
    for errors in ("replace", "ignore"):
        r = tf.strings.unicode_decode(bad, "UTF-8", errors=errors, replace_control_characters=True)
        out[f"decode_{errors}_values"], out[f"decode_{errors}_splits"] = r.flat_values.numpy(), r.row_splits.numpy()
    codes, offsets = tf.strings.unicode_decode_with_offsets(bad, "UTF-8")
    out["decode_offsets"] = offsets.flat_values.numpy()
    out["encode"] = tf.strings.unicode_encode(tf.ragged.constant([[104, 233], [0x1F600, 65]]), "UTF-16-BE").numpy()
    out["transcode"] = tf.strings.unicode_transcode(bad, "UTF-8", "UTF-32-BE").numpy()
    out["segment_join"] = tf.strings.unsorted_segment_join(np.array([b"a", b"b", b"c", b"d"], dtype=object),
                                                           [1, 0, 1, 2], 4, separator="+").numpy()
    write(out, "random_strings_reference.json")


def math_part():
    out = {}
    x = np.array([-3.0, -0.5, 0.0, 0.1, 0.5, 1.0, 1.7, 1.9, 2.5, 4.0, 10.0, 75.0])
    for fn in ("bessel_i0", "bessel_i0e", "bessel_i1", "bessel_i1e", "bessel_j0", "bessel_j1", "bessel_k0",
               "bessel_k0e", "bessel_k1", "bessel_k1e", "bessel_y0", "bessel_y1", "dawsn", "expint", "fresnel_cos",
               "fresnel_sin", "spence"):
        out[fn] = getattr(tf.math.special, fn)(x).numpy()
        out[fn + "_f32"] = getattr(tf.math.special, fn)(x.astype(np.float32)).numpy()
    out["sobol"] = tf.math.sobol_sample(5, 6).numpy()
    out["sobol_skip"] = tf.math.sobol_sample(3, 4, skip=7, dtype=tf.float64).numpy()
    # tf.fftnd and friends have no CPU kernel in TF 2.21 ("no registered kernels"): tested against NumPy instead.
    write(out, "math/special_reference.json")


def extra_part():
    out = {}
    x = arr(3, 5)
    out["stateless_dropout"] = tf.nn.experimental.stateless_dropout(x, 0.4, [3, 7]).numpy()
    out["stateless_dropout_noise"] = tf.nn.experimental.stateless_dropout(x, 0.3, [5, 1], noise_shape=[3, 1]).numpy()
    hyp = tf.sparse.SparseTensor([[0, 0, 0], [0, 0, 1], [1, 0, 0], [1, 1, 0], [1, 1, 1]], [1, 2, 3, 4, 5], [2, 3, 2])
    truth = tf.sparse.SparseTensor([[0, 0, 0], [0, 0, 1], [0, 0, 2], [1, 0, 0], [1, 2, 0]], [1, 3, 2, 3, 6],
                                   [2, 3, 3])
    out["edit_norm"] = tf.edit_distance(hyp, truth).numpy()
    out["edit_raw"] = tf.edit_distance(hyp, truth, normalize=False).numpy()
    x, w = arr(2, 7, 6, 3), arr(3, 2, 3, 4, offset=1.0)
    g = arr(2, 4, 3, 4, offset=0.5)
    # tf.conv2d_backprop_*_v2 have no CPU kernel in TF 2.21: the same gradients come from a GradientTape.
    xv, wv = tf.Variable(x), tf.Variable(w)
    with tf.GradientTape(persistent=True) as tape:
        y = tf.nn.conv2d(xv, wv, [1, 2, 2, 1], "SAME")
        ye = tf.nn.conv2d(xv, wv, [1, 2, 2, 1], [[0, 0], [1, 0], [1, 2], [0, 0]])
    out["bp_filter"] = tape.gradient(y, wv, output_gradients=g).numpy()
    out["bp_input"] = tape.gradient(y, xv, output_gradients=g).numpy()
    ge = arr(2, 3, 4, 4, offset=0.5)
    out["bp_filter_explicit"] = tape.gradient(ye, wv, output_gradients=ge).numpy()
    out["conv_batch2"] = tf.conv(arr(2, 3, 7, 6, 3), w, [1, 2, 1, 1], "VALID", batch_dims=2).numpy()
    # (TF 2.21's CPU Conv kernel refuses groups > 1.)
    out["conv_dilated"] = tf.conv(arr(2, 5, 5, 4), arr(3, 3, 4, 2, offset=2.0), [1, 1, 1, 1], "SAME",
                                  dilations=[1, 2, 1, 1]).numpy()
    vol = arr(2, 5, 6, 4, 3)
    for pad in ("SAME", "VALID"):
        out[f"volume_patches_{pad}"] = tf.extract_volume_patches(vol, [1, 2, 3, 2, 1], [1, 2, 2, 3, 1], pad).numpy()
    write(out, "extra_reference.json")


if __name__ == "__main__":
    import sys
    parts = sys.argv[1:] or ["nn", "linalg", "random_strings", "math", "extra"]
    for part in parts:
        {"nn": nn_part, "linalg": linalg_part, "random_strings": random_strings_part, "math": math_part,
         "extra": extra_part}[part]()
