"""`tf.debugging` on torch tensors: TF's eager assertions (values, ranks, shapes, dtypes) with TF's error types
and messages, check_numerics, enable_check_numerics and device-placement logging (torch function modes)."""
from __future__ import annotations

import sys
from typing import Any, Iterable, Optional

import numpy as np
import torch
from torch.overrides import TorchFunctionMode

from torchstrategy import _context
from torchstrategy.dtypes import as_dtype
from torchstrategy.errors import InvalidArgumentError


def _array(x: Any) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        x = x.detach().cpu()
        return x.float().numpy() if x.dtype == torch.bfloat16 else x.numpy()
    return np.asarray(x)


def _tensor(x: Any) -> torch.Tensor:
    return x if isinstance(x, torch.Tensor) else torch.as_tensor(np.asarray(x))


def _head(array: np.ndarray, summarize: Optional[int]) -> str:
    count = 3 if summarize is None else int(summarize)
    flat = array.reshape(-1)
    return f"First {min(count, flat.size)} elements of {{}}:\n{flat[:count]}"


def _compare(x: Any, y: Any, op: Any, symbol: str, message: Optional[str], summarize: Optional[int],
             show_indices: bool) -> None:
    a, b = _array(x), _array(y)
    try:
        holds = op(a, b)
    except ValueError:
        raise InvalidArgumentError(None, None, f"Incompatible shapes: {list(a.shape)} vs. {list(b.shape)}") from None
    if np.all(holds):
        return None
    lines = [message] if message else []
    lines.append(f"Condition x {symbol} y did not hold.")
    if show_indices and a.shape == b.shape:
        bad = np.argwhere(~np.asarray(holds))
        shown = bad[: (3 if summarize is None else int(summarize))]
        lines += [f"Indices of first {len(shown)} different values:", str(shown),
                  "Corresponding x values:", str(a[tuple(shown.T)]), "Corresponding y values:", str(b[tuple(shown.T)])]
    lines += [_head(a, summarize).format("x"), _head(b, summarize).format("y")]
    raise InvalidArgumentError(None, None, "\n".join(lines))


def assert_equal(x: Any, y: Any, message: Optional[str] = None, summarize: Optional[int] = None,
                 name: Optional[str] = None) -> None:
    """Raises InvalidArgumentError unless x == y element-wise (broadcasting)."""
    return _compare(x, y, np.equal, "==", message, summarize, True)


def assert_none_equal(x: Any, y: Any, summarize: Optional[int] = None, message: Optional[str] = None,
                      name: Optional[str] = None) -> None:
    """Raises InvalidArgumentError unless x != y element-wise."""
    return _compare(x, y, np.not_equal, "!=", message, summarize, True)


def assert_less(x: Any, y: Any, message: Optional[str] = None, summarize: Optional[int] = None,
                name: Optional[str] = None) -> None:
    """Raises InvalidArgumentError unless x < y element-wise."""
    return _compare(x, y, np.less, "<", message, summarize, False)


def assert_less_equal(x: Any, y: Any, message: Optional[str] = None, summarize: Optional[int] = None,
                      name: Optional[str] = None) -> None:
    """Raises InvalidArgumentError unless x <= y element-wise."""
    return _compare(x, y, np.less_equal, "<=", message, summarize, False)


def assert_greater(x: Any, y: Any, message: Optional[str] = None, summarize: Optional[int] = None,
                   name: Optional[str] = None) -> None:
    """Raises InvalidArgumentError unless x > y element-wise."""
    return _compare(x, y, np.greater, ">", message, summarize, False)


def assert_greater_equal(x: Any, y: Any, message: Optional[str] = None, summarize: Optional[int] = None,
                         name: Optional[str] = None) -> None:
    """Raises InvalidArgumentError unless x >= y element-wise."""
    return _compare(x, y, np.greater_equal, ">=", message, summarize, False)


def _sign(x: Any, op: Any, text: str, message: Optional[str], summarize: Optional[int]) -> None:
    a = _array(x)
    if np.all(op(a)):
        return None
    lines = [message] if message else [""]
    lines += [f"Condition x {text} did not hold element-wise:", f"x (shape={a.shape} dtype={a.dtype}) = ",
              str(a.reshape(-1)[: (3 if summarize is None else int(summarize))])]
    raise InvalidArgumentError(None, None, "\n".join(lines))


def assert_positive(x: Any, message: Optional[str] = None, summarize: Optional[int] = None,
                    name: Optional[str] = None) -> None:
    """Raises InvalidArgumentError unless every x > 0."""
    return _sign(x, lambda a: a > 0, "> 0", message, summarize)


def assert_negative(x: Any, message: Optional[str] = None, summarize: Optional[int] = None,
                    name: Optional[str] = None) -> None:
    """Raises InvalidArgumentError unless every x < 0."""
    return _sign(x, lambda a: a < 0, "< 0", message, summarize)


def assert_non_negative(x: Any, message: Optional[str] = None, summarize: Optional[int] = None,
                        name: Optional[str] = None) -> None:
    """Raises InvalidArgumentError unless every x >= 0."""
    return _sign(x, lambda a: a >= 0, ">= 0", message, summarize)


def assert_non_positive(x: Any, message: Optional[str] = None, summarize: Optional[int] = None,
                        name: Optional[str] = None) -> None:
    """Raises InvalidArgumentError unless every x <= 0."""
    return _sign(x, lambda a: a <= 0, "<= 0", message, summarize)


def _tolerance(dtype: np.dtype) -> float:
    return 10 * float(np.finfo(dtype).eps) if np.issubdtype(dtype, np.floating) else 0.0


def assert_near(x: Any, y: Any, rtol: Any = None, atol: Any = None, message: Optional[str] = None,
                summarize: Optional[int] = None, name: Optional[str] = None) -> None:
    """Raises InvalidArgumentError unless |x - y| <= atol + rtol * |y| element-wise; both tolerances default
    to 10 * eps of the dtype (1.19e-6 for float32)."""
    a, b = _array(x), _array(y)
    dtype = a.dtype if np.issubdtype(a.dtype, np.floating) else np.dtype(np.float32)
    rtol = _tolerance(dtype) if rtol is None else float(rtol)
    atol = _tolerance(dtype) if atol is None else float(atol)
    if np.all(np.abs(a - b) <= atol + rtol * np.abs(b)):
        return None
    prefix = f"{message}\n" if message else ""
    raise InvalidArgumentError(None, None, f"{prefix}x and y not equal to tolerance rtol = {rtol}, atol = {atol}\n"
                               f"x (shape={a.shape} dtype={a.dtype}) = \n{a.reshape(-1)[:summarize or 3]}\n"
                               f"y (shape={b.shape} dtype={b.dtype}) = \n{b.reshape(-1)[:summarize or 3]}")


def assert_all_finite(x: Any, message: str, name: Optional[str] = None) -> torch.Tensor:
    """Returns x, raising InvalidArgumentError '<message> : Tensor had NaN/Inf values' if it has any."""
    return check_numerics(x, message)


def check_numerics(tensor: Any, message: str, name: Optional[str] = None) -> torch.Tensor:
    """Returns the floating-point `tensor` unchanged, or raises InvalidArgumentError naming NaN or Inf."""
    value = _tensor(tensor)
    if not (value.is_floating_point() or value.is_complex()):
        raise TypeError(f"tf.debugging.check_numerics needs a floating point tensor, got {value.dtype}.")
    if torch.isnan(value).any():
        raise InvalidArgumentError(None, None, f"{message} : Tensor had NaN values")
    if torch.isinf(value).any():
        raise InvalidArgumentError(None, None, f"{message} : Tensor had Inf values")
    return tensor


def _rank_error(x: Any, text: str, message: Optional[str]) -> ValueError:
    shape = tuple(_tensor(x).shape)
    prefix = f"{message}  " if message else ""
    return ValueError(f"{prefix}Tensor  must have rank {text}.  Received rank {len(shape)}, shape {shape}")


def assert_rank(x: Any, rank: int, message: Optional[str] = None, name: Optional[str] = None) -> None:
    """Raises ValueError unless x has rank `rank`."""
    if _tensor(x).dim() != int(rank):
        raise _rank_error(x, str(int(rank)), message)


def assert_rank_at_least(x: Any, rank: int, message: Optional[str] = None, name: Optional[str] = None) -> None:
    """Raises ValueError unless x has rank >= `rank`."""
    if _tensor(x).dim() < int(rank):
        raise _rank_error(x, f"at least {int(rank)}", message)


def assert_rank_in(x: Any, ranks: Iterable[int], message: Optional[str] = None, name: Optional[str] = None) -> None:
    """Raises ValueError unless x's rank is one of `ranks`."""
    ranks = tuple(int(r) for r in ranks)
    if _tensor(x).dim() not in ranks:
        raise _rank_error(x, f"in {ranks}", message)


def assert_scalar(tensor: Any, message: Optional[str] = None, name: Optional[str] = None) -> Any:
    """Returns `tensor` if it is a scalar, else raises ValueError."""
    shape = tuple(_tensor(tensor).shape)
    if shape:
        raise ValueError(f"{message + '  ' if message else ''}Expected scalar shape, saw shape: {shape}.")
    return tensor


def assert_type(tensor: Any, tf_type: Any, message: Optional[str] = None, name: Optional[str] = None) -> None:
    """Raises TypeError unless the tensor's dtype is `tf_type`."""
    expected, actual = as_dtype(tf_type), _tensor(tensor).dtype
    if actual != expected:
        prefix = f"{message}, " if message else ""
        raise TypeError(f"{prefix}tensor must be of type {expected}; got {actual}")


def assert_integer(x: Any, message: Optional[str] = None, name: Optional[str] = None) -> None:
    """Raises TypeError unless x has an integer dtype."""
    dtype = _tensor(x).dtype
    if dtype.is_floating_point or dtype.is_complex or dtype == torch.bool:
        prefix = f"{message}  " if message else ""
        raise TypeError(f'{prefix}Expected "x" to be integer type.  Found: tensor of dtype {dtype}')


def is_numeric_tensor(tensor: Any) -> bool:
    """Whether `tensor` is a torch tensor of a numeric (not bool) dtype."""
    return isinstance(tensor, torch.Tensor) and tensor.dtype != torch.bool


def assert_proper_iterable(values: Any) -> None:
    """Raises TypeError unless `values` is an iterable that is not a tensor, array or string."""
    if isinstance(values, (torch.Tensor, np.ndarray, str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f'Expected argument "values" to be a "proper" iterable.  Found: {type(values)}')


def assert_same_float_dtype(tensors: Any = None, dtype: Any = None) -> torch.dtype:
    """The one floating dtype of `tensors` (and `dtype`), float32 when neither says; ValueError otherwise."""
    expected = None if dtype is None else as_dtype(dtype)
    for tensor in tensors or []:
        actual = _tensor(tensor).dtype
        if expected is None:
            expected = actual
        elif actual != expected:
            raise ValueError(f"{tensor}, type={actual}, must be of the same type ({expected}).")
    if expected is None:
        return torch.float32
    if not expected.is_floating_point:
        raise ValueError(f"Expected floating point type, got {expected}.")
    return expected


def assert_shapes(shapes: Any, data: Any = None, summarize: Optional[int] = None, message: Optional[str] = None,
                  name: Optional[str] = None) -> None:
    """Checks (tensor, shape) pairs: ints are sizes, equal strings are equal sizes across all tensors, None or
    '.' any size, a leading '*' or ... any outer axes. Raises ValueError at the first violation."""
    pairs = list(shapes.items()) if isinstance(shapes, dict) else list(shapes)
    sizes: dict = {}
    for tensor, spec in pairs:
        shape = tuple(_tensor(tensor).shape) or (1,)  # scalars count as [1], as TF
        spec = list(spec)
        inner = bool(spec) and (spec[0] is Ellipsis or spec[0] == "*")
        spec = spec[1:] if inner else spec
        spec = spec or [1]
        prefix = f"{message}  " if message else ""
        if (inner and len(shape) < len(spec)) or (not inner and len(shape) != len(spec)):
            raise ValueError(f"{prefix}Specified by tensor shape={shape} ... wrong rank: expected "
                             f"{'at least ' if inner else ''}{len(spec)}, got {len(shape)}.")
        actual = shape[len(shape) - len(spec):]
        for axis, (symbol, size) in enumerate(zip(spec, actual)):
            if symbol is None or symbol == ".":
                continue
            if isinstance(symbol, (int, np.integer)) or (isinstance(symbol, str) and symbol.lstrip("-").isdigit()):
                want, where = int(symbol), "as specified"
            elif symbol in sizes:
                want, where = sizes[symbol]
            else:
                sizes[symbol] = (size, f"Specified by tensor shape={shape} dimension {axis}.")
                continue
            if size != want:
                raise ValueError(f"{prefix}{where}  Tensor shape={shape} dimension {axis} must have size {want}.  "
                                 f"Received size {size}, shape {shape}")


def Assert(condition: Any, data: Any, summarize: Optional[int] = None, name: Optional[str] = None) -> None:
    """Raises InvalidArgumentError listing `data` when `condition` is False."""
    if bool(_array(condition)):
        return None
    shown = []
    for item in data:
        if isinstance(item, (str, bytes)):
            shown.append(repr(item.encode() if isinstance(item, str) else item))
        else:
            shown.append(", ".join(str(v) for v in _array(item).reshape(-1)[: summarize or 3]))
    raise InvalidArgumentError(None, None, f"Expected '{bool(_array(condition))}' to be true. Summarized data: " + "\n".join(shown))


# ----- process-wide modes ----------------------------------------------------------------------------------
class _DebugMode(TorchFunctionMode):
    """While entered, checks torch operations' floating-point outputs for Inf/NaN and/or logs their devices,
    as the 'check_numerics' and 'log_device_placement' settings say (torch disables the mode inside)."""

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: Optional[dict] = None) -> Any:
        result = func(*args, **(kwargs or {}))
        outputs = result if isinstance(result, (tuple, list)) else (result,)
        name = getattr(func, "__name__", str(func))
        if _context.keyed_setting("debug", "check_numerics"):
            for index, output in enumerate(outputs):
                if isinstance(output, torch.Tensor) and output.is_floating_point() and output.numel() \
                        and not bool(torch.isfinite(output).all()):
                    _report_numerics(name, index, len(outputs), output)
        if _context.keyed_setting("debug", "log_device_placement") and isinstance(result, torch.Tensor):
            print(f"Executing op {name} in device {result.device}", file=sys.stderr)
        return result


def _report_numerics(name: str, index: int, count: int, output: torch.Tensor) -> None:
    counts = {"-Inf": int((output == float("-inf")).sum()), "+Inf": int((output == float("inf")).sum()),
              "NaN": int(torch.isnan(output).sum())}
    found = "\n".join(f"  # of {kind} elements: {number}" for kind, number in counts.items() if number)
    raise InvalidArgumentError(None, None, f"\n\n!!! Detected Infinity or NaN in output {index} of eagerly-executing op "
                               f"\"{name}\" (# of outputs: {count}) !!!\n  dtype: {output.dtype}\n  shape: "
                               f"{tuple(output.shape)}\n{found}\n")


def _set_mode(key: str, enabled: bool) -> None:
    _context.set_keyed_setting("debug", key, True if enabled else None)
    active = _context.keyed_setting("debug", "torch_function_mode")
    wanted = bool(_context.keyed_setting("debug", "check_numerics") or _context.keyed_setting("debug", "log_device_placement"))
    if wanted and active is None:
        mode = _DebugMode()
        mode.__enter__()
        _context.set_keyed_setting("debug", "torch_function_mode", mode)
    elif not wanted and active is not None:
        active.__exit__(None, None, None)
        _context.set_keyed_setting("debug", "torch_function_mode", None)


def enable_check_numerics(stack_height_limit: int = 30, path_length_limit: int = 50) -> None:
    """From now on (in this thread), every torch operation whose floating-point output holds Inf or NaN raises
    InvalidArgumentError naming the operation and the counts. The limits only shape TF's stack report."""
    _set_mode("check_numerics", True)


def disable_check_numerics() -> None:
    """Stops what enable_check_numerics started (no effect if it is off)."""
    _set_mode("check_numerics", False)


def set_log_device_placement(enabled: bool) -> None:
    """Prints 'Executing op <name> in device <device>' to stderr for every torch operation while enabled."""
    _set_mode("log_device_placement", bool(enabled))


def get_log_device_placement() -> bool:
    """Whether set_log_device_placement is on."""
    return _context.keyed_setting("debug", "log_device_placement") is not None


def enable_traceback_filtering() -> None:
    """Accepted for TF compatibility: torchstrategy never filters tracebacks, so this only records the setting."""
    _context.set_keyed_setting("debug", "traceback_filtering", True)


def disable_traceback_filtering() -> None:
    """Records that traceback filtering is off (tracebacks are never filtered here)."""
    _context.set_keyed_setting("debug", "traceback_filtering", False)


def is_traceback_filtering_enabled() -> bool:
    """The setting recorded by enable/disable_traceback_filtering (True by default, as TF)."""
    setting = _context.keyed_setting("debug", "traceback_filtering")
    return True if setting is None else bool(setting)


class experimental:  # noqa: N801 - tf.debugging.experimental's namespace
    """tf.debugging.experimental: the tfdbg v2 dumps, which are not provided (torch has no TF debugger events)."""

    @staticmethod
    def enable_dump_debug_info(dump_root: str, tensor_debug_mode: str = "NO_TENSOR", circular_buffer_size: int = 1000,
                               op_regex: Optional[str] = None, tensor_dtypes: Any = None) -> None:
        """Refused: TF's Debugger V2 dump format is not written; use tf.debugging.enable_check_numerics, or
        torch.autograd.set_detect_anomaly(True) for the backward pass."""
        raise NotImplementedError("tf.debugging.experimental.enable_dump_debug_info (Debugger V2 dumps) is not "
                                  "provided; use tf.debugging.enable_check_numerics() to stop at the first op "
                                  "that makes Inf/NaN, or torch.autograd.set_detect_anomaly(True).")

    @staticmethod
    def disable_dump_debug_info() -> None:
        """No dump is ever enabled, so there is nothing to disable."""
