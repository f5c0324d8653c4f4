"""Prints the TF 2.21 numbers frozen into tests/summary and tests/test_audio.py (run with /work/tf-venv, the
tensorboard package on PYTHONPATH: TF's tf.summary ops come from it). Not part of the test suite."""
import glob
import tempfile

import numpy as np
import tensorflow as tf
from tensorboard.backend.event_processing import event_file_loader

data = np.array([0.3, -1.2, 2.5, 0.0, 0.7, 1.1, -0.4, 2.5, 3.25, -1.2, 0.05, 1.9], np.float32)
logdir = tempfile.mkdtemp()
with tf.summary.create_file_writer(logdir).as_default(step=7):
    tf.summary.histogram("h", data, buckets=5)
    tf.summary.histogram("single", np.full(3, 1.5, np.float32), buckets=4)
for path in glob.glob(logdir + "/*"):
    for event in event_file_loader.EventFileLoader(path).Load():
        for value in event.summary.value:
            print(value.tag, tf.make_ndarray(value.tensor).tolist())

clip = np.array([[-1.0, 0.5], [-0.5, 0.25], [1.0, 1.5], [0.3, -2], [1 / 65534, -1 / 65534], [3 / 65534, 0.00002]],
                np.float32)
wav = tf.audio.encode_wav(clip, 16000).numpy()
print("wav", wav)
print("decoded", tf.audio.decode_wav(wav).audio.numpy().tolist())
