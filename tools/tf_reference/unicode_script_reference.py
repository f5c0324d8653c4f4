"""Freezes TF 2.21's tf.strings.unicode_script (tensorflow-cpu 2.21.0) for tests/test_strings_unicode.py:
the SHA-256 of its int32 results over every code point 0..U+10FFFF, a sample of code points with their results,
invalid inputs (-1 for values outside 0..U+10FFFF), and a ragged example.
Run: /work/tf-venv/bin/python tools/tf_reference/unicode_script_reference.py"""
from __future__ import annotations

import hashlib
import json
import os

import numpy as np
import tensorflow as tf

OUT = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "unicode_script_reference.json")


def main() -> None:
    every = np.arange(0, 0x110000, dtype=np.int32)
    scripts = tf.strings.unicode_script(every).numpy().astype("<i4")
    changes = np.nonzero(np.diff(scripts))[0] + 1  # first code point of each run of one script
    rng = np.random.RandomState(0)
    sample = np.unique(np.concatenate([every[::4001], changes, rng.choice(every, 300)]))
    edges = np.array([-1, -100, 0x110000, 0x7FFFFFFF, -0x80000000, 0xD800, 0xDFFF, 0x10FFFF], np.int32)
    words = ["Hello", "Привет", "こんにちは", "مرحبا", "Ελλάδα", "中文", "1+1=2", "🙂"]
    ragged = tf.strings.unicode_script(tf.strings.unicode_decode(words, "UTF-8"))
    reference = {
        "tf_version": tf.__version__,
        "sha256_all_code_points": hashlib.sha256(scripts.tobytes()).hexdigest(),
        "runs": int(changes.size + 1),
        "sample_code_points": sample.tolist(),
        "sample_scripts": scripts[sample].tolist(),
        "edge_inputs": edges.tolist(),
        "edge_scripts": tf.strings.unicode_script(edges).numpy().tolist(),
        "words": words,
        "words_scripts": ragged.to_list(),
        "matrix": [[65, 0x3B1], [0x5D0, 0x10FFFF]],
        "matrix_scripts": tf.strings.unicode_script([[65, 0x3B1], [0x5D0, 0x10FFFF]]).numpy().tolist(),
    }
    with open(OUT, "w") as handle:
        json.dump(reference, handle)


if __name__ == "__main__":
    main()
