"""A small model-parallel example: keras.distribution.ModelParallel splits each Dense kernel over a
"model" mesh axis of two CPU processes (this script re-runs itself for the second one) and fits it."""
import argparse

import numpy as np

import torchstrategy as tf

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--samples", type=int, default=2048)
args = parser.parse_args()

keras = tf.keras
devices = ["cpu:0", "cpu:1"]  # one process per device; on GPUs: keras.distribution.list_devices("gpu")[:2]
mesh = keras.distribution.DeviceMesh(shape=(1, 2), axis_names=["batch", "model"], devices=devices)
layout_map = keras.distribution.LayoutMap(mesh)
layout_map["dense.*kernel"] = (None, "model")  # split the output units of every Dense over "model"
layout_map["dense.*bias"] = ("model",)
keras.distribution.set_distribution(keras.distribution.ModelParallel(layout_map=layout_map, batch_dim_name="batch"))

rng = np.random.default_rng(0)
x = rng.normal(size=(args.samples, 32)).astype(np.float32)
y = (x[:, :4].sum(axis=1) > 0).astype(np.int64)

tf.random.set_seed(0)
model = keras.Sequential([keras.layers.Dense(64, activation="relu", input_shape=(32,)),
                          keras.layers.Dense(64, activation="relu"), keras.layers.Dense(2)])
model.compile(optimizer=keras.optimizers.Adam(1e-3),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
history = model.fit(x, y, batch_size=128, epochs=args.epochs, verbose=0)

strategy = keras.distribution.distribution().strategy
kernel = model.layers[0].kernel
print(f"rank {strategy.process_rank}: dense kernel {tuple(kernel.shape)} holds local shard "
      f"{tuple(kernel.to_local().shape)}; final accuracy {history.history['accuracy'][-1]:.3f}", flush=True)
