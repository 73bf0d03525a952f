"""Tiny stdlib-only static server for the demo shop in ``demo/site``.

It substitutes ``__BASE__`` with the server origin (in .html/.xml/.txt) and
``<!--SPRAVKA_WIDGET-->`` with a widget snippet (in .html), and supports
ETag / Last-Modified conditional requests.

    python demo/server.py --port 8001 --widget-snippet '<script src="..."></script>'
"""

from __future__ import annotations

import argparse
import hashlib
import mimetypes
import posixpath
import threading
from email.utils import formatdate, parsedate_to_datetime
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

SITE_DIR = Path(__file__).resolve().parent / "site"
BASE_PLACEHOLDER = "__BASE__"
WIDGET_PLACEHOLDER = "<!--SPRAVKA_WIDGET-->"
TEXT_SUFFIXES = {".html", ".xml", ".txt"}
CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".xml": "application/xml; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".json": "application/json; charset=utf-8",
    ".svg": "image/svg+xml",
}
NOT_FOUND_PAGE = (
    '<!DOCTYPE html>\n<html lang="ru"><head><meta charset="utf-8">'
    "<title>Страница не найдена — ТехноДом</title></head>\n"
    '<body><h1>Страница не найдена</h1><p>Такой страницы нет. <a href="/">На главную</a></p>'
    "</body></html>\n"
)


class DemoServer(ThreadingHTTPServer):
    """ThreadingHTTPServer that knows its public origin and the widget snippet."""

    daemon_threads = True

    def __init__(self, host: str, port: int, widget_snippet: str = "", site_dir: Path = SITE_DIR) -> None:
        super().__init__((host, port), DemoHandler)
        self.public_host = host
        self.widget_snippet = widget_snippet
        self.site_dir = site_dir.resolve()
        self.verbose = False

    @property
    def base_url(self) -> str:
        return f"http://{self.public_host}:{self.server_address[1]}"


class DemoHandler(BaseHTTPRequestHandler):
    server: DemoServer
    server_version = "SpravkaDemo/1.0"
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self._serve(send_body=True)

    def do_HEAD(self) -> None:
        self._serve(send_body=False)

    def log_message(self, format: str, *args: object) -> None:
        if self.server.verbose:
            super().log_message(format, *args)

    def _resolve(self) -> Path | str | None:
        """Return a file path, a redirect location (str), or None for 404."""
        url_path = unquote(urlsplit(self.path).path)
        clean = posixpath.normpath(url_path)
        if not url_path.startswith("/") or ".." in url_path.split("/"):
            return None
        target = (self.server.site_dir / clean.lstrip("/")).resolve()
        if not target.is_relative_to(self.server.site_dir):
            return None
        if target.is_dir():
            if not url_path.endswith("/"):
                return url_path + "/"
            target = target / "index.html"
        return target if target.is_file() else None

    def _serve(self, send_body: bool) -> None:
        resolved = self._resolve()
        if isinstance(resolved, str):
            self.send_response(HTTPStatus.MOVED_PERMANENTLY)
            self.send_header("Location", resolved)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if resolved is None:
            body = NOT_FOUND_PAGE.encode("utf-8")
            self.send_response(HTTPStatus.NOT_FOUND)
            self.send_header("Content-Type", CONTENT_TYPES[".html"])
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if send_body:
                self.wfile.write(body)
            return

        suffix = resolved.suffix.lower()
        data = resolved.read_bytes()
        if suffix in TEXT_SUFFIXES:
            text = data.decode("utf-8").replace(BASE_PLACEHOLDER, self.server.base_url)
            if suffix == ".html":
                text = text.replace(WIDGET_PLACEHOLDER, self.server.widget_snippet)
            data = text.encode("utf-8")
        mtime = int(resolved.stat().st_mtime)
        etag = '"' + hashlib.sha256(data).hexdigest()[:32] + '"'
        content_type = CONTENT_TYPES.get(suffix) or mimetypes.guess_type(resolved.name)[0]

        if self._not_modified(etag, mtime):
            self.send_response(HTTPStatus.NOT_MODIFIED)
            self._validators(etag, mtime)
            self.end_headers()
            return
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", content_type or "application/octet-stream")
        self.send_header("Content-Length", str(len(data)))
        self._validators(etag, mtime)
        self.end_headers()
        if send_body:
            self.wfile.write(data)

    def _validators(self, etag: str, mtime: int) -> None:
        self.send_header("ETag", etag)
        self.send_header("Last-Modified", formatdate(mtime, usegmt=True))
        self.send_header("Cache-Control", "no-cache")

    def _not_modified(self, etag: str, mtime: int) -> bool:
        inm = self.headers.get("If-None-Match")
        if inm is not None:  # takes precedence over If-Modified-Since (RFC 9110)
            tags = [t.strip().removeprefix("W/") for t in inm.split(",")]
            return "*" in tags or etag in tags
        ims = self.headers.get("If-Modified-Since")
        if ims is None:
            return False
        try:
            return mtime <= int(parsedate_to_datetime(ims).timestamp())
        except (TypeError, ValueError, IndexError, OverflowError):
            return False


def make_server(host: str = "127.0.0.1", port: int = 8001, widget_snippet: str = "") -> DemoServer:
    """Bind (port 0 = any free port; see ``server.server_address[1]``) without serving yet."""
    return DemoServer(host, port, widget_snippet)


def serve_in_thread(host: str = "127.0.0.1", port: int = 0, widget_snippet: str = "") -> DemoServer:
    """Start serving in a daemon thread; stop with ``server.shutdown(); server.server_close()``."""
    server = make_server(host, port, widget_snippet)
    threading.Thread(target=server.serve_forever, name="spravka-demo", daemon=True).start()
    return server


def serve(port: int = 8001, host: str = "127.0.0.1", widget_snippet: str = "") -> None:
    """Serve the demo site until interrupted."""
    server = make_server(host, port, widget_snippet)
    server.verbose = True
    print(f"Demo shop at {server.base_url}/ (Ctrl+C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def main() -> None:
    parser = argparse.ArgumentParser(description="Serve the Spravka demo shop site.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8001)
    parser.add_argument("--widget-snippet", default="", help="HTML inserted instead of <!--SPRAVKA_WIDGET-->")
    args = parser.parse_args()
    serve(port=args.port, host=args.host, widget_snippet=args.widget_snippet)


if __name__ == "__main__":
    main()
