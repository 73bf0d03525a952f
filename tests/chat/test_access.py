import pytest

from chat.access import client_ip, normalize_origin, origin_allowed


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        ("https://shop.example", True),
        ("https://SHOP.example", True),
        ("https://shop.example:443", True),
        ("http://shop.example", False),
        ("https://www.shop.example", False),
        ("https://shop.example:8443", False),
        ("https://shop.example.evil.example", False),
        ("null", False),
        ("", False),
        (None, False),
    ],
)
def test_only_the_exact_origin_is_allowed(origin, allowed):
    assert origin_allowed(origin, ["https://shop.example/"]) is allowed


def test_origins_are_compared_without_default_ports_and_paths():
    assert normalize_origin("HTTPS://Shop.Example:443/ru/") == "https://shop.example"
    assert normalize_origin("http://127.0.0.1:8000") == "http://127.0.0.1:8000"
    assert normalize_origin("ftp://shop.example") is None
    assert normalize_origin("https://shop.example:99999") is None


def _scope(peer="198.51.100.7", xff=None):
    headers = [(b"x-forwarded-for", xff.encode())] if xff else []
    return {"client": (peer, 40000), "headers": headers}


def test_forwarded_for_is_ignored_unless_proxies_are_trusted(settings):
    settings.CHAT_PROXY_HOPS = 0
    assert client_ip(_scope(xff="203.0.113.9")) == "198.51.100.7"


def test_behind_one_proxy_the_rightmost_forwarded_address_counts(settings):
    settings.CHAT_PROXY_HOPS = 1
    # The client wrote "1.2.3.4" itself; the proxy appended the address it really saw.
    assert client_ip(_scope(xff="1.2.3.4, 203.0.113.9")) == "203.0.113.9"
    assert client_ip(_scope(xff="not-an-ip")) == "198.51.100.7"
