"""A TCP proxy on loopback that adds a round trip to every request it forwards: a real network, on one machine.

Each connection from the client is relayed to the upstream server. When the client starts sending after a pause
(a new HTTP request on a kept-alive connection, or the first one), the proxy waits ``delay`` before forwarding it,
so every request costs one more round trip of ``delay``, as it would to a bucket ``delay`` away. Bytes that
follow within ``_SAME_REQUEST`` (the rest of a large upload) pass at once. It counts the requests it delayed.
"""

from __future__ import annotations

import socket
import threading
import time

_SAME_REQUEST = 0.002  # bytes arriving within 2 ms of the previous ones belong to the same request


class DelayProxy:
    """Listens on 127.0.0.1 (``endpoint``) and relays to ``upstream_port``. ``close`` it."""

    def __init__(self, upstream_port: int, delay: float) -> None:
        self.delay = delay
        self.requests = 0
        self._upstream = ("127.0.0.1", upstream_port)
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self._closed = False
        threading.Thread(target=self._accept, name="delay-proxy", daemon=True).start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self._upstream)
            except OSError:
                client.close()
                continue
            for sock in (client, upstream):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self._pump, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, False), daemon=True).start()

    def _pump(self, source: socket.socket, target: socket.socket, delayed: bool) -> None:
        last = 0.0
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                now = time.monotonic()
                if delayed and now - last > _SAME_REQUEST:
                    with self._lock:
                        self.requests += 1
                    time.sleep(self.delay)
                last = time.monotonic()
                target.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, target):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                sock.close()

    def close(self) -> None:
        self._closed = True
        self._listener.close()
