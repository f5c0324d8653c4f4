"""Keras preprocessing layers for tokens: StringLookup, IntegerLookup (vocabulary, adapt, OOV buckets,
invert, int/one_hot/multi_hot/count/tf_idf outputs) and TextVectorization (standardize, split, n-grams)."""
from __future__ import annotations

import collections
import re
from typing import Any, Callable, Iterable, Optional, Sequence, Union

import numpy as np
import torch

from torchstrategy.keras.layers.base import Layer

_OUTPUT_MODES = ("int", "one_hot", "multi_hot", "count", "tf_idf")
# Keras strips ASCII punctuation only (its regex is exactly Python's string.punctuation)
_PUNCTUATION = re.compile(r"[!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~]")


def _to_array(data: Any) -> np.ndarray:
    """Strings or integers of any nesting as a NumPy array (strings as an object array)."""
    if isinstance(data, torch.Tensor):
        return data.detach().cpu().numpy()
    array = np.asarray(data) if not isinstance(data, np.ndarray) else data
    if array.dtype.kind in "US":
        array = array.astype(object)
    return array


def _require_documents(layer: str, docs: list) -> None:
    """Refuses an adapt() that saw no data: its vocabulary would hold only the special tokens, so every
    word would map to the OOV index without a word said (TF fails at the first call instead)."""
    if not docs:
        raise ValueError(f"Layer '{layer}': adapt() got no data (the dataset or array is empty, or `steps` is 0), "
                         "so it cannot build a vocabulary. Pass the training texts, or give vocabulary= instead.")


def _batches(data: Any, steps: Optional[int]) -> Iterable[np.ndarray]:
    """adapt()'s input: one array/tensor/list, or an iterable of batches (e.g. a tf.data Dataset)."""
    if isinstance(data, (np.ndarray, torch.Tensor, list, tuple, str, bytes)):
        yield _to_array(data)
        return
    for step, batch in enumerate(data):
        if steps is not None and step >= steps:
            return
        if isinstance(batch, tuple):  # (features, labels) elements: Keras adapts on features only
            batch = batch[0]
        yield _to_array(batch)


class _IndexLookup(Layer):
    """Shared machinery of the lookup layers: tokens are keys (bytes or ints) indexed after the specials.

    Index layout (as Keras): [mask_token] + num_oov_indices OOV buckets + vocabulary, in that order.
    """

    _float_policy_only = False

    def __init__(self, max_tokens: Optional[int], num_oov_indices: int, mask_token: Any, oov_token: Any,
                 vocabulary: Any, idf_weights: Any, invert: bool, output_mode: str, pad_to_max_tokens: bool,
                 sparse: bool, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        kind = type(self).__name__
        if output_mode not in _OUTPUT_MODES:
            raise ValueError(f"{kind}: output_mode must be one of {list(_OUTPUT_MODES)}, got {output_mode!r}.")
        if invert and output_mode != "int":
            raise ValueError(f"{kind}: invert=True needs output_mode='int', got {output_mode!r}.")
        if not isinstance(num_oov_indices, int) or num_oov_indices < 0:
            raise ValueError(f"{kind}: num_oov_indices must be an integer >= 0, got {num_oov_indices!r}.")
        if max_tokens is not None and max_tokens <= 1:
            raise ValueError(f"{kind}: max_tokens must be None or greater than 1, got {max_tokens!r}.")
        if pad_to_max_tokens and max_tokens is None:
            raise ValueError(f"{kind}: pad_to_max_tokens=True needs max_tokens.")
        if sparse:
            raise ValueError(f"{kind}: sparse=True is not supported here (outputs are dense torch tensors); "
                             "leave sparse=False.")
        if idf_weights is not None and output_mode != "tf_idf":
            raise ValueError(f"{kind}: idf_weights is only used with output_mode='tf_idf'.")
        self.max_tokens, self.num_oov_indices, self.invert = max_tokens, num_oov_indices, bool(invert)
        self.output_mode, self.pad_to_max_tokens, self.sparse = output_mode, bool(pad_to_max_tokens), False
        # Keras drops the mask token from the non-int outputs (a masked position counts nowhere)
        self.mask_token = mask_token if output_mode == "int" else None
        self.oov_token = oov_token
        self._vocab: list = []
        self._index: dict = {}
        self._idf: Optional[np.ndarray] = None  # one weight per index (specials included)
        if vocabulary is not None:
            self.set_vocabulary(vocabulary, idf_weights)
        elif idf_weights is not None:
            raise ValueError(f"{kind}: idf_weights needs a vocabulary to go with it.")

    # ----- keys: how a token is compared ---------------------------------------------------
    def _key(self, token: Any) -> Any:
        raise NotImplementedError

    def _public(self, key: Any) -> Any:
        raise NotImplementedError

    def _hash_oov(self, keys: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    # ----- vocabulary ----------------------------------------------------------------------
    @property
    def _num_special(self) -> int:
        return (self.mask_token is not None) + self.num_oov_indices

    def set_vocabulary(self, vocabulary: Any, idf_weights: Any = None) -> None:
        """Sets the vocabulary (tokens without the mask/OOV tokens, or a file with one token a line)."""
        kind = type(self).__name__
        if isinstance(vocabulary, str) and not isinstance(self, IntegerLookup):
            with open(vocabulary, encoding="utf-8") as handle:
                vocabulary = [line.rstrip("\n") for line in handle]
        tokens = [self._key(t) for t in _to_array(vocabulary).reshape(-1).tolist()]
        specials = {self._key(t) for t in (self.mask_token, self.oov_token) if t is not None}
        # Keras accepts a vocabulary starting with the special tokens and strips them
        while tokens and tokens[0] in specials:
            tokens.pop(0)
        repeated = sorted({self._public(t) for t, n in collections.Counter(tokens).items() if n > 1}, key=str)
        if repeated:
            raise ValueError(f"{kind}: the vocabulary has repeated terms {repeated}; pass each token once.")
        clash = [self._public(t) for t in tokens if t in specials]
        if clash:
            raise ValueError(f"{kind}: the vocabulary contains the mask or OOV token {clash}; leave them out "
                             "(the layer adds them).")
        if self.max_tokens is not None and len(tokens) + self._num_special > self.max_tokens:
            raise ValueError(f"{kind}: the vocabulary has {len(tokens) + self._num_special} entries with the special "
                             f"tokens, more than max_tokens={self.max_tokens}.")
        self._vocab = tokens
        self._index = {t: i + self._num_special for i, t in enumerate(tokens)}
        if self.output_mode == "tf_idf":
            if idf_weights is None:
                raise ValueError(f"{kind}: output_mode='tf_idf' with a vocabulary needs idf_weights "
                                 "(one per token), or call adapt() instead.")
            weights = np.asarray(idf_weights, dtype=np.float32).reshape(-1)
            if len(weights) != len(tokens):
                raise ValueError(f"{kind}: idf_weights has {len(weights)} entries for {len(tokens)} tokens.")
            self._set_idf(weights)

    def _set_idf(self, vocab_weights: np.ndarray) -> None:
        # Keras: OOV buckets weigh the mean idf of the vocabulary, the mask (if any) 0
        mean = float(vocab_weights.mean()) if len(vocab_weights) else 0.0
        head = [0.0] * (self.mask_token is not None) + [mean] * self.num_oov_indices
        self._idf = np.concatenate([np.asarray(head, dtype=np.float32), vocab_weights.astype(np.float32)])

    def get_vocabulary(self, include_special_tokens: bool = True) -> list:
        """The tokens in index order (with the mask and OOV tokens first unless told otherwise)."""
        vocab = [self._public(t) for t in self._vocab]
        if not include_special_tokens:
            return vocab
        head = ([self.mask_token] if self.mask_token is not None else []) + [self.oov_token] * self.num_oov_indices
        return head + vocab

    def vocabulary_size(self) -> int:
        """Number of indices, special tokens included."""
        return self._num_special + len(self._vocab)

    @property
    def idf_weights(self) -> Optional[torch.Tensor]:
        return None if self._idf is None else torch.from_numpy(self._idf.copy())

    def adapt(self, data: Any, batch_size: Optional[int] = None, steps: Optional[int] = None) -> None:
        """Builds the vocabulary from data: most frequent first, ties by the larger token first (Keras 3)."""
        docs: list = []
        for batch in _batches(data, steps):
            docs.extend(self._tokens_for_adapt(batch))
        _require_documents(self.name, docs)
        self._adapt_documents(docs)

    def _adapt_documents(self, docs: list) -> None:
        counts: collections.Counter = collections.Counter()
        doc_counts: collections.Counter = collections.Counter()
        for doc in docs:
            keys = [self._key(t) for t in doc]
            counts.update(keys)
            if self.output_mode == "tf_idf":
                doc_counts.update(set(keys))
        num_docs = len(docs)
        for special in (self.mask_token, self.oov_token):
            if special is not None:
                counts.pop(self._key(special), None)
        order = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
        if self.max_tokens is not None:
            order = order[:max(self.max_tokens - self._num_special, 0)]
        vocab = [token for token, _ in order]
        self._vocab = vocab
        self._index = {t: i + self._num_special for i, t in enumerate(vocab)}
        if self.output_mode == "tf_idf":
            weights = np.log1p(num_docs / (1.0 + np.asarray([doc_counts[t] for t in vocab], dtype=np.float64)))
            self._set_idf(weights.astype(np.float32))
        self.built = True

    def _tokens_for_adapt(self, batch: np.ndarray) -> list:
        """The tokens of a batch as documents (rows; a 1-D batch is one row per element, as Keras)."""
        rows = batch.reshape(-1, 1) if batch.ndim <= 1 else batch.reshape(batch.shape[0], -1)
        return [row.tolist() for row in rows]

    # ----- calling -------------------------------------------------------------------------
    def _cast_inputs(self, inputs: Any) -> Any:
        return inputs  # strings and integer ids pass through untouched

    def _lookup(self, array: np.ndarray) -> np.ndarray:
        flat = array.reshape(-1)
        keys = [self._key(t) for t in flat.tolist()]
        out = np.empty(len(keys), dtype=np.int64)
        missing = []
        mask_key = self._key(self.mask_token) if self.mask_token is not None else None
        for position, key in enumerate(keys):
            if mask_key is not None and key == mask_key:
                out[position] = 0
                continue
            index = self._index.get(key)
            if index is None:
                missing.append(position)
                out[position] = -1
            else:
                out[position] = index
        if missing:
            if self.num_oov_indices == 0:
                examples = sorted({self._public(keys[p]) for p in missing[:5]}, key=str)
                raise ValueError(f"{type(self).__name__}: with num_oov_indices=0 every input must be in the "
                                 f"vocabulary, but got {examples}. Add them or allow OOV indices.")
            start = 1 if self.mask_token is not None else 0
            if self.num_oov_indices == 1:
                out[missing] = start
            else:
                out[missing] = start + self._hash_oov(np.asarray([keys[p] for p in missing], dtype=object))
        return out.reshape(array.shape)

    def _invert(self, array: np.ndarray) -> Any:
        table = self.get_vocabulary()
        ids = np.asarray(array, dtype=np.int64)
        out = np.empty(ids.size, dtype=object)
        for position, index in enumerate(ids.reshape(-1).tolist()):
            out[position] = self._inverted_token(table[index] if 0 <= index < len(table) else self.oov_token)
        return self._inverted_output(out.reshape(ids.shape))

    def _inverted_token(self, token: Any) -> Any:
        return token

    def _inverted_output(self, tokens: np.ndarray) -> Any:
        return tokens

    def _output_width(self) -> int:
        return self.max_tokens if self.pad_to_max_tokens else self.vocabulary_size()

    def _encode(self, indices: np.ndarray) -> torch.Tensor:
        """Turns int indices into the output mode (the token axis is the last one for the bag modes)."""
        ids = torch.from_numpy(np.ascontiguousarray(indices))
        if self.output_mode == "int":
            return ids
        width = self._output_width()
        if self.output_mode == "one_hot":
            if ids.dim() >= 2 and ids.shape[-1] == 1:
                ids = ids.squeeze(-1)  # Keras: a trailing axis of 1 is the token itself
            return torch.nn.functional.one_hot(ids, width).to(torch.int64)
        rows = ids.reshape(1, -1) if ids.dim() <= 1 else ids.reshape(-1, ids.shape[-1])
        counts = torch.zeros(rows.shape[0], width, dtype=torch.int64)
        counts.scatter_add_(1, rows, torch.ones_like(rows))
        out_shape = (width,) if ids.dim() <= 1 else tuple(ids.shape[:-1]) + (width,)
        if self.output_mode == "multi_hot":
            return (counts > 0).to(torch.int64).reshape(out_shape)
        if self.output_mode == "count":
            return counts.reshape(out_shape)
        if self._idf is None:
            raise ValueError(f"{type(self).__name__}: output_mode='tf_idf' needs idf weights: call adapt() or "
                             "pass vocabulary and idf_weights.")
        idf = torch.zeros(width, dtype=torch.float32)
        idf[:len(self._idf)] = torch.from_numpy(self._idf)
        return (counts.to(torch.float32) * idf).reshape(out_shape)

    def call(self, inputs: Any) -> Any:
        array = _to_array(inputs)
        if not self._vocab and self.vocabulary_size() == 0:
            raise ValueError(f"Layer '{self.name}' has no vocabulary: pass vocabulary= or call adapt() first.")
        if self.invert:
            if array.dtype.kind not in "iu":
                raise ValueError(f"Layer '{self.name}' (invert=True) maps integer indices back to tokens, but got "
                                 f"an array of dtype {array.dtype}.")
            return self._invert(array)
        return self._encode(self._lookup(array))

    def get_config(self) -> dict:
        return {**super().get_config(), "invert": self.invert, "max_tokens": self.max_tokens,
                "num_oov_indices": self.num_oov_indices, "oov_token": self.oov_token,
                "mask_token": self.mask_token, "output_mode": self.output_mode, "sparse": self.sparse,
                "pad_to_max_tokens": self.pad_to_max_tokens,
                "idf_weights": None if self._idf is None else self._idf[self._num_special:].tolist(),
                "vocabulary": self.get_vocabulary(include_special_tokens=False),
                "vocabulary_size": self.vocabulary_size()}

    @classmethod
    def from_config(cls, config: dict) -> "Layer":
        config = dict(config)
        config.pop("vocabulary_size", None)
        if not config.get("vocabulary"):
            config["vocabulary"] = None
        return cls(**config)


class StringLookup(_IndexLookup):
    """Maps strings to integer indices (or back with `invert=True`), as `tf.keras.layers.StringLookup`.

    Inputs are NumPy arrays of str/bytes (object arrays, as tf.data gives here) or lists; outputs are int64
    torch tensors ('int', 'one_hot', 'multi_hot', 'count') or float32 ('tf_idf'); inverted outputs are NumPy
    object arrays of bytes (what a tf.string tensor's .numpy() holds).

    >>> StringLookup(vocabulary=["a", "b", "c"])(np.array([["a", "q", "c"]])).tolist()
    [[1, 0, 3]]
    """

    def __init__(self, max_tokens: Optional[int] = None, num_oov_indices: int = 1, mask_token: Optional[str] = None,
                 oov_token: str = "[UNK]", vocabulary: Any = None, idf_weights: Any = None, invert: bool = False,
                 output_mode: str = "int", pad_to_max_tokens: bool = False, sparse: bool = False,
                 encoding: str = "utf-8", **kwargs: Any) -> None:
        self.encoding = encoding
        super().__init__(max_tokens, num_oov_indices, mask_token, oov_token, vocabulary, idf_weights, invert,
                         output_mode, pad_to_max_tokens, sparse, **kwargs)

    def _key(self, token: Any) -> bytes:
        if isinstance(token, bytes):
            return token
        if isinstance(token, str):
            return token.encode(self.encoding)
        raise TypeError(f"{type(self).__name__}: expected strings, got {token!r} of type {type(token).__name__}. "
                        "Use IntegerLookup for integer ids.")

    def _public(self, key: bytes) -> str:
        return key.decode(self.encoding)

    def _hash_oov(self, keys: np.ndarray) -> np.ndarray:
        # as TF (tf.strings.to_hash_bucket_fast): FarmHash Fingerprint64 of the UTF-8 bytes, mod the bucket count
        from torchstrategy._machinery.farmhash import hash_bucket

        return np.asarray([hash_bucket(key, self.num_oov_indices) for key in keys.tolist()], dtype=np.int64)

    def _inverted_token(self, token: Any) -> bytes:
        return self._key(token)

    def get_config(self) -> dict:
        return {**super().get_config(), "encoding": self.encoding}


class IntegerLookup(_IndexLookup):
    """Maps integer ids to contiguous indices (or back with `invert=True`), as `tf.keras.layers.IntegerLookup`.

    The OOV token is -1 and there is no mask token by default; with several OOV indices an unknown id x
    goes to bucket `x mod num_oov_indices` (Keras's floormod).

    >>> IntegerLookup(vocabulary=[12, 36, 1138])(np.array([[12, 1138, 42]])).tolist()
    [[1, 3, 0]]
    """

    def __init__(self, max_tokens: Optional[int] = None, num_oov_indices: int = 1, mask_token: Optional[int] = None,
                 oov_token: int = -1, vocabulary: Any = None, vocabulary_dtype: str = "int64",
                 idf_weights: Any = None, invert: bool = False, output_mode: str = "int",
                 pad_to_max_tokens: bool = False, sparse: bool = False, **kwargs: Any) -> None:
        if vocabulary_dtype not in ("int32", "int64"):
            raise ValueError(f"IntegerLookup: vocabulary_dtype must be 'int32' or 'int64', got {vocabulary_dtype!r}.")
        self.vocabulary_dtype = vocabulary_dtype
        super().__init__(max_tokens, num_oov_indices, mask_token, oov_token, vocabulary, idf_weights, invert,
                         output_mode, pad_to_max_tokens, sparse, **kwargs)

    def _key(self, token: Any) -> int:
        if isinstance(token, (bool, np.bool_)) or not isinstance(token, (int, np.integer)):
            raise TypeError(f"IntegerLookup: expected integer ids, got {token!r} of type {type(token).__name__}. "
                            "Use StringLookup for strings.")
        return int(token)

    def _public(self, key: int) -> int:
        return key

    def _hash_oov(self, keys: np.ndarray) -> np.ndarray:
        return np.asarray([k % self.num_oov_indices for k in keys.tolist()], dtype=np.int64)

    def _inverted_output(self, tokens: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(tokens.astype(np.int64))

    def get_config(self) -> dict:
        return {**super().get_config(), "vocabulary_dtype": self.vocabulary_dtype}


def _standardize_lower(text: str) -> str:
    return text.lower()


def _strip_punctuation(text: str) -> str:
    return _PUNCTUATION.sub("", text)


_STANDARDIZERS: dict = {
    None: (),
    "lower": (_standardize_lower,),
    "strip_punctuation": (_strip_punctuation,),
    "lower_and_strip_punctuation": (_standardize_lower, _strip_punctuation),
}


class TextVectorization(Layer):
    """Strings to token indices or bags of tokens, as `tf.keras.layers.TextVectorization`.

    standardize: None, 'lower', 'strip_punctuation', 'lower_and_strip_punctuation' (ASCII punctuation, as
    Keras) or a callable str -> str. split: None, 'whitespace', 'character' or a callable str -> list of str.
    ngrams: None, n (all widths 1..n) or a tuple of widths; n-grams join tokens with a space.
    In 'int' mode the output is (batch, length) int64 with 0 padding up to `output_sequence_length` (or the
    longest row); the other modes give (batch, vocabulary) bags. Index 0 is the mask '' and 1 the OOV '[UNK]'
    in 'int' mode; the bag modes have no mask index.

    >>> layer = TextVectorization()
    >>> layer.adapt(["The cat sat.", "the dog"])
    >>> layer.get_vocabulary()
    ['', '[UNK]', 'the', 'sat', 'dog', 'cat']
    >>> layer(["the cat"]).tolist()
    [[2, 5]]
    """

    _float_policy_only = False

    def __init__(self, max_tokens: Optional[int] = None,
                 standardize: Union[None, str, Callable[[str], str]] = "lower_and_strip_punctuation",
                 split: Union[None, str, Callable[[str], Sequence[str]]] = "whitespace",
                 ngrams: Union[None, int, Sequence[int]] = None, output_mode: str = "int",
                 output_sequence_length: Optional[int] = None, pad_to_max_tokens: bool = False,
                 vocabulary: Any = None, idf_weights: Any = None, sparse: bool = False, ragged: bool = False,
                 encoding: str = "utf-8", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not (callable(standardize) or standardize in _STANDARDIZERS):
            raise ValueError(f"TextVectorization: standardize must be one of {[k for k in _STANDARDIZERS]} or a "
                             f"callable, got {standardize!r}.")
        if not (callable(split) or split in (None, "whitespace", "character")):
            raise ValueError("TextVectorization: split must be None, 'whitespace', 'character' or a callable, "
                             f"got {split!r}.")
        if isinstance(ngrams, int):
            if ngrams < 1:
                raise ValueError(f"TextVectorization: ngrams must be >= 1, got {ngrams}.")
            widths: tuple = tuple(range(1, ngrams + 1))
        elif ngrams is None:
            widths = (1,)
        else:
            widths = tuple(int(n) for n in ngrams)
            if not widths or min(widths) < 1:
                raise ValueError(f"TextVectorization: ngrams must hold widths >= 1, got {ngrams!r}.")
        if output_sequence_length is not None and output_mode != "int":
            raise ValueError("TextVectorization: output_sequence_length is only used with output_mode='int'.")
        if ragged:
            raise ValueError("TextVectorization: ragged=True is not supported here (no ragged tensors); pad "
                             "with output_sequence_length instead.")
        self.standardize, self.split, self.ngrams, self._widths = standardize, split, ngrams, widths
        self.output_mode, self.output_sequence_length = output_mode, output_sequence_length
        self.encoding = encoding
        self._lookup = StringLookup(max_tokens=max_tokens, num_oov_indices=1,
                                    mask_token="" if output_mode == "int" else None, oov_token="[UNK]",
                                    vocabulary=vocabulary, idf_weights=idf_weights, output_mode=output_mode,
                                    pad_to_max_tokens=pad_to_max_tokens, sparse=sparse, encoding=encoding)
        self.max_tokens, self.pad_to_max_tokens = max_tokens, bool(pad_to_max_tokens)

    def _cast_inputs(self, inputs: Any) -> Any:
        return inputs

    def _tokenize(self, text: Any) -> list:
        if isinstance(text, bytes):
            text = text.decode(self.encoding)
        if not isinstance(text, str):
            raise TypeError(f"Layer '{self.name}' expects strings, got {text!r} of type {type(text).__name__}.")
        steps = (self.standardize,) if callable(self.standardize) else _STANDARDIZERS[self.standardize]
        for step in steps:
            text = step(text)
        if self.split is None:
            tokens = [text]
        elif self.split == "whitespace":
            tokens = text.split()
        elif self.split == "character":
            tokens = list(text)
        else:
            tokens = list(self.split(text))
        if self._widths == (1,):
            return tokens
        grams = []  # as tf.strings.ngrams: all n-grams of the first width, then the next width...
        for width in self._widths:
            grams.extend(" ".join(tokens[i:i + width]) for i in range(len(tokens) - width + 1))
        return grams

    def _rows(self, inputs: Any) -> tuple[list, bool]:
        array = _to_array(inputs)
        if array.ndim == 2 and array.shape[1] == 1:
            array = array[:, 0]
        if array.ndim > 1:
            raise ValueError(f"Layer '{self.name}' expects a batch of strings, shape (batch,) or (batch, 1), got "
                             f"shape {array.shape}.")
        scalar = array.ndim == 0
        return [self._tokenize(t) for t in array.reshape(-1).tolist()], scalar

    def adapt(self, data: Any, batch_size: Optional[int] = None, steps: Optional[int] = None) -> None:
        """Builds the vocabulary from the tokens of `data` (most frequent first, ties by the larger token)."""
        docs: list = []
        for batch in _batches(data, steps):
            docs.extend(self._rows(batch)[0])
        _require_documents(self.name, docs)
        self._lookup._adapt_documents(docs)
        self.built = True

    def call(self, inputs: Any) -> torch.Tensor:
        if not self._lookup._vocab and self._lookup.vocabulary_size() == 0:
            raise ValueError(f"Layer '{self.name}' has no vocabulary: pass vocabulary= or call adapt() first.")
        if self.split is None and self.output_mode == "int" and self.output_sequence_length is None \
                and self._widths == (1,):
            # Keras: unsplit strings are single tokens, so the output keeps the input's shape
            array = _to_array(inputs)
            tokens = np.empty(array.size, dtype=object)
            tokens[:] = [self._tokenize(t)[0] for t in array.reshape(-1).tolist()]
            return torch.from_numpy(self._lookup._lookup(tokens).reshape(array.shape))
        rows, scalar = self._rows(inputs)
        if self.output_mode != "int":
            bags = [self._lookup._encode(self._lookup._lookup(np.asarray(row, dtype=object))) for row in rows]
            out = torch.stack(bags)
            return out[0] if scalar else out
        length = self.output_sequence_length
        if length is None:
            length = max((len(r) for r in rows), default=0)
        out = torch.zeros(len(rows), length, dtype=torch.int64)
        for i, row in enumerate(rows):
            ids = self._lookup._lookup(np.asarray(row[:length], dtype=object))
            out[i, :len(ids)] = torch.from_numpy(ids)
        return out[0] if scalar else out

    def get_vocabulary(self, include_special_tokens: bool = True) -> list:
        return self._lookup.get_vocabulary(include_special_tokens)

    def vocabulary_size(self) -> int:
        return self._lookup.vocabulary_size()

    def set_vocabulary(self, vocabulary: Any, idf_weights: Any = None) -> None:
        self._lookup.set_vocabulary(vocabulary, idf_weights)

    def get_config(self) -> dict:
        if callable(self.standardize) or callable(self.split):
            raise ValueError(f"Layer '{self.name}': a callable standardize/split cannot go into a config.")
        return {**super().get_config(), "max_tokens": self.max_tokens, "standardize": self.standardize,
                "split": self.split, "ngrams": self.ngrams, "output_mode": self.output_mode,
                "output_sequence_length": self.output_sequence_length, "pad_to_max_tokens": self.pad_to_max_tokens,
                "sparse": False, "ragged": False, "encoding": self.encoding,
                "vocabulary": self.get_vocabulary(include_special_tokens=False) or None,
                "idf_weights": (None if self._lookup._idf is None
                                else self._lookup._idf[self._lookup._num_special:].tolist())}

