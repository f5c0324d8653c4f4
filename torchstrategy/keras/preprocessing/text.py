"""`keras.preprocessing.text`: Keras's legacy text helpers (Tokenizer, text_to_word_sequence, one_hot,
hashing_trick, tokenizer_from_json) with Keras 3.15's word ordering, matrices and JSON layout."""
from __future__ import annotations

import collections
import hashlib
import json
import warnings
from typing import Any, Callable, Iterator, Optional

import numpy as np

_FILTERS = '!"#$%&()*+,-./:;<=>?@[\\]^_`{|}~\t\n'


def text_to_word_sequence(input_text: str, filters: str = _FILTERS, lower: bool = True, split: str = " ") -> list:
    """The words of `input_text`: lower-cased, each `filters` character turned into `split`, split, empty
    pieces dropped."""
    if lower:
        input_text = input_text.lower()
    input_text = input_text.translate(str.maketrans({c: split for c in filters}))
    return [word for word in input_text.split(split) if word]


def hashing_trick(text: str, n: int, hash_function: Any = None, filters: str = _FILTERS, lower: bool = True,
                  split: str = " ", analyzer: Optional[Callable] = None) -> list:
    """Each word hashed into 1..n-1: `hash_function(word) % (n - 1) + 1` (Python's `hash` by default, which
    varies between runs unless PYTHONHASHSEED is set; 'md5' is stable)."""
    if hash_function is None:
        hash_function = hash
    elif hash_function == "md5":
        def hash_function(word: str) -> int:
            return int(hashlib.md5(word.encode()).hexdigest(), 16)
    words = text_to_word_sequence(text, filters=filters, lower=lower, split=split) if analyzer is None \
        else analyzer(text)
    return [hash_function(word) % (n - 1) + 1 for word in words]


def one_hot(input_text: str, n: int, filters: str = _FILTERS, lower: bool = True, split: str = " ",
            analyzer: Optional[Callable] = None) -> list:
    """`hashing_trick` with Python's `hash`: word indices in 1..n-1 (not a one-hot encoding, despite the name)."""
    return hashing_trick(input_text, n, hash_function=hash, filters=filters, lower=lower, split=split,
                         analyzer=analyzer)


class Tokenizer:
    """Word (or character) index built from texts: the most frequent word gets index 1 (after `oov_token`
    when one is given); `num_words` keeps indices below it when turning texts into sequences or matrices."""

    def __init__(self, num_words: Optional[int] = None, filters: str = _FILTERS, lower: bool = True,
                 split: str = " ", char_level: bool = False, oov_token: Optional[str] = None,
                 analyzer: Optional[Callable] = None, **kwargs: Any) -> None:
        if "nb_words" in kwargs:
            warnings.warn("The `nb_words` argument in `Tokenizer` has been renamed `num_words`.", stacklevel=2)
            num_words = kwargs.pop("nb_words")
        document_count = kwargs.pop("document_count", 0)
        if kwargs:
            raise TypeError(f"Unrecognized keyword arguments: {str(kwargs)}")
        self.word_counts: dict = collections.OrderedDict()
        self.word_docs: dict = collections.defaultdict(int)
        self.filters, self.split, self.lower = filters, split, lower
        self.num_words, self.document_count = num_words, document_count
        self.char_level, self.oov_token, self.analyzer = char_level, oov_token, analyzer
        self.index_docs: dict = collections.defaultdict(int)
        self.word_index: dict = {}
        self.index_word: dict = {}

    def _tokens(self, text: Any) -> list:
        if self.char_level or isinstance(text, list):
            if self.lower:
                text = [t.lower() for t in text] if isinstance(text, list) else text.lower()
            return list(text)
        if self.analyzer is not None:
            return self.analyzer(text)
        return text_to_word_sequence(text, filters=self.filters, lower=self.lower, split=self.split)

    def fit_on_texts(self, texts: Any) -> None:
        """Counts words (and the documents each appears in) and rebuilds `word_index` by frequency."""
        for text in texts:
            self.document_count += 1
            tokens = self._tokens(text)
            for word in tokens:
                self.word_counts[word] = self.word_counts.get(word, 0) + 1
            for word in set(tokens):
                self.word_docs[word] += 1
        by_count = sorted(self.word_counts.items(), key=lambda item: item[1], reverse=True)  # stable: ties keep order
        vocabulary = ([] if self.oov_token is None else [self.oov_token]) + [word for word, _ in by_count]
        self.word_index = dict(zip(vocabulary, range(1, len(vocabulary) + 1)))
        self.index_word = {index: word for word, index in self.word_index.items()}
        for word, count in list(self.word_docs.items()):
            self.index_docs[self.word_index[word]] = count

    def fit_on_sequences(self, sequences: Any) -> None:
        """Counts, per index, the sequences it appears in (what tfidf matrices need)."""
        self.document_count += len(sequences)
        for seq in sequences:
            for index in set(seq):
                self.index_docs[index] += 1

    def texts_to_sequences(self, texts: Any) -> list:
        """Each text as a list of word indices (unknown or >= num_words words: the oov index, or dropped)."""
        return list(self.texts_to_sequences_generator(texts))

    def texts_to_sequences_generator(self, texts: Any) -> Iterator[list]:
        """`texts_to_sequences` one text at a time."""
        oov = self.word_index.get(self.oov_token)
        for text in texts:
            vector = []
            for word in self._tokens(text):
                index = self.word_index.get(word)
                if index is None:
                    if self.oov_token is not None:
                        vector.append(oov)
                elif self.num_words and index >= self.num_words:
                    if oov is not None:
                        vector.append(oov)
                else:
                    vector.append(index)
            yield vector

    def sequences_to_texts(self, sequences: Any) -> list:
        """Each sequence of indices back as a space-joined text."""
        return list(self.sequences_to_texts_generator(sequences))

    def sequences_to_texts_generator(self, sequences: Any) -> Iterator[str]:
        """`sequences_to_texts` one sequence at a time."""
        oov = self.word_index.get(self.oov_token)
        for seq in sequences:
            words = []
            for index in seq:
                word = self.index_word.get(index)
                if word is None:
                    if self.oov_token is not None:
                        words.append(self.index_word[oov])
                elif self.num_words and index >= self.num_words:
                    if oov is not None:
                        words.append(self.index_word[oov])
                else:
                    words.append(word)
            yield " ".join(words)

    def texts_to_matrix(self, texts: Any, mode: str = "binary") -> np.ndarray:
        """`sequences_to_matrix` of the texts' sequences."""
        return self.sequences_to_matrix(self.texts_to_sequences(texts), mode=mode)

    def sequences_to_matrix(self, sequences: Any, mode: str = "binary") -> np.ndarray:
        """A (len(sequences), num_words) float64 matrix: 'binary', 'count', 'freq' or 'tfidf' per index."""
        if self.num_words:
            num_words = self.num_words
        elif self.word_index:
            num_words = len(self.word_index) + 1
        else:
            raise ValueError("Specify a dimension (`num_words` argument), or fit on some text data first.")
        if mode == "tfidf" and not self.document_count:
            raise ValueError("Fit the Tokenizer on some data before using tfidf mode.")
        x = np.zeros((len(sequences), num_words))
        for i, seq in enumerate(sequences):
            if not seq:
                continue
            counts: dict = collections.defaultdict(int)
            for j in seq:
                if j < num_words:
                    counts[j] += 1
            for j, c in list(counts.items()):
                if mode == "count":
                    x[i][j] = c
                elif mode == "freq":
                    x[i][j] = c / len(seq)
                elif mode == "binary":
                    x[i][j] = 1
                elif mode == "tfidf":
                    x[i][j] = (1 + np.log(c)) * np.log(1 + self.document_count / (1 + self.index_docs.get(j, 0)))
                else:
                    raise ValueError("Unknown vectorization mode:", mode)
        return x

    def get_config(self) -> dict:
        """The settings and the fitted tables (as JSON strings), as Keras writes them."""
        return {"num_words": self.num_words, "filters": self.filters, "lower": self.lower, "split": self.split,
                "char_level": self.char_level, "oov_token": self.oov_token, "document_count": self.document_count,
                "word_counts": json.dumps(self.word_counts), "word_docs": json.dumps(self.word_docs),
                "index_docs": json.dumps(self.index_docs), "index_word": json.dumps(self.index_word),
                "word_index": json.dumps(self.word_index)}

    def to_json(self, **kwargs: Any) -> str:
        """{'class_name': 'Tokenizer', 'config': get_config()} as JSON (`tokenizer_from_json` reads it)."""
        return json.dumps({"class_name": self.__class__.__name__, "config": self.get_config()}, **kwargs)


def tokenizer_from_json(json_string: str) -> Tokenizer:
    """The Tokenizer `Tokenizer.to_json` wrote."""
    config = dict(json.loads(json_string).get("config"))
    tables = {key: json.loads(config.pop(key)) for key in ("word_counts", "word_docs", "index_docs", "index_word",
                                                          "word_index")}
    tokenizer = Tokenizer(**config)
    tokenizer.word_counts = tables["word_counts"]
    tokenizer.word_docs = tables["word_docs"]
    tokenizer.index_docs = {int(k): v for k, v in tables["index_docs"].items()}
    tokenizer.word_index = tables["word_index"]
    tokenizer.index_word = {int(k): v for k, v in tables["index_word"].items()}
    return tokenizer
