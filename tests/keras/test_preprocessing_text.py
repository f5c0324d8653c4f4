"""keras.preprocessing.text (the legacy Tokenizer and helpers) against TF 2.21 / Keras 3.15 results frozen in
keras_text_reference.json by tools/tf_reference/keras_text_reference.py."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import torchstrategy as tf

text = tf.keras.preprocessing.text
REF = json.load(open(os.path.join(os.path.dirname(__file__), "keras_text_reference.json")))
DOCS, NEW = REF["docs"], REF["new"]
KWARGS = {"plain": {}, "oov": {"oov_token": "<OOV>"}, "num_words": {"num_words": 5},
          "num_words_oov": {"num_words": 5, "oov_token": "<OOV>"}, "chars": {"char_level": True},
          "no_lower": {"lower": False}}


def test_helpers():
    assert text.text_to_word_sequence("Hello, World!  it's\tme") == REF["words"]
    assert text.text_to_word_sequence("a-b_c d", filters="-", lower=False, split="_") == REF["words_custom"]
    assert text.hashing_trick("The cat sat on the mat", 17, hash_function="md5") == REF["md5"]
    assert all(1 <= i < 17 for i in text.one_hot("the cat sat", 17))


@pytest.mark.parametrize("key", sorted(KWARGS))
def test_tokenizer(key):
    ref = REF["tokenizers"][key]
    tok = text.Tokenizer(**KWARGS[key])
    tok.fit_on_texts(DOCS)
    assert tok.word_index == ref["word_index"]
    assert {str(k): v for k, v in tok.index_word.items()} == ref["index_word"]
    assert [list(item) for item in tok.word_counts.items()] == ref["word_counts"]
    assert tok.document_count == ref["document_count"]
    assert tok.texts_to_sequences(DOCS + NEW) == ref["seqs"]
    assert tok.sequences_to_texts(tok.texts_to_sequences(NEW) + [[1, 2, 99]]) == ref["texts"]
    for mode, matrix in ref["matrices"].items():
        np.testing.assert_allclose(tok.texts_to_matrix(DOCS + NEW, mode=mode), matrix, rtol=1e-12)


def test_json_round_trip_and_sequences():
    tok = text.Tokenizer(num_words=6, oov_token="?")
    tok.fit_on_texts(DOCS)
    def tables(text_json):  # the tables are JSON strings; word_docs' order follows Python's set order
        outer = json.loads(text_json)
        return {k: json.loads(v) if k in TABLES else v for k, v in outer["config"].items()}, outer["class_name"]

    assert tables(tok.to_json()) == tables(REF["json"])
    assert text.tokenizer_from_json(REF["json"]).texts_to_sequences(NEW) == REF["json_back_seqs"]
    tok = text.Tokenizer(num_words=4)
    tok.fit_on_sequences([[1, 2], [2, 3, 3], [1]])
    np.testing.assert_allclose(tok.sequences_to_matrix([[1, 2, 2], [3]], mode="tfidf"),
                               REF["fit_on_sequences_tfidf"], rtol=1e-12)


TABLES = ("word_counts", "word_docs", "index_docs", "index_word", "word_index")


def test_errors():
    with pytest.raises(ValueError, match="Specify a dimension"):
        text.Tokenizer().texts_to_matrix(["a"])
    with pytest.raises(TypeError, match="Unrecognized keyword arguments"):
        text.Tokenizer(bogus=1)
    with pytest.warns(UserWarning, match="renamed `num_words`"):
        assert text.Tokenizer(nb_words=3).num_words == 3
