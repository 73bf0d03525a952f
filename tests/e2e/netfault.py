"""Network faults between the browser and the real app: a plain TCP relay on a port of its own
(what toxiproxy does), with switches a test flips. It knows nothing of HTTP or of the widget's
protocol: it carries bytes, and on cue stops carrying the server's or drops the connections.

    link = FaultyLink(app_url)            # the widget snippet's script then comes from link.url
    link.cut()                            # every connection open now is dropped (a lost network)
    with link.replies_lost():             # what the server sends on the connections open now is
        ...                               # lost on the way; they are dropped on leaving the block

New connections (the widget reconnecting) are carried normally.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from urllib.parse import urlsplit

CHUNK = 65536


class _Connection:
    """One browser connection and its twin to the app."""

    def __init__(self, client: socket.socket, server: socket.socket) -> None:
        self.client, self.server = client, server
        self.replies_lost = False
        self._closed = threading.Event()

    def close(self) -> None:
        if self._closed.is_set():
            return
        self._closed.set()
        for sock in (self.client, self.server):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)  # wakes the relay threads blocked in recv
            sock.close()


class FaultyLink:
    def __init__(self, upstream_url: str) -> None:
        parts = urlsplit(upstream_url)
        assert parts.hostname and parts.port, upstream_url
        self.upstream = (parts.hostname, parts.port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.2)  # `stop` is noticed within this
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self._lock = threading.Lock()
        self._open: set[_Connection] = set()
        self._stopping = threading.Event()
        self._acceptor = threading.Thread(target=self._accept, name="faulty-link", daemon=True)
        self._acceptor.start()

    # ----- switches (the test's thread) -----

    def cut(self) -> int:
        """Drop every connection open now, both ways; how many there were."""
        with self._lock:
            dropped = list(self._open)
        for connection in dropped:
            connection.close()
        return len(dropped)

    @contextlib.contextmanager
    def replies_lost(self) -> Iterator[None]:
        """While inside, nothing the server sends on the connections open now reaches the browser
        (the browser's frames still reach the server); they are dropped on the way out, as a
        connection that lost its way back is in the end."""
        with self._lock:
            affected = list(self._open)
        for connection in affected:
            connection.replies_lost = True
        try:
            yield
        finally:
            for connection in affected:
                connection.close()

    def stop(self) -> None:
        self._stopping.set()
        self._acceptor.join(5)
        self._listener.close()
        self.cut()

    # ----- the relay (its own threads) -----

    def _accept(self) -> None:
        while not self._stopping.is_set():
            try:
                client, _address = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            client.settimeout(None)
            try:
                server = socket.create_connection(self.upstream, timeout=10)
            except OSError:
                client.close()
                continue
            server.settimeout(None)
            connection = _Connection(client, server)
            with self._lock:
                self._open.add(connection)
            for source, target, replies in ((client, server, False), (server, client, True)):
                threading.Thread(target=self._carry, args=(connection, source, target, replies),
                                 name="faulty-link-relay", daemon=True).start()

    def _carry(self, connection: _Connection, source: socket.socket, target: socket.socket, replies: bool) -> None:
        try:
            while data := source.recv(CHUNK):
                if replies and connection.replies_lost:
                    continue  # lost on the way
                target.sendall(data)
        except OSError:
            pass  # dropped: by a switch, or by either end
        finally:
            connection.close()
            with self._lock:
                self._open.discard(connection)
