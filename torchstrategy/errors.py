"""`tf.errors`: TF's exception classes (OpError and one subclass per status code) and the codes, raised by
the parts of torchstrategy that mirror a TF op's failure (end of an iterator, a corrupt record, a missing file)."""
from __future__ import annotations

from typing import Any

OK, CANCELLED, UNKNOWN, INVALID_ARGUMENT, DEADLINE_EXCEEDED, NOT_FOUND, ALREADY_EXISTS = 0, 1, 2, 3, 4, 5, 6
PERMISSION_DENIED, RESOURCE_EXHAUSTED, FAILED_PRECONDITION, ABORTED, OUT_OF_RANGE = 7, 8, 9, 10, 11
UNIMPLEMENTED, INTERNAL, UNAVAILABLE, DATA_LOSS, UNAUTHENTICATED = 12, 13, 14, 15, 16


class OpError(Exception):
    """A failed operation (tf.errors.OpError): `message`, `op`, `node_def`, `error_code`.

    Built as TF's: `OpError(node_def, op, message, error_code)`; each subclass as `NotFoundError(node_def, op,
    message)` (eager code passes None for node_def and op). A further argument is a dict of payloads.

    >>> try:
    ...     raise NotFoundError(None, None, "/data/train.csv not found")
    ... except OpError as error:
    ...     (error.message, error.error_code)
    ('/data/train.csv not found', 5)
    """

    _code = UNKNOWN

    def __init__(self, node_def: Any, op: Any, message: Any, error_code: Any, *args: Any) -> None:
        super().__init__(message)
        self._node_def, self._op, self._message = node_def, op, "" if message is None else str(message)
        self._error_code = self._code if error_code is None else int(error_code)
        payloads = args[0] if args else None
        if payloads is not None and not isinstance(payloads, dict):
            raise TypeError(f"{type(self).__name__}: the argument after the message is a dict of payloads; got "
                            f"{payloads!r}.")
        self._payloads = dict(payloads or {})

    @property
    def message(self) -> str:
        return self._message

    @property
    def op(self) -> Any:
        return self._op

    @property
    def node_def(self) -> Any:
        return self._node_def

    @property
    def error_code(self) -> int:
        return self._error_code

    @property
    def experimental_payloads(self) -> dict:
        return dict(self._payloads)

    def __str__(self) -> str:
        return self._message

    def __reduce__(self) -> Any:  # picklable across processes (closures, collectives)
        return (_rebuild, (type(self), self._node_def, self._op, self._message, self._error_code, self._payloads))


def _rebuild(cls: type, node_def: Any, op: Any, message: str, error_code: int, payloads: dict) -> OpError:
    error = cls.__new__(cls)
    OpError.__init__(error, node_def, op, message, error_code, payloads)
    return error


def _status_init(self: OpError, node_def: Any, op: Any, message: Any, *args: Any) -> None:
    """`XError(node_def, op, message)`: an OpError with the class's status code."""
    OpError.__init__(self, node_def, op, message, type(self)._code, *args)


def _error(name: str, code: int, doc: str, *bases: type) -> type:
    return type(name, (OpError, *bases), {"_code": code, "__doc__": doc, "__module__": __name__,
                                          "__init__": _status_init})


# Python's own exception types as second bases where they mean the same, so plain `except OSError`
# / `except ValueError` code keeps working; TF's `except tf.errors.X` works either way.
CancelledError = _error("CancelledError", CANCELLED, "An operation was cancelled.")
UnknownError = _error("UnknownError", UNKNOWN, "An error of no other kind.")
InvalidArgumentError = _error("InvalidArgumentError", INVALID_ARGUMENT,
                              "An operation got an argument it cannot use.", ValueError)
DeadlineExceededError = _error("DeadlineExceededError", DEADLINE_EXCEEDED, "A deadline passed.", TimeoutError)
NotFoundError = _error("NotFoundError", NOT_FOUND, "A file or other entity was not found.", FileNotFoundError)
AlreadyExistsError = _error("AlreadyExistsError", ALREADY_EXISTS, "The entity to create already exists.",
                            FileExistsError)
PermissionDeniedError = _error("PermissionDeniedError", PERMISSION_DENIED, "Not allowed.", PermissionError)
UnauthenticatedError = _error("UnauthenticatedError", UNAUTHENTICATED, "No valid credentials.")
ResourceExhaustedError = _error("ResourceExhaustedError", RESOURCE_EXHAUSTED, "Out of memory or another resource.")
FailedPreconditionError = _error("FailedPreconditionError", FAILED_PRECONDITION,
                                 "The system is not in the state the operation needs.")
AbortedError = _error("AbortedError", ABORTED, "An operation was aborted (e.g. a concurrent change).")
OutOfRangeError = _error("OutOfRangeError", OUT_OF_RANGE,
                         "Past the end: an iterator's get_next() after its last element.")
UnimplementedError = _error("UnimplementedError", UNIMPLEMENTED, "The operation is not implemented.",
                            NotImplementedError)
InternalError = _error("InternalError", INTERNAL, "An internal invariant broke.", RuntimeError)
UnavailableError = _error("UnavailableError", UNAVAILABLE, "A service (a task, a device) is unavailable.",
                          RuntimeError)
DataLossError = _error("DataLossError", DATA_LOSS, "Data is corrupt or lost (e.g. a bad record checksum).", OSError)


class OperatorNotAllowedInGraphError(TypeError):
    """TF raises this for Python control flow on graph tensors; eager torchstrategy never does."""


__all__ = ["OpError", "OperatorNotAllowedInGraphError", "CancelledError", "UnknownError", "InvalidArgumentError",
           "DeadlineExceededError", "NotFoundError", "AlreadyExistsError", "PermissionDeniedError",
           "UnauthenticatedError", "ResourceExhaustedError", "FailedPreconditionError", "AbortedError",
           "OutOfRangeError", "UnimplementedError", "InternalError", "UnavailableError", "DataLossError",
           "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
           "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
           "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"]
