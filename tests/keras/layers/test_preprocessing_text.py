"""Tests of StringLookup, IntegerLookup and TextVectorization against values frozen from TF 2.21 (Keras 3.15)."""
import numpy as np
import pytest
import torch

from torchstrategy.keras.layers.preprocessing_text import (
    IntegerLookup,
    StringLookup,
    TextVectorization,
)

TEXTS = np.array(["The cat sat on the mat.", "The dog, the DOG! ate my hat?", "a cat"])


def test_string_lookup_adapt_orders_by_count_then_larger_token():
    layer = StringLookup()
    layer.adapt(np.array([["b", "a", "c", "a"], ["d", "b", "e", "zz"]]))
    # TF 2.21: frequency first, ties broken by the larger token
    assert layer.get_vocabulary() == ["[UNK]", "b", "a", "zz", "e", "d", "c"]
    assert layer.vocabulary_size() == 7
    capped = StringLookup(max_tokens=4)
    capped.adapt(np.array(["a", "a", "b", "b", "b", "c", "d", "d", "d", "d"]))
    assert capped.get_vocabulary() == ["[UNK]", "d", "b", "a"]  # TF 2.21


def test_string_lookup_indices_mask_and_invert():
    layer = StringLookup(vocabulary=["a", "b", "c"])
    out = layer(np.array([["a", "q", "c"]]))
    assert out.dtype == torch.int64 and out.tolist() == [[1, 0, 3]]
    assert layer([b"b", "c"]).tolist() == [2, 3]  # bytes and str alike
    masked = StringLookup(vocabulary=["a", "b", "c"], mask_token="")
    assert masked.get_vocabulary() == ["", "[UNK]", "a", "b", "c"]
    assert masked(np.array([["a", "", "c", "q"]])).tolist() == [[2, 0, 4, 1]]
    inverse = StringLookup(vocabulary=["a", "b", "c"], mask_token="[M]", invert=True)
    tokens = inverse(np.array([[2, 0, 1, 4, 9]]))
    assert tokens.tolist() == [[b"a", b"[M]", b"[UNK]", b"c", b"[UNK]"]]  # TF 2.21 (out of range -> OOV)


def test_string_lookup_bag_modes():
    vocab = ["a", "b", "c"]
    one_hot = StringLookup(vocabulary=vocab, output_mode="one_hot")
    assert one_hot(np.array(["a", "q", "c", "a"])).tolist() == [[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 1],
                                                                 [0, 1, 0, 0]]
    assert one_hot(np.array([["a"], ["c"]])).tolist() == [[0, 1, 0, 0], [0, 0, 0, 1]]
    rows = np.array([["a", "q", "c", "a"], ["b", "b", "b", "c"]])
    assert StringLookup(vocabulary=vocab, output_mode="multi_hot")(rows).tolist() == [[1, 1, 0, 1], [0, 0, 1, 1]]
    assert StringLookup(vocabulary=vocab, output_mode="count")(rows).tolist() == [[1, 2, 0, 1], [0, 0, 3, 1]]
    assert StringLookup(vocabulary=vocab, output_mode="multi_hot")(np.array(["a", "c"])).tolist() == [0, 1, 0, 1]
    padded = StringLookup(vocabulary=vocab, output_mode="count", max_tokens=6, pad_to_max_tokens=True)
    assert padded(np.array([["a", "c"]])).tolist() == [[0, 1, 0, 1, 0, 0]]


def test_string_lookup_tf_idf_from_adapt_and_given_weights():
    layer = StringLookup(output_mode="tf_idf")
    layer.adapt(np.array([["a", "b", "a"], ["a", "c", "d"], ["e", "a", "b"]]))
    assert layer.get_vocabulary() == ["[UNK]", "a", "b", "e", "d", "c"]
    # TF 2.21 idf_weights: log(1 + docs / (1 + docs with token)); OOV the mean
    np.testing.assert_allclose(layer.idf_weights.numpy(),
                               [0.8003271, 0.5596158, 0.6931472, 0.91629076, 0.91629076, 0.91629076], rtol=1e-6)
    np.testing.assert_allclose(layer(np.array([["a", "b", "a", "q"]])).numpy(),
                               [[0.8003271, 1.1192316, 0.6931472, 0, 0, 0]], rtol=1e-6)
    given = StringLookup(vocabulary=["a", "b"], output_mode="tf_idf", idf_weights=[0.5, 2.0])
    assert given(np.array([["a", "b", "a", "q"]])).tolist() == [[1.25, 1.0, 2.0]]  # TF 2.21


def test_integer_lookup():
    layer = IntegerLookup()
    layer.adapt(np.array([5, 3, 3, 7, 7, 7, 0, -1]))
    assert layer.get_vocabulary() == [-1, 7, 3, 5, 0]  # TF 2.21: the OOV token -1 is not a vocabulary entry
    assert layer(np.array([7, 3, 9, 0, -1])).tolist() == [1, 2, 0, 4, 0]
    given = IntegerLookup(vocabulary=[12, 36, 1138])
    assert given(torch.tensor([[12, 1138, 42], [42, 1000, 36]])).tolist() == [[1, 3, 0], [0, 0, 2]]
    masked = IntegerLookup(vocabulary=[12, 36], mask_token=0)
    assert masked.get_vocabulary() == [0, -1, 12, 36] and masked(np.array([[12, 0, 42]])).tolist() == [[2, 0, 1]]
    buckets = IntegerLookup(vocabulary=[12, 36], num_oov_indices=3)
    assert buckets(np.array([0, 1, 2, 3, 4, 5, -7, 100])).tolist() == [0, 1, 2, 0, 1, 2, 2, 1]  # TF 2.21 floormod
    inverse = IntegerLookup(vocabulary=[12, 36], invert=True)(np.array([[1, 0, 2]]))
    assert inverse.tolist() == [[12, -1, 36]]


def test_lookup_errors_are_clear():
    with pytest.raises(ValueError, match="repeated"):
        StringLookup(vocabulary=["a", "a"])
    with pytest.raises(ValueError, match="output_mode"):
        StringLookup(output_mode="bag")
    with pytest.raises(ValueError, match="num_oov_indices=0"):
        IntegerLookup(vocabulary=[1, 2], num_oov_indices=0)(np.array([5]))
    with pytest.raises(ValueError, match="no vocabulary"):
        StringLookup(num_oov_indices=0)(np.array(["a"]))
    with pytest.raises(TypeError, match="IntegerLookup"):
        StringLookup(vocabulary=["a"])(np.array([1]))


def test_lookup_config_round_trip():
    layer = StringLookup(vocabulary=["x", "y"], mask_token="")
    clone = StringLookup.from_config(layer.get_config())
    assert clone.get_vocabulary() == layer.get_vocabulary()
    assert clone(np.array(["y", "", "z"])).tolist() == [3, 0, 1]


def test_text_vectorization_adapt_and_int_output():
    layer = TextVectorization()
    layer.adapt(TEXTS)
    assert layer.get_vocabulary() == ["", "[UNK]", "the", "dog", "cat", "sat", "on", "my", "mat", "hat", "ate",
                                      "a"]  # TF 2.21
    assert layer(TEXTS).tolist() == [[2, 4, 5, 6, 2, 8, 0], [2, 3, 2, 3, 10, 7, 9], [11, 4, 0, 0, 0, 0, 0]]
    short = TextVectorization(max_tokens=6, output_sequence_length=4)
    short.adapt(TEXTS)
    assert short.get_vocabulary() == ["", "[UNK]", "the", "dog", "cat", "sat"]
    assert short(TEXTS).tolist() == [[2, 4, 5, 1], [2, 3, 2, 3], [1, 4, 0, 0]]


def test_text_vectorization_ngrams_counts_and_tf_idf():
    layer = TextVectorization(ngrams=2, output_mode="count")
    layer.adapt(TEXTS[:2])
    assert layer.get_vocabulary() == [
        "[UNK]", "the", "the dog", "dog", "the mat", "the cat", "sat on", "sat", "on the", "on", "my hat", "my",
        "mat", "hat", "dog the", "dog ate", "cat sat", "cat", "ate my", "ate"]  # TF 2.21
    assert layer(TEXTS[2:]).tolist() == [[2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0]]
    bigrams = TextVectorization(vocabulary=["a b", "b"], ngrams=(2,))
    assert bigrams(np.array(["b a b a b", "b"])).tolist() == [[1, 2, 1, 2], [0, 0, 0, 0]]
    tf_idf = TextVectorization(vocabulary=["cat", "the"], output_mode="tf_idf", idf_weights=[1.0, 2.0])
    assert tf_idf(TEXTS).tolist() == [[4.5, 1.0, 4.0], [7.5, 0.0, 4.0], [1.5, 1.0, 0.0]]  # TF 2.21
    multi = TextVectorization(vocabulary=["cat", "the"], output_mode="multi_hot")
    assert multi.get_vocabulary() == ["[UNK]", "cat", "the"]
    assert multi(TEXTS).tolist() == [[1, 1, 1], [1, 0, 1], [1, 1, 0]]


def test_text_vectorization_standardize_split_and_shapes():
    unicode = TextVectorization(vocabulary=["ça", "été"])
    assert unicode(np.array(["Ça, ÉTÉ; l'été"])).tolist() == [[2, 3, 1]]  # TF 2.21
    assert unicode(np.array("ça été")).tolist() == [2, 3]
    assert unicode(np.array([["a b"], ["c"]])).tolist() == [[1, 1], [1, 0]]
    raw = TextVectorization(vocabulary=["cat", "the"], standardize=None, split=None)
    assert raw(np.array(["cat", "the", "The"])).tolist() == [2, 3, 1]  # TF 2.21: shape kept
    chars = TextVectorization(vocabulary=["t", "h"], standardize="lower", split="character")
    assert chars(["tHe"]).tolist() == [[2, 3, 1]]
    custom = TextVectorization(vocabulary=["x"], standardize=lambda s: s.replace("-", " "), split=lambda s: s.split())
    assert custom(["x-y-x"]).tolist() == [[2, 1, 2]]
    with pytest.raises(ValueError, match="standardize"):
        TextVectorization(standardize="upper")
    with pytest.raises(ValueError, match="output_sequence_length"):
        TextVectorization(output_mode="count", output_sequence_length=3)


# TF 2.21 (Keras 3): StringLookup(vocabulary=["cat", "dog", "bird"], num_oov_indices=4, mask_token=...) on these
# words; OOV words land in FarmHash Fingerprint64 buckets (tf.strings.to_hash_bucket_fast)
OOV_WORDS = ["cat", "fish", "dog", "", "zebra", "\u00fcber", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "lion", "bird", "x y", "w0", "w1", "w2", "w3", "w4", "w5", "w6", "w7", "w8", "w9", "w10", "w11", "w12", "w13", "w14", "w15", "w16", "w17", "w18", "w19", "w20", "w21", "w22", "w23", "w24", "w25", "w26", "w27", "w28", "w29", "w30", "w31", "w32", "w33", "w34", "w35", "w36", "w37", "w38", "w39"]
TF_OOV_NO_MASK = [4, 2, 5, 3, 2, 1, 0, 2, 6, 1, 2, 3, 0, 3, 1, 0, 1, 2, 0, 0, 0, 2, 0, 3, 1, 3, 1, 0, 2, 0, 0, 2, 0, 3, 1, 3, 1, 0, 2, 0, 1, 3, 1, 2, 0, 2, 0, 1, 3, 1]
TF_OOV_EMPTY_MASK = [5, 3, 6, 0, 3, 2, 1, 3, 7, 2, 3, 4, 1, 4, 2, 1, 2, 3, 1, 1, 1, 3, 1, 4, 2, 4, 2, 1, 3, 1, 1, 3, 1, 4, 2, 4, 2, 1, 3, 1, 2, 4, 2, 3, 1, 3, 1, 2, 4, 2]


def test_string_lookup_hashes_oov_words_into_tensorflows_buckets():
    words = np.array(OOV_WORDS, dtype=object)
    plain = StringLookup(vocabulary=["cat", "dog", "bird"], num_oov_indices=4)
    masked = StringLookup(vocabulary=["cat", "dog", "bird"], num_oov_indices=4, mask_token="")
    assert np.asarray(plain(words)).tolist() == TF_OOV_NO_MASK
    assert np.asarray(masked(words)).tolist() == TF_OOV_EMPTY_MASK


@pytest.mark.parametrize("layer", ["TextVectorization", "StringLookup"])
@pytest.mark.parametrize("empty", ["dataset", "list"])
def test_adapt_on_no_data_is_refused_instead_of_mapping_every_word_to_oov(layer, empty):
    import torchstrategy as tf

    data = tf.data.Dataset.from_tensor_slices(["a b", "c"]).batch(2).take(0) if empty == "dataset" else []
    preprocessing = getattr(tf.keras.layers, layer)(name="words")
    with pytest.raises(ValueError, match=r"Layer 'words': adapt\(\) got no data.*vocabulary="):
        preprocessing.adapt(data)
