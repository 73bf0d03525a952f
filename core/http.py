"""The one outbound HTTP client for other people's servers: fetching sites (crawler, robots.txt,
sitemaps) and posting to the owners' webhooks.

Safe by default against SSRF: a site owner types any URL, and a page or a redirect can point
anywhere, so every hop is checked before a connection is opened. The host name is resolved here,
every address it resolves to must be public, and the connection goes to the checked address (the
URL is rewritten to the IP, with the Host header and TLS SNI/verification set to the real name),
so a DNS answer that changes between the check and the connect (rebinding) cannot swap it.
`settings.CRAWL_ALLOW_PRIVATE` lifts the address rule for the demo and the tests; nothing else does.

Every request has a total deadline, a body size limit enforced while streaming, and redirects
are followed by hand (each hop re-checked) up to `settings.CRAWL_MAX_REDIRECTS`. Reasons in the
exceptions are written for a shop owner and stored untranslated (core/texts.py): they end up on
the Page row and are shown in the reader's language.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urljoin

import httpx
from django.conf import settings
from django.utils.translation import gettext_noop

from core.texts import Stored, Text, russian, shown, stored

Resolver = Callable[[str, int], list[str]]
HeadersCheck = Callable[[int, httpx.Headers], None]
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

REDIRECT_STATUSES = {301, 302, 303, 307, 308}
DRAIN_BYTES = 16 * 1024  # a non-2xx body up to this is read (and dropped) to keep the connection open
NAT64 = ipaddress.ip_network("64:ff9b::/96")


class FetchError(Exception):
    """A request that produced no usable response. `text` (a stored text) goes to the Page row;
    `reason` is it in the active language."""

    def __init__(self, reason: Text) -> None:
        super().__init__(russian(reason))
        self.text = reason

    @property
    def reason(self) -> str:
        return shown(self.text)


class AddressRefused(FetchError):
    """The URL points into a private network (or is not a web address at all)."""


class FetchTimeout(FetchError):
    pass


class TooLarge(FetchError):
    pass


class TooManyRedirects(FetchError):
    pass


class Unreachable(FetchError):
    """DNS failed or no connection could be made: the site itself is not reachable."""


@dataclass(frozen=True)
class Response:
    url: str  # the final URL, after redirects
    status: int
    headers: httpx.Headers
    body: bytes

    @property
    def media_type(self) -> str:
        return self.headers.get("content-type", "").split(";")[0].strip().lower()

    @property
    def charset(self) -> str | None:
        for param in self.headers.get("content-type", "").split(";")[1:]:
            name, _sep, value = param.partition("=")
            if name.strip().lower() == "charset" and value.strip():
                return value.strip().strip("\"'")
        return None


def redirect_target(response: Response) -> str | None:
    location = response.headers.get("location", "").strip()
    if response.status not in REDIRECT_STATUSES or not location:
        return None
    return urljoin(response.url, location)


def system_resolver(host: str, port: int) -> list[str]:
    """All addresses of `host`, in the order the system prefers them."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """IPv6 forms that carry an IPv4 address a router would deliver to (mapped, 6to4, Teredo, NAT64)."""
    if ip.ipv4_mapped:
        return ip.ipv4_mapped
    if ip.sixtofour:
        return ip.sixtofour
    if ip.teredo:
        return ip.teredo[1]
    if ip in NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def address_is_public(ip: IPAddress) -> bool:
    """False for private, loopback, link-local, multicast, reserved, unspecified and shared space.
    `is_global` alone is not enough: multicast and NAT64/6to4 forms of 127.0.0.1 count as global."""
    if isinstance(ip, ipaddress.IPv6Address):
        inner = _embedded_ipv4(ip)
        if inner is not None:
            return address_is_public(inner)
    flags = (ip.is_private, ip.is_loopback, ip.is_link_local, ip.is_multicast, ip.is_reserved, ip.is_unspecified)
    return ip.is_global and not any(flags)


def size_text(size: int) -> Stored:
    """A size for a stored text: "1,5 МБ" / "1.5 MB" when shown."""
    if size >= 1024 * 1024:
        return stored(gettext_noop("%(size)s МБ"), size=round(size / 1024 / 1024, 1))
    if size >= 1024:
        return stored(gettext_noop("%(size)s КБ"), size=round(size / 1024, 1))
    return stored(gettext_noop("%(size)s байт"), size=size)


def format_size(size: int) -> str:
    return shown(size_text(size))


def _timeout(seconds: float) -> Stored:
    return stored(gettext_noop("таймаут %(seconds)s с"), seconds=float(seconds))


def parse_web_url(url: str) -> httpx.URL:
    """The URL as httpx sees it, or AddressRefused when it is not an http(s) address with a host."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError, ValueError) as exc:
        raise AddressRefused(stored(gettext_noop("неправильный адрес: %(url)s"), url=url[:200])) from exc
    if parsed.scheme not in {"http", "https"} or not parsed.host:
        raise AddressRefused(stored(
            gettext_noop("адрес должен начинаться с http:// или https:// и содержать имя сайта")))
    return parsed


class SafeClient:
    """GET with SSRF checks, limits and manual redirects. One instance per crawl; thread-safe.

    Connections are pooled per host name (one httpx.Client each), because they are keyed by the
    pinned IP: two https names on one IP must not share a TLS connection verified for the other.
    """

    def __init__(
        self, *, resolver: Resolver | None = None, allow_private: bool | None = None,
        timeout: float | None = None, max_bytes: int | None = None, max_redirects: int | None = None,
        allowed_networks: list[str] | None = None, pace: Callable[[], None] | None = None,
    ) -> None:
        self.resolver = resolver or system_resolver
        self.pace = pace  # called before every request, redirect hops included (politeness)
        self.allow_private = settings.CRAWL_ALLOW_PRIVATE if allow_private is None else allow_private
        # Explicitly trusted private networks (an intranet site); read with getattr because the
        # setting is optional.
        networks = getattr(settings, "CRAWL_ALLOWED_NETWORKS", []) if allowed_networks is None else allowed_networks
        self.allowed_networks = [ipaddress.ip_network(net, strict=False) for net in networks]
        self.timeout = settings.CRAWL_TIMEOUT if timeout is None else timeout
        self.max_bytes = settings.CRAWL_MAX_PAGE_BYTES if max_bytes is None else max_bytes
        self.max_redirects = settings.CRAWL_MAX_REDIRECTS if max_redirects is None else max_redirects
        self._clients: dict[str, httpx.Client] = {}
        self._lock = threading.Lock()

    def __enter__(self) -> SafeClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            for client in self._clients.values():
                client.close()
            self._clients.clear()

    def get(
        self, url: str, *, headers: dict[str, str] | None = None, max_bytes: int | None = None,
        check_headers: HeadersCheck | None = None, follow: Callable[[str], bool] | None = None,
    ) -> Response:
        """Fetch `url`, following redirects by hand. Non-2xx answers come back as a Response;
        `check_headers` may raise FetchError to refuse a body (wrong type) before it is read;
        a redirect whose target `follow` rejects comes back as the 3xx answer itself."""
        deadline = time.monotonic() + self.timeout
        sent = {"User-Agent": settings.CRAWL_USER_AGENT, **(headers or {})}
        current = url
        for _hop in range(self.max_redirects + 1):
            response = self._request(current, sent, deadline, max_bytes or self.max_bytes, check_headers)
            target = redirect_target(response)
            if target is None or (follow is not None and not follow(target)):
                return response
            current = target
        raise TooManyRedirects(stored(gettext_noop("слишком много переадресаций (больше %(max)s)"),
                                      max=self.max_redirects))

    def post(self, url: str, *, content: bytes, headers: dict[str, str] | None = None) -> Response:
        """POST `content` to `url` with the same address checks and deadline as `get`. Redirects
        are not followed (a webhook that moved answers 3xx, which the caller treats as a failure)."""
        deadline = time.monotonic() + self.timeout
        sent = {"User-Agent": settings.CRAWL_USER_AGENT, **(headers or {})}
        return self._request(url, sent, deadline, self.max_bytes, None, method="POST", content=content)

    def pinned_addresses(self, url: httpx.URL) -> list[str]:
        """Where a request to `url` may connect: every resolved address checked, none skipped."""
        host, port = url.host, url.port or (443 if url.scheme == "https" else 80)
        try:
            literal: IPAddress | None = ipaddress.ip_address(host)
        except ValueError:
            literal = None
        if literal is not None:
            addresses = [str(literal)]
        else:
            try:
                addresses = self.resolver(host, port)
            except (OSError, UnicodeError) as exc:
                raise Unreachable(stored(gettext_noop("сайт %(host)s не найден (ошибка DNS)"), host=host)) from exc
        if not addresses:
            raise Unreachable(stored(gettext_noop("сайт %(host)s не найден (ошибка DNS)"), host=host))
        if not self.allow_private:
            for address in addresses:
                if not self.address_allowed(ipaddress.ip_address(address.split("%")[0])):
                    raise AddressRefused(stored(gettext_noop(
                        "адрес %(address)s во внутренней сети — такие адреса не обходим"), address=address))
        return addresses

    def address_allowed(self, ip: IPAddress) -> bool:
        return address_is_public(ip) or any(ip in net for net in self.allowed_networks)

    def _client_for(self, host: str) -> httpx.Client:
        with self._lock:
            if host not in self._clients:
                # trust_env=False: a proxy from the environment would connect to the name itself,
                # bypassing the address check.
                self._clients[host] = httpx.Client(follow_redirects=False, trust_env=False)
            return self._clients[host]

    def _request(
        self, url: str, headers: dict[str, str], deadline: float, max_bytes: int,
        check_headers: HeadersCheck | None, *, method: str = "GET", content: bytes | None = None,
    ) -> Response:
        parsed = parse_web_url(url)
        addresses = self.pinned_addresses(parsed)
        if self.pace is not None:
            self.pace()
        host_header = parsed.netloc.decode("ascii")
        last_error: Exception | None = None
        for address in addresses:
            try:
                return self._request_at(parsed, address, {**headers, "Host": host_header}, deadline,
                                        max_bytes, check_headers, method=method, content=content)
            except httpx.ConnectError as exc:
                last_error = exc
        raise Unreachable(stored(gettext_noop("не удалось подключиться к %(host)s"), host=parsed.host)) from last_error

    def _request_at(
        self, url: httpx.URL, address: str, headers: dict[str, str], deadline: float, max_bytes: int,
        check_headers: HeadersCheck | None, *, method: str = "GET", content: bytes | None = None,
    ) -> Response:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise FetchTimeout(_timeout(self.timeout))
        extensions = {"sni_hostname": url.host} if url.scheme == "https" else {}
        request = self._client_for(url.host).build_request(
            method, url.copy_with(host=address.split("%")[0]), headers=headers, content=content,
            timeout=httpx.Timeout(remaining), extensions=extensions,
        )
        try:
            response = self._client_for(url.host).send(request, stream=True)
            try:
                body = self._read(response, deadline, max_bytes, check_headers)
            finally:
                response.close()
        except httpx.TimeoutException as exc:
            raise FetchTimeout(_timeout(self.timeout)) from exc
        except httpx.ConnectError:
            raise
        except httpx.HTTPError as exc:
            raise FetchError(stored(gettext_noop("ошибка соединения: %(kind)s"), kind=type(exc).__name__)) from exc
        return Response(url=str(url), status=response.status_code, headers=response.headers, body=body)

    def _read(
        self, response: httpx.Response, deadline: float, max_bytes: int, check_headers: HeadersCheck | None,
    ) -> bytes:
        """The body, only for 2xx answers, stopped as soon as it passes `max_bytes` or the deadline.
        The small declared body of any other answer (a 404's page) is read and dropped, so that the
        kept-alive connection can serve the next request; a larger or undeclared one closes it."""
        if not 200 <= response.status_code < 300:
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) <= DRAIN_BYTES:
                for _chunk in response.iter_bytes():
                    if time.monotonic() > deadline:
                        break
            return b""
        if check_headers is not None:
            check_headers(response.status_code, response.headers)
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > max_bytes:
            raise TooLarge(stored(gettext_noop("страница больше %(size)s"), size=size_text(max_bytes)))
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > max_bytes:
                raise TooLarge(stored(gettext_noop("страница больше %(size)s"), size=size_text(max_bytes)))
            if time.monotonic() > deadline:
                raise FetchTimeout(_timeout(self.timeout))
            chunks.append(chunk)
        return b"".join(chunks)
