"""Keras 3.15's quantized dtype policies: `<mode>_from_<source policy>` names (int8, float8, int4[/block],
gptq/<bits>/<group>, awq/<bits>/<group>) that compute like their source policy and mark a layer as quantized."""
from __future__ import annotations

from typing import Any, Optional

from torchstrategy.keras.dtype_policies import QUANTIZATION_MODES, DTypePolicy, _parse_name, global_policy


class QuantizedDTypePolicy(DTypePolicy):
    """A quantized layer's policy: `mode` ('int8', 'int4', ...) on top of a float `source_name` policy, whose
    compute and variable dtypes it keeps. Its name is '<mode>_from_<source_name>'.

    >>> policy = QuantizedDTypePolicy("int8", "mixed_bfloat16")
    >>> policy.name, policy.compute_dtype, policy.variable_dtype, policy.quantization_mode
    ('int8_from_mixed_bfloat16', 'bfloat16', 'float32', 'int8')
    """

    __slots__ = ("_mode", "_source_name", "__dict__")

    def __init__(self, mode: str, source_name: Optional[str] = None) -> None:
        if source_name is None:  # Keras: the global policy's name
            source_name = global_policy().name
        _, self._compute, self._variable = _parse_name(source_name)
        if mode not in QUANTIZATION_MODES:
            raise ValueError(f"Invalid quantization mode. Expected one of {QUANTIZATION_MODES}. Received: mode={mode}")
        if mode == "int8" and self.compute_dtype == "float16":
            raise ValueError(f"Quantization mode='{mode}' doesn't work well with compute_dtype='float16'.")
        self._name = f"{mode}_from_{source_name}"
        self._mode = mode
        self._source_name = source_name

    @property
    def quantization_mode(self) -> str:
        """'int8', 'float8', 'int4', 'gptq' or 'awq'."""
        return self._mode

    def get_config(self) -> dict:
        """{'mode': ..., 'source_name': ...}, what the constructor takes."""
        return {"mode": self._mode, "source_name": self._source_name}

    def __eq__(self, other: Any) -> bool:
        return super().__eq__(other) and self.get_config() == other.get_config()

    __hash__ = DTypePolicy.__hash__


class QuantizedFloat8DTypePolicy(QuantizedDTypePolicy):
    """The float8 policy; `amax_history_length` is the length of the abs-max history float8 training keeps."""

    default_amax_history_length = 1024

    def __init__(self, mode: str, source_name: Optional[str] = None, amax_history_length: int = 1024) -> None:
        super().__init__(mode=mode, source_name=source_name)
        if not isinstance(amax_history_length, int):
            raise TypeError(f"`amax_history_length` must be an integer. Received: amax_history_length="
                            f"{amax_history_length}")
        self._amax_history_length = amax_history_length

    @property
    def amax_history_length(self) -> int:
        """How many past abs-max values the float8 scales are computed from."""
        return self._amax_history_length

    def get_config(self) -> dict:
        return {**super().get_config(), "amax_history_length": self._amax_history_length}

    __hash__ = DTypePolicy.__hash__


def _split_mode(cls_name: str, mode: Any, base: str, fields: tuple) -> list:
    """The integers of a '<base>/<a>[/<b>]' mode, or Keras's error naming the expected format."""
    expected = "'" + "/".join([base] + [f"<{f}>" for f in fields]) + "'"
    parts = mode.split("/") if isinstance(mode, str) else []
    if len(parts) != len(fields) + 1 or parts[0] != base:
        raise ValueError(f"Invalid mode for {cls_name}. Expected format {expected}, but got '{mode}'.")
    try:
        return [int(p) for p in parts[1:]]
    except ValueError:
        which = " and ".join(f"<{f}>" for f in fields)
        verb = "must be integers" if len(fields) > 1 else "must be an integer"
        raise ValueError(f"Invalid mode for {cls_name}. {which} {verb}. Expected format {expected}, "
                         f"but got '{mode}'.") from None


def _check_group(size: int, what: str, negative_one: str, mode: str) -> None:
    if size < -1 or size == 0:
        raise ValueError(f"Invalid {what} in mode. Supported values are -1 ({negative_one}) or a positive "
                         f"integer{' (sub-channel)' if what == 'block_size' else ''}, but got {size} from '{mode}'.")


class Int4DTypePolicy(QuantizedDTypePolicy):
    """int4 with a block size: mode 'int4/<block_size>' (-1: one scale per output channel; n > 0: one scale
    and zero point per n input rows)."""

    def __init__(self, mode: str, source_name: Optional[str] = None) -> None:
        (block_size,) = _split_mode("Int4DTypePolicy", mode, "int4", ("block_size",))
        _check_group(block_size, "block_size", "per-channel", mode)
        super().__init__(mode="int4", source_name=source_name)
        self._name = f"{mode}_from_{self._source_name}"
        self.mode = "int4"
        self.block_size = block_size

    def get_config(self) -> dict:
        return {"mode": f"int4/{self.block_size}", "source_name": self._source_name}

    __hash__ = DTypePolicy.__hash__


class _GroupedPolicy(QuantizedDTypePolicy):
    """GPTQ/AWQ: mode '<base>/<weight_bits>/<group_size>'."""

    _base = ""
    _bits: tuple = ()
    _group_negative_one = ""

    def __init__(self, mode: str, source_name: Optional[str] = None) -> None:
        cls_name = type(self).__name__
        bits, group = _split_mode(cls_name, mode, self._base, ("weight_bits", "group_size"))
        if bits not in self._bits:
            if self._base == "awq":
                raise ValueError("Invalid weight_bits in mode. AWQ only supports 4-bit quantization, but got "
                                 f"{bits} from '{mode}'.")
            raise ValueError(f"Invalid weight_bits in mode. Supported values are 2, 3, 4, and 8, but got {bits} "
                             f"from '{mode}'.")
        _check_group(group, "group_size", self._group_negative_one, mode)
        super().__init__(mode=self._base, source_name=source_name)
        self._name = f"{mode}_from_{self._source_name}"
        self.mode = self._base
        self.weight_bits = bits
        self.group_size = group

    def get_config(self) -> dict:
        return {"mode": f"{self.mode}/{self.weight_bits}/{self.group_size}", "source_name": self._source_name}

    __hash__ = DTypePolicy.__hash__


class GPTQDTypePolicy(_GroupedPolicy):
    """The policy of a GPTQ-quantized layer: mode 'gptq/<weight_bits>/<group_size>' (bits 2, 3, 4 or 8).
    torchstrategy reads the policy; the GPTQ calibration itself is not implemented."""

    _base, _bits, _group_negative_one = "gptq", (2, 3, 4, 8), "whole-tensor"


class AWQDTypePolicy(_GroupedPolicy):
    """The policy of an AWQ-quantized layer: mode 'awq/4/<group_size>'. torchstrategy reads the policy; the
    AWQ calibration itself is not implemented."""

    _base, _bits, _group_negative_one = "awq", (4,), "per-channel"


def from_name(name: str) -> QuantizedDTypePolicy:
    """The policy a name such as 'int8_from_float32' or 'int4/128_from_bfloat16' spells (Keras's `get`)."""
    parts = name.split("_from_")
    if len(parts) != 2:
        raise ValueError("Cannot convert `policy` into a valid pair (`mode`, `source_name`) to instantiate "
                         f"`QuantizedDTypePolicy`. Received: policy={name}")
    mode, source = parts
    if mode.startswith("float8"):
        return QuantizedFloat8DTypePolicy(mode, source)
    if mode.startswith("gptq"):
        return GPTQDTypePolicy(mode, source)
    if mode.startswith("awq"):
        return AWQDTypePolicy(mode, source)
    if mode.startswith("int4") and "/" in mode:
        return Int4DTypePolicy(mode, source)
    return QuantizedDTypePolicy(mode, source)
