"""A real local HTTP server for download tests: files with Range support, hub-like headers, and failures.

Routes (all under the server's root):
- ``/<repo>/resolve/<revision>/<file>``: redirects (302) to ``/cdn/<file>`` like the hub, sending the file's
  SHA256 as ``X-Linked-Etag`` on the redirect (unless ``linked_etag`` is set to ``False``: a hub that
  stops vouching for its files);
- ``/cdn/<file>`` and ``/files/<file>``: the bytes, honouring ``Range`` (206) and refusing a range past the
  end (416);
- ``/drop/<file>``: sends the headers and half the bytes, then closes the connection;
- ``/error/<code>``: answers that status;
- absolute-URI requests (``GET http://host/...``) are served as a forward proxy would, counted in ``proxied``.
"""

from __future__ import annotations

import hashlib
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit


class ModelServer:
    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files
        self.requests: list[tuple[str, str | None]] = []  # (path, Range header)
        self.proxied: list[str] = []
        self.linked_etag = True
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                path = self.path
                if path.startswith("http://"):
                    server.proxied.append(path)
                    path = urlsplit(path).path
                server.requests.append((path, self.headers.get("Range")))
                parts = path.strip("/").split("/")
                if parts[0] == "error":
                    self._send(int(parts[1]), b"error")
                elif "resolve" in parts:
                    name = parts[-1]
                    body = server.files.get(name)
                    if body is None:
                        self._send(404, b"not found")
                        return
                    self.send_response(302)
                    self.send_header("Location", f"/cdn/{name}")
                    if server.linked_etag:
                        self.send_header("X-Linked-Etag", f'"{hashlib.sha256(body).hexdigest()}"')
                    self.send_header("X-Linked-Size", str(len(body)))
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                elif parts[0] in ("cdn", "files", "drop"):
                    body = server.files.get(parts[-1])
                    if body is None:
                        self._send(404, b"not found")
                    else:
                        self._serve(body, drop=parts[0] == "drop")
                else:
                    self._send(404, b"not found")

            def _send(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _serve(self, body: bytes, drop: bool) -> None:
                start = 0
                wanted = self.headers.get("Range")
                if wanted and wanted.startswith("bytes="):
                    start = int(wanted[6:].split("-")[0])
                    if start >= len(body):
                        self.send_response(416)
                        self.send_header("Content-Range", f"bytes */{len(body)}")
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
                else:
                    self.send_response(200)
                rest = body[start:]
                self.send_header("Content-Length", str(len(rest)))
                self.end_headers()
                if drop:
                    self.wfile.write(rest[: len(rest) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                try:
                    self.wfile.write(rest)
                except (BrokenPipeError, ConnectionResetError):  # the client refused the file and hung up
                    self.close_connection = True

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def __enter__(self) -> ModelServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
