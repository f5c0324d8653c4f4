"""SwapEMAWeights: evaluate/predict run on the optimizer's EMA weights and the trained weights come back
afterwards; with swap_on_epoch the model ends fit holding the EMA weights; without use_ema a clear error."""
import numpy as np
import pytest

from torchstrategy import keras


def _model(use_ema=True):
    keras.utils.set_random_seed(1)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(keras.optimizers.SGD(0.1, use_ema=use_ema, ema_momentum=0.5), "mse")
    return model


X = np.random.default_rng(0).random((16, 3)).astype("float32")
Y = X.sum(1, keepdims=True)


def _averages(model):
    opt = model.optimizer
    return [opt.state[p]["average"].clone() for p in opt._all_params()]


def test_evaluate_and_predict_use_ema_weights_then_restore():
    model = _model()
    for start in range(0, 16, 4):  # train_on_batch: fit would end by copying the averages into the weights
        model.train_on_batch(X[start:start + 4], Y[start:start + 4])
    trained = [w.copy() for w in model.get_weights()]
    averages = _averages(model)
    assert not all(np.allclose(a.numpy(), w) for a, w in zip(averages, trained))
    callback = keras.callbacks.SwapEMAWeights()
    with_ema = model.predict(X, verbose=0, callbacks=[callback])
    loss_ema = model.evaluate(X, Y, verbose=0, callbacks=[callback])
    for got, want in zip(model.get_weights(), trained):  # the trained weights are back
        np.testing.assert_array_equal(got, want)
    kernel, bias = averages
    np.testing.assert_allclose(with_ema, X @ kernel.numpy() + bias.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(loss_ema, np.mean((X @ kernel.numpy() + bias.numpy() - Y) ** 2), rtol=1e-5)


def test_swap_on_epoch_leaves_ema_weights_in_model():
    model = _model()
    seen = []
    record = keras.callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: seen.append(_averages(model)))
    model.fit(X, Y, epochs=2, batch_size=4, verbose=0,
              callbacks=[record, keras.callbacks.SwapEMAWeights(swap_on_epoch=True)])
    for got, want in zip(model.get_weights(), seen[-1]):  # averages before the swap are the final weights
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-6)
    for got, average in zip(model.get_weights(), _averages(model)):
        np.testing.assert_array_equal(got, average.numpy())


def test_needs_use_ema():
    model = _model(use_ema=False)
    model.fit(X, Y, epochs=1, verbose=0)
    with pytest.raises(ValueError, match="use_ema=True"):
        model.evaluate(X, Y, verbose=0, callbacks=[keras.callbacks.SwapEMAWeights()])
