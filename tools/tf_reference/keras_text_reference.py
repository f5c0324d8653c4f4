"""Freezes keras.preprocessing.text (legacy Tokenizer and helpers) results (run under the TF reference env,
TF 2.21 / Keras 3.15): /work/tf-venv/bin/python tools/tf_reference/keras_text_reference.py
-> tests/keras/keras_text_reference.json"""
import json
import os

import tensorflow as tf

text = tf.keras.preprocessing.text
DOCS = ["The cat sat on the mat.", "The dog ate my homework!", "Cat and dog: friends?", "", "MAT mat Mat"]
NEW = ["the bird sat on the dog", "a cat, a hat"]


def dump(tok):
    return {"word_index": tok.word_index, "index_word": {str(k): v for k, v in tok.index_word.items()},
            "word_counts": list(tok.word_counts.items()), "document_count": tok.document_count,
            "seqs": tok.texts_to_sequences(DOCS + NEW),
            "texts": tok.sequences_to_texts(tok.texts_to_sequences(NEW) + [[1, 2, 99]]),
            "matrices": {m: tok.texts_to_matrix(DOCS + NEW, mode=m).tolist()
                         for m in ("binary", "count", "freq", "tfidf")}}


out = {"tf_version": tf.__version__, "docs": DOCS, "new": NEW,
       "words": text.text_to_word_sequence("Hello, World!  it's\tme"),
       "words_custom": text.text_to_word_sequence("a-b_c d", filters="-", lower=False, split="_"),
       "md5": text.hashing_trick("The cat sat on the mat", 17, hash_function="md5"),
       "tokenizers": {}}
for key, kwargs in {"plain": {}, "oov": {"oov_token": "<OOV>"}, "num_words": {"num_words": 5},
                    "num_words_oov": {"num_words": 5, "oov_token": "<OOV>"}, "chars": {"char_level": True},
                    "no_lower": {"lower": False}}.items():
    tok = text.Tokenizer(**kwargs)
    tok.fit_on_texts(DOCS)
    out["tokenizers"][key] = dump(tok)
tok = text.Tokenizer(num_words=6, oov_token="?")
tok.fit_on_texts(DOCS)
out["json"] = tok.to_json()
back = text.tokenizer_from_json(out["json"])
out["json_back_seqs"] = back.texts_to_sequences(NEW)
tok = text.Tokenizer(num_words=4)
tok.fit_on_sequences([[1, 2], [2, 3, 3], [1]])
out["fit_on_sequences_tfidf"] = tok.sequences_to_matrix([[1, 2, 2], [3]], mode="tfidf").tolist()
path = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "keras", "keras_text_reference.json")
with open(path, "w") as f:
    json.dump(out, f)
print("ok")
