"""SipHash-2-4 and FingerprintCat64 against TF 2.21's numbers: tf.strings.to_hash_bucket_strong(key=[133, 137])
and tf.sparse.cross_hashed (default hash key), frozen below."""
from __future__ import annotations

import pytest

from torchstrategy._machinery.farmhash import fingerprint64
from torchstrategy._machinery.siphash import fingerprint_cat64, siphash24

# TF 2.21: tf.strings.to_hash_bucket_strong(words, 1000003, key=[133, 137])
STRONG = [(b"", 953272), (b"a", 554259), (b"hello", 73327), (b"abcdefgh", 676107),
          (b"abcdefghijklmnopqrstuvwxyz0123456789", 345918), (b"-17", 254593)]


@pytest.mark.parametrize("data,bucket", STRONG)
def test_siphash_matches_tf_strong_buckets(data, bucket):
    assert siphash24((133, 137), data) % 1000003 == bucket


def test_fingerprint_cat64_matches_tf_cross_hashed():
    key = 0xDECAFCAFFE  # TF's default hash_key of sparse.cross_hashed
    # TF 2.21: tf.sparse.cross_hashed([[["x"], ["y"]], [["p"], ["q"]]], num_buckets=1000003).values
    crossed = [fingerprint_cat64(fingerprint_cat64(key, fingerprint64(a)), fingerprint64(b)) % 1000003
               for a, b in ((b"x", b"p"), (b"y", b"q"))]
    assert crossed == [523611, 799189]
    # integer features enter as their own 64 bits: cross_hashed([[[3], [-5]] int64, [["p"], ["q"]]])
    crossed = [fingerprint_cat64(fingerprint_cat64(key, a & (2 ** 64 - 1)), fingerprint64(b)) % 1000003
               for a, b in ((3, b"p"), (-5, b"q"))]
    assert crossed == [84483, 7404]
