"""RemoteMonitor posts each epoch's logs to a local HTTP server (form field or JSON body, with headers), and
warns when the server cannot be reached."""
import http.server
import json
import threading
import urllib.parse

import pytest

from tests import _multiprocess as mp
from torchstrategy.keras.callbacks import RemoteMonitor


def _serve(received):
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"])).decode()
            received.append((self.path, self.headers.get("Content-Type"), self.headers.get("X-Run"), body))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer((mp.LOOPBACK, 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_posts_form_and_json():
    received = []
    server = _serve(received)
    root = f"http://{mp.LOOPBACK}:{server.server_address[1]}"
    try:
        RemoteMonitor(root=root, headers={"X-Run": "a"}).on_epoch_end(0, {"loss": 0.5})
        RemoteMonitor(root=root, path="/j", send_as_json=True).on_epoch_end(1, {"loss": 0.25})
    finally:
        server.shutdown()
    path, kind, run, body = received[0]
    assert path == "/publish/epoch/end/" and run == "a" and kind == "application/x-www-form-urlencoded"
    assert json.loads(urllib.parse.parse_qs(body)["data"][0]) == {"epoch": 0, "loss": 0.5}
    assert received[1][0] == "/j" and json.loads(received[1][3]) == {"epoch": 1, "loss": 0.25}


def test_unreachable_server_warns():
    with pytest.warns(UserWarning, match="Could not reach RemoteMonitor"):
        RemoteMonitor(root=f"http://{mp.LOOPBACK}:{mp.free_port()}").on_epoch_end(0, {})
