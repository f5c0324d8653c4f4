"""`keras.callbacks.RemoteMonitor`: posts each epoch's logs to an HTTP server (Keras's form fields or JSON),
through the standard library's urllib; an unreachable server gives a warning, not an error."""
from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
import warnings
from typing import Any, Optional

import numpy as np

from torchstrategy.keras.callbacks.base import Callback, _to_python


class RemoteMonitor(Callback):
    """At each epoch end, POSTs `{'epoch': epoch, **logs}` to `root + path`: as the form field `field`
    holding that JSON, or with `send_as_json=True` as a JSON body; `headers` are added to the request."""

    def __init__(self, root: str = "http://localhost:9000", path: str = "/publish/epoch/end/", field: str = "data",
                 headers: Optional[dict] = None, send_as_json: bool = False) -> None:
        super().__init__()
        self.root = root
        self.path = path
        self.field = field
        self.headers = headers
        self.send_as_json = send_as_json

    def on_epoch_end(self, epoch: int, logs: Optional[dict] = None) -> None:
        send: dict[str, Any] = {"epoch": epoch}
        for key, value in (logs or {}).items():
            value = value.item() if isinstance(value, (np.ndarray, np.generic)) else _to_python(value)
            send[key] = value
        headers = dict(self.headers or {})
        if self.send_as_json:
            body = json.dumps(send).encode("utf-8")
            headers.setdefault("Content-Type", "application/json")
        else:
            body = urllib.parse.urlencode({self.field: json.dumps(send)}).encode("utf-8")
            headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
        request = urllib.request.Request(self.root + self.path, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                response.read()
        except (urllib.error.URLError, OSError):
            warnings.warn(f"Could not reach RemoteMonitor root server at {self.root}", stacklevel=2)
