"""FarmHash Fingerprint64 against TF's string hash buckets (every length branch of the hash)."""
from __future__ import annotations

from torchstrategy._machinery.farmhash import hash_bucket

# TF 2.21: tf.strings.to_hash_bucket_fast(token, 2**62) for token = bytes((i * 37 + n) % 256 for i in range(n))
TF_BUCKETS = {0: 1936946117179621455, 1: 550085751958558782, 2: 215211846435920116, 3: 1310518540512506342,
              4: 2487965632156106291, 7: 1834011893438859212, 8: 1428482587406394888, 9: 1664374829088625953,
              15: 2990431719963434756, 16: 4338871769482718964, 17: 2791110717120146389, 31: 2880757707219492424,
              32: 1776919087444487400, 33: 2327144085378135765, 63: 3615704755432282080, 64: 4137725029983933615,
              65: 3152597908303935062, 100: 715906929328513431, 127: 3500306444040047452,
              128: 4005342679790018254, 129: 1713424799565692504, 200: 4329847015183813352,
              300: 2427810959306735659}


def test_buckets_match_tensorflow_for_every_length_branch():
    for length, expected in TF_BUCKETS.items():
        token = bytes((i * 37 + length) % 256 for i in range(length))
        assert hash_bucket(token, 2 ** 62) == expected, length


def test_tf_strings_to_hash_bucket_fast_keeps_shape_and_refuses_numbers():
    import numpy as np
    import pytest
    import torchstrategy as tf

    tokens = [[bytes((i * 37 + n) % 256 for i in range(n)) for n in (3, 17)], [b"", b"x" * 70]]
    buckets = tf.strings.to_hash_bucket_fast(tokens, 2 ** 62)
    assert buckets.dtype == tf.int64 and tuple(buckets.shape) == (2, 2)
    assert int(buckets[0, 0]) == TF_BUCKETS[3] and int(buckets[0, 1]) == TF_BUCKETS[17]
    assert int(buckets[1, 0]) == TF_BUCKETS[0]
    with pytest.raises(TypeError, match="as_string"):
        tf.strings.to_hash_bucket_fast(np.arange(3), 5)
    with pytest.raises(ValueError, match="num_buckets"):
        tf.strings.to_hash_bucket_fast(["a"], 0)
