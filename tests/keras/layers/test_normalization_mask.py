"""BatchNormalization with a Keras mask: in training the batch moments (and so the moving statistics)
come from the unmasked positions only, as Keras 3's BatchNormalization.call(inputs, training, mask)."""
import numpy as np
import pytest
import torch

import torchstrategy as tf

keras = tf.keras

MASK = np.array([[1, 1, 0, 0], [1, 1, 1, 0], [1, 0, 0, 0]], bool)

# TF 2.21 / Keras 3: BatchNormalization(momentum=0.9)(x, training=True, mask=MASK), x as in _inputs().
TF_OUTPUT = [[[0.7384, 1.210965], [0.698953, -1.860838], [2.196184, 0.668473], [-1.559946, 0.863273]],
             [[0.78785, 0.448375], [-0.087568, 0.813533], [-2.079495, -0.212374], [-1.417144, 0.888902]],
             [[-0.05814, -0.399661], [-2.19787, -0.348679], [-0.140382, -0.375295], [3.208476, 1.478575]]]
TF_MOVING_MEAN = [0.11240946501493454, 0.09679799526929855]
TF_MOVING_VARIANCE = [0.9588786959648132, 1.0912810564041138]
# TF 2.21: Input -> Masking(0.0) -> BatchNormalization(momentum=0.5), called with training=True on x
# whose masked positions are zeroed.
TF_MODEL_MOVING_MEAN = [0.5620473027229309, 0.483989953994751]
TF_MODEL_MOVING_VARIANCE = [0.7943936586380005, 1.4564054012298584]


def _inputs():
    rng = np.random.default_rng(1)
    return rng.normal(size=(3, 4, 2)).astype("float32") * 2 + 1


def test_masked_batch_moments_match_tf_and_numpy():
    x = _inputs()
    layer = keras.layers.BatchNormalization(momentum=0.9)
    y = layer(torch.tensor(x), training=True, mask=torch.tensor(MASK))
    np.testing.assert_allclose(y.detach().numpy(), TF_OUTPUT, atol=1e-5)
    np.testing.assert_allclose(layer.moving_mean.detach().numpy(), TF_MOVING_MEAN, atol=1e-6)
    np.testing.assert_allclose(layer.moving_variance.detach().numpy(), TF_MOVING_VARIANCE, atol=1e-6)
    kept = x[MASK]  # (positions, features)
    np.testing.assert_allclose(layer.moving_mean.detach().numpy(), 0.1 * kept.mean(0), atol=1e-6)
    np.testing.assert_allclose(layer.moving_variance.detach().numpy(), 0.9 + 0.1 * kept.var(0), atol=1e-6)
    # Masked-out values do not move the statistics.
    other = x.copy()
    other[~MASK] = 100.0
    again = keras.layers.BatchNormalization(momentum=0.9)
    y_other = again(torch.tensor(other), training=True, mask=torch.tensor(MASK))
    np.testing.assert_allclose(again.moving_mean.detach().numpy(), layer.moving_mean.detach().numpy(), atol=1e-6)
    np.testing.assert_allclose(y_other.detach().numpy()[MASK], y.detach().numpy()[MASK], atol=1e-5)


def test_mask_reaches_batch_normalization_in_a_model():
    x = _inputs()
    x[~MASK] = 0.0
    inputs = keras.Input((4, 2))
    outputs = keras.layers.BatchNormalization(momentum=0.5)(keras.layers.Masking(0.0)(inputs))
    model = keras.Model(inputs, outputs)
    model(torch.tensor(x), training=True)
    layer = model.layers[-1]
    np.testing.assert_allclose(layer.moving_mean.detach().numpy(), TF_MODEL_MOVING_MEAN, atol=1e-6)
    np.testing.assert_allclose(layer.moving_variance.detach().numpy(), TF_MODEL_MOVING_VARIANCE, atol=1e-6)


def test_inference_ignores_the_mask_and_a_bad_mask_is_refused():
    x = torch.tensor(_inputs())
    layer = keras.layers.BatchNormalization()
    np.testing.assert_allclose(layer(x, training=False, mask=torch.tensor(MASK)).detach().numpy(),
                               layer(x, training=False).detach().numpy(), atol=1e-6)
    with pytest.raises(ValueError, match="one dimension less"):
        layer(x, training=True, mask=torch.tensor(MASK)[..., None])
