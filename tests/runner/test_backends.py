"""runner.address where no Dask scheduler answers is one line and an error, whatever listens there."""

import http.server
import socket
import threading

import pytest

from dpbench.config import RunnerConfig
from dpbench.runner.backends import dask_client


def _silent_socket():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    return s, s.getsockname()[1]


class _QuietHandler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):  # the Dask handshake is a bad request to it: not worth a line in the test log
        pass


def _http_server():
    srv = http.server.HTTPServer(("127.0.0.1", 0), _QuietHandler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, srv.server_address[1]


@pytest.mark.parametrize("peer", [_silent_socket, _http_server], ids=["silent socket", "http server"])
def test_a_peer_that_is_not_a_scheduler_is_a_one_line_error(peer):
    handle, port = peer()
    runner = RunnerConfig(backend="dask", address=f"tcp://127.0.0.1:{port}", connect_timeout=1)
    with pytest.raises(ValueError, match=r"runner.address='tcp://127.0.0.1:\d+'") as err:
        with dask_client(runner):
            pass
    assert "\n" not in str(err.value)
    # not shutdown(): it would wait on the stalled request
    (handle.close if isinstance(handle, socket.socket) else handle.server_close)()
