"""`tf.dtypes.experimental`: TF's narrow float and int dtypes that torch also has (float8 variants, int4/uint4,
int2/uint2); TF's float8_e4m3b11fnuz and float4_e2m1fn have no torch dtype and are not provided."""
from __future__ import annotations

import torch

float8_e4m3fn, float8_e5m2 = torch.float8_e4m3fn, torch.float8_e5m2
float8_e4m3fnuz, float8_e5m2fnuz = torch.float8_e4m3fnuz, torch.float8_e5m2fnuz
int4, uint4, int2, uint2 = torch.int4, torch.uint4, torch.int2, torch.uint2

__all__ = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "int4", "uint4", "int2", "uint2"]
