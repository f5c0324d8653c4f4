"""Lion, Lamb, Ftrl, Adafactor, ScheduleFreeAdamW and Muon against Keras 3.15.1: three steps on two variables from
tools/tf_reference/keras_optimizers_reference.py, slot variable names and shapes, configs."""
import json
import os

import numpy as np
import pytest
import torch

from torchstrategy.keras import optimizers

REF = json.load(open(os.path.join(os.path.dirname(__file__), "keras_optimizers_reference.json")))


@pytest.mark.parametrize("case", REF["cases"], ids=[c["case"] for c in REF["cases"]])
def test_optimizer_matches_keras(case):
    w = torch.tensor(REF["w0"], requires_grad=True)
    b = torch.tensor(REF["b0"], requires_grad=True)
    opt = getattr(optimizers, case["cls"])(**case["kwargs"])
    tol = 1e-6
    for (gw, gb), (want_w, want_b) in zip(REF["grads"], case["steps"]):
        opt.apply_gradients([(torch.tensor(gw), w), (torch.tensor(gb), b)])
        np.testing.assert_allclose(w.detach().numpy(), np.asarray(want_w), rtol=tol, atol=tol)
        np.testing.assert_allclose(b.detach().numpy(), np.asarray(want_b), rtol=1e-6, atol=1e-6)
    assert int(opt.iterations) == 3
    # Keras's slot variables after iteration and learning_rate: their name suffixes and shapes, per variable
    keras_slots = [(path.split("/")[-1], shape) for path, shape in case["variables"][2:]]
    ours = opt.state
    for var, prefix in ((w, "w"), (b, "b")):
        wanted = [(name[len(prefix) + 1:] or None, shape) for name, shape in keras_slots
                  if name == prefix or name.startswith(prefix + "_")]
        got = [(None if key in ("r", "c") else key, list(value.shape)) for key, value in ours[var].items()]
        assert got == wanted, (got, wanted)
    config = opt.get_config()
    for key, value in case["config"].items():
        if key != "learning_rate":
            assert config[key] == value, (key, config[key], value)
    np.testing.assert_allclose(config["learning_rate"], case["config"]["learning_rate"], rtol=1e-6)


def test_string_names_and_round_trip():
    assert isinstance(optimizers.get("lion"), optimizers.Lion)
    opt = optimizers.deserialize(optimizers.serialize(optimizers.Ftrl(l1_regularization_strength=0.2)))
    assert opt.l1_regularization_strength == 0.2 and opt.name == "ftrl"


def test_bad_arguments_are_explained():
    with pytest.raises(ValueError, match="learning_rate_power"):
        optimizers.Ftrl(learning_rate_power=0.5)
    with pytest.raises(ValueError, match="beta_1"):
        optimizers.Lion(beta_1=0.0)
