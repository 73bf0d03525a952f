"""A small web site the test controls: a dict of path -> Resource served by stdlib http.server in
a thread on a free port. A test may change the dict between crawls; every request is logged with
the headers the crawler sent (If-None-Match, If-Modified-Since, Host)."""

from __future__ import annotations

import gzip
import hashlib
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HTML = "text/html; charset=utf-8"


@dataclass
class Resource:
    body: bytes = b""
    status: int = 200
    content_type: str = HTML
    headers: dict[str, str] = field(default_factory=dict)
    etag: bool = False  # answer If-None-Match with 304 when it matches
    last_modified: str = ""  # answer If-Modified-Since with 304 when it matches exactly
    delay: float = 0.0
    chunked_size: int = 0  # >0: send the body in pieces without Content-Length (streamed size limit)


@dataclass
class Hit:
    path: str
    headers: dict[str, str]


def page_html(title: str, body: str, *, links: list[str] | None = None, head: str = "") -> bytes:
    """A plain shop page: a menu (to be dropped by extraction) and a <main> with the content."""
    menu = "".join(f'<a href="{href}">{href}</a> ' for href in links or [])
    return (
        f'<!DOCTYPE html><html lang="ru"><head><meta charset="utf-8"><title>{title}</title>{head}</head>'
        f"<body><nav>{menu}</nav><main>{body}</main><footer>© Магазин</footer></body></html>"
    ).encode()


def urlset(urls: list[str], *, gz: bool = False) -> bytes:
    items = "".join(f"<url><loc>{url}</loc></url>" for url in urls)
    xml = f'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{items}</urlset>'
    return gzip.compress(xml.encode()) if gz else xml.encode()


def sitemap_index(urls: list[str]) -> bytes:
    items = "".join(f"<sitemap><loc>{url}</loc></sitemap>" for url in urls)
    return (
        f'<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"{items}</sitemapindex>"
    ).encode()


class Handler(BaseHTTPRequestHandler):
    server: SiteServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        site = self.server.site
        site.record(Hit(self.path, {k.lower(): v for k, v in self.headers.items()}))
        site.in_flight(+1)
        try:
            self._answer(site)
        finally:
            site.in_flight(-1)

    def _answer(self, site: Site) -> None:
        resource = site.routes.get(self.path)
        if resource is None:
            self._send(404, {"Content-Type": HTML}, b"<html><body><h1>Not found</h1></body></html>")
            return
        if resource.delay:
            time.sleep(resource.delay)
        headers = {"Content-Type": resource.content_type, **resource.headers}
        etag = f'"{hashlib.sha256(resource.body).hexdigest()[:16]}"' if resource.etag else ""
        if etag:
            headers["ETag"] = etag
        if resource.last_modified:
            headers["Last-Modified"] = resource.last_modified
        if self._not_modified(etag, resource.last_modified):
            self._send(304, {k: v for k, v in headers.items() if k != "Content-Type"}, b"")
            return
        if resource.chunked_size:
            self._stream(resource, headers)
            return
        self._send(resource.status, headers, resource.body)

    def _not_modified(self, etag: str, last_modified: str) -> bool:
        if etag and self.headers.get("If-None-Match") == etag:
            return True
        return bool(last_modified) and self.headers.get("If-Modified-Since") == last_modified

    def _send(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body:
            self.wfile.write(body)

    def _stream(self, resource: Resource, headers: dict[str, str]) -> None:
        self.send_response(resource.status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        try:
            for start in range(0, len(resource.body), resource.chunked_size):
                self.wfile.write(resource.body[start : start + resource.chunked_size])
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass


class SiteServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, site: Site, host: str) -> None:
        super().__init__((host, 0), Handler)
        self.site = site

    def handle_error(self, request: object, client_address: object) -> None:
        """The crawler hangs up on purpose (timeouts, size limits): not worth a traceback."""


class Site:
    def __init__(self, host: str = "127.0.0.1") -> None:
        self.host = host
        self.routes: dict[str, Resource] = {}
        self.hits: list[Hit] = []
        self._busy = 0
        self.most_at_once = 0
        self._lock = threading.Lock()
        self._server = SiteServer(self, host)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def origin(self) -> str:
        return f"http://{self.host}:{self._server.server_port}"

    def url(self, path: str) -> str:
        return f"{self.origin}{path}"

    def record(self, hit: Hit) -> None:
        with self._lock:
            self.hits.append(hit)

    def in_flight(self, step: int) -> None:
        """Track requests being answered at once; `most_at_once` is the peak."""
        with self._lock:
            self._busy += step
            self.most_at_once = max(self.most_at_once, self._busy)

    def requests_to(self, path: str) -> list[Hit]:
        with self._lock:
            return [hit for hit in self.hits if hit.path == path]

    def forget_hits(self) -> None:
        with self._lock:
            self.hits.clear()

    def html(self, path: str, title: str, body: str, *, links: list[str] | None = None, **options: object) -> None:
        self.routes[path] = Resource(body=page_html(title, body, links=links), **options)  # type: ignore[arg-type]

    def start(self) -> Site:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


# --- a small shop ---------------------------------------------------------------------------
INTRO = "<p>Магазин бытовой техники. Доставляем по Москве и всей России, принимаем карты и наличные.</p>"
DELIVERY = (
    "<h1>Доставка</h1><p>Доставляем заказы по всей России. Срок зависит от региона и службы доставки.</p>"
    '<h2 id="moscow">По Москве</h2><p>Курьер привезёт заказ на следующий день. Стоимость 350 ₽, '
    "бесплатно от 5 000 ₽.</p>"
    "<h2>По России</h2><h3 id=\"cdek\">СДЭК</h3><p>От трёх дней до недели, стоимость по тарифу СДЭК.</p>"
)
PAYMENT = (
    "<h1>Оплата</h1><p>Оплатить заказ можно картой на сайте, курьеру или при получении в пункте выдачи.</p>"
    '<h2 id="legal">Для юрлиц</h2><p>Выставим счёт, оплата по безналичному расчёту в течение трёх дней.</p>'
)


def fill_shop(site: Site, *, etag: bool = False, robots: str = "User-agent: *\nDisallow: /private/\n") -> None:
    """Three pages linked from the home page and one that robots.txt forbids."""
    site.routes["/robots.txt"] = Resource(robots.encode(), content_type="text/plain")
    site.html("/", "Магазин", f"<h1>Магазин</h1>{INTRO}", links=["/delivery/", "/payment/", "/private/"],
              etag=etag)
    site.html("/delivery/", "Доставка", DELIVERY, links=["/"], etag=etag)
    site.html("/payment/", "Оплата", PAYMENT, links=["/"], etag=etag)
    site.html("/private/", "Закрыто", "<h1>Секрет</h1><p>Служебная страница, её нельзя обходить.</p>")
