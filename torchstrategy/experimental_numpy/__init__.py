"""`tf.experimental.numpy` ("tnp") on torch: NumPy's functions with NumPy's results and TF's dtype rules
(float64 for Python floats unless prefer_float32), returning torch tensors. Loaded on first use."""
from __future__ import annotations

import math as _math

import torch as _torch

from torchstrategy.experimental_numpy import random
from torchstrategy.experimental_numpy._dtypes import (
    bool_, complex64, complex128, complex_, finfo, float16, float32, float64, float_, iinfo, inexact, int8, int16,
    int32, int64, int_, issubdtype, object_, promote_types, result_type, string_, uint8, uint16, uint32, uint64,
    unicode_,
)
from torchstrategy.experimental_numpy.arithmetic import *  # noqa: F401,F403
from torchstrategy.experimental_numpy.config import experimental_enable_numpy_behavior
from torchstrategy.experimental_numpy.creation import *  # noqa: F401,F403
from torchstrategy.experimental_numpy.elementwise import *  # noqa: F401,F403
from torchstrategy.experimental_numpy.indexing import *  # noqa: F401,F403
from torchstrategy.experimental_numpy.products import *  # noqa: F401,F403
from torchstrategy.experimental_numpy.reductions import *  # noqa: F401,F403
from torchstrategy.experimental_numpy.manipulation import *  # noqa: F401,F403

#: tnp's array type: tnp results are torch tensors (TF's tnp.ndarray is tf.Tensor)
ndarray = _torch.Tensor
e, pi, inf = _math.e, _math.pi, _math.inf
newaxis = None
