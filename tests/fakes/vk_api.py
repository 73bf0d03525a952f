"""A local fake of the VK API, and builders of the events VK's Callback API posts to a webhook.

A real HTTP server on 127.0.0.1 (a free port) that messengers/vk.py talks to over httpx, as it talks
to VK: `POST {url}/method/{name}` with form fields (a query string and a JSON body are read too),
`v` and `access_token` (or `Authorization: Bearer`). It answers as VK does, HTTP 200 either way:
`{"response": ...}` or `{"error": {"error_code": N, "error_msg": ..., "request_params": [...]}}`,
and records every call, failed ones too.

Tokens: `add_community(token, group_id, name)` registers a community's token, `add_user_token(token)`
a user's (groups.getById without group_id then answers error 100, as VK does); any other token
answers error 5 "User authorization failed". A call without `v` answers error 8.

Methods: groups.getById; messages.send (needs peer_id or user_id, random_id and a message or an
attachment; returns the new message's id, counting up per community; the same random_id to the same
peer sends nothing and returns the first message's id, as VK does; a message over 4096 characters
answers 914, a keyboard VK would refuse answers 911); messages.sendMessageEventAnswer;
messages.setActivity; users.get (users registered with `add_user`, else a deleted profile). Any
other method answers error 3 "Unknown method passed".

Parameters are recorded as the form sent them (strings: peer_id "5550001"), except the JSON fields
(`keyboard`, `event_data`, `template`, `forward`, `content_source`), which are decoded.

Switches, from the test's thread:
- `block(peer_id)` / `unblock(peer_id)`: messages.send and setActivity to that peer answer 901
  "Can't send messages for users without permission";
- `fail_next(method, code=10, times=1, message=None)`: the next calls of that method answer VK's
  error `code` (6 too many requests per second, 9 flood control, 10 internal error, 902, 5, ...);
- `bot_features(False)`: the community has «Возможности ботов» off: a message with a keyboard
  answers 912;
- `down(status=500)` / `up()`: every call answers that HTTP status with an HTML page, until `up()`;
- `delay(seconds)`: wait before every answer (longer than the client's timeout = a timeout).
"""

from __future__ import annotations

import itertools
import json
import secrets
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

JSON_FIELDS = frozenset({"keyboard", "event_data", "template", "forward", "content_source"})
MESSAGES = {
    1: "Unknown error occurred",
    3: "Unknown method passed",
    5: "User authorization failed: invalid access_token (4).",
    6: "Too many requests per second",
    8: "Invalid request: v (version) is required",
    9: "Flood control",
    10: "Internal server error",
    100: "One of the parameters specified was missing or invalid",
    901: "Can't send messages for users without permission",
    902: "Can't send messages to this user due to their privacy settings",
    911: "Keyboard format is invalid",
    912: "This is a chat bot feature, change this status in settings",
    914: "Message is too long",
}
MAX_MESSAGE = 4096
MAX_LABEL = 40
MAX_INLINE_BUTTONS = 10
MAX_INLINE_ROWS = 6
MAX_PAYLOAD = 255
CHATS_FROM = 2_000_000_000


@dataclass
class Call:
    token: str
    method: str
    params: dict[str, Any]
    at: float  # time.monotonic() when it arrived
    headers: dict[str, str]  # names in lower case
    status: int = 200  # the HTTP status it was answered with
    error: int | None = None  # VK's error_code, when it answered one
    duplicate: bool = False  # messages.send with a random_id already sent to that peer: nothing shown

    @property
    def ok(self) -> bool:
        return self.status == 200 and self.error is None


@dataclass
class Answer:
    status: int
    body: dict[str, Any] | None = None
    text: str = ""  # a page that is not JSON (down())


@dataclass
class Fault:
    code: int
    message: str


@dataclass
class Community:
    group: dict[str, Any]
    message_ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    sent: dict[tuple[str, str], int] = field(default_factory=dict)  # (peer, random_id) -> message id


def response(value: Any) -> Answer:
    return Answer(200, {"response": value})


def error(code: int, message: str | None = None, params: dict[str, Any] | None = None) -> Answer:
    shown = [{"key": key, "value": str(value)} for key, value in (params or {}).items()
             if key not in ("access_token", "message", "keyboard")]
    return Answer(200, {"error": {"error_code": code, "error_msg": message or MESSAGES.get(code, "Error"),
                                  "request_params": shown}})


class FakeVK:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        self._stopping = threading.Event()
        self._communities: dict[str, Community] = {}
        self._user_tokens: dict[str, int] = {}
        self._users: dict[int, dict[str, Any]] = {}
        self._blocked: set[str] = set()
        self._faults: dict[str, deque[Fault]] = defaultdict(deque)
        self._down: int | None = None
        self._delay = 0.0
        self._bot_features = True
        self.calls: list[Call] = []
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._http.daemon_threads = True
        self._http.block_on_close = False
        self._thread = threading.Thread(target=self._http.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        """The base for `settings.VK_API_BASE`: calls go to `{url}/method/{name}`."""
        return f"http://127.0.0.1:{self._http.server_address[1]}"

    def start(self) -> FakeVK:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._http.shutdown()
        self._http.server_close()

    # --- set-up and switches -------------------------------------------------------------------------

    def add_community(self, token: str, group_id: int = 220000001, name: str = "Магазин «Справка»",
                      screen_name: str | None = None) -> dict[str, Any]:
        """Registers a community's token; returns the group groups.getById answers for it."""
        group = {"id": group_id, "name": name, "screen_name": screen_name or f"club{group_id}", "is_closed": 0,
                 "type": "group", "photo_50": f"https://vk.example/group{group_id}_50.jpg"}
        with self._lock:
            self._communities[token] = Community(group)
        return group

    def add_user_token(self, token: str, user_id: int = 1000001) -> None:
        with self._lock:
            self._user_tokens[token] = user_id

    def add_user(self, user_id: int, first_name: str, last_name: str = "", screen_name: str | None = None) -> None:
        """A profile users.get answers for `user_id`."""
        with self._lock:
            self._users[user_id] = {"id": user_id, "first_name": first_name, "last_name": last_name,
                                    "screen_name": screen_name or f"id{user_id}", "can_access_closed": True,
                                    "is_closed": False}

    def block(self, peer_id: int | str) -> None:
        with self._lock:
            self._blocked.add(str(peer_id))

    def unblock(self, peer_id: int | str) -> None:
        with self._lock:
            self._blocked.discard(str(peer_id))

    def fail_next(self, method: str, code: int = 10, times: int = 1, message: str | None = None) -> None:
        """The next `times` calls of `method` answer VK's error `code`."""
        with self._lock:
            self._faults[method].extend(Fault(code, message or MESSAGES.get(code, "Error")) for _ in range(times))

    def bot_features(self, on: bool) -> None:
        with self._lock:
            self._bot_features = on

    def down(self, status: int = 500) -> None:
        with self._lock:
            self._down = status

    def up(self) -> None:
        with self._lock:
            self._down = None

    def delay(self, seconds: float) -> None:
        with self._lock:
            self._delay = seconds

    # --- what arrived ----------------------------------------------------------------------------------

    def calls_of(self, method: str, peer_id: int | str | None = None) -> list[Call]:
        with self._lock:
            return self._matching(method, peer_id)

    def wait_for(self, method: str, count: int = 1, timeout: float = 5.0,
                 peer_id: int | str | None = None) -> list[Call]:
        """The calls of `method` (to `peer_id`) once there are `count` of them; AssertionError
        listing what did arrive after `timeout` seconds."""
        with self._arrived:
            if self._arrived.wait_for(lambda: len(self._matching(method, peer_id)) >= count, timeout):
                return self._matching(method, peer_id)
            arrived = [f"{call.method}({call.params}) -> {call.error or call.status}" for call in self.calls]
        to = "" if peer_id is None else f" to peer {peer_id}"
        raise AssertionError(f"expected {count} {method} call(s){to} within {timeout}s; arrived: {arrived or 'none'}")

    def sent(self, peer_id: int | str) -> list[Call]:
        """The messages.send calls that showed a message to the peer (not failed, not duplicates)."""
        return [call for call in self.calls_of("messages.send", peer_id) if call.ok and not call.duplicate]

    def sent_texts(self, peer_id: int | str) -> list[str]:
        return [call.params.get("message", "") for call in self.sent(peer_id)]

    def clear(self) -> None:
        with self._lock:
            self.calls.clear()

    def _matching(self, method: str, peer_id: int | str | None) -> list[Call]:
        return [call for call in self.calls if call.method == method
                and (peer_id is None or str(call.params.get("peer_id", call.params.get("user_id"))) == str(peer_id))]

    # --- answering -------------------------------------------------------------------------------------

    def _handle(self, method: str, params: dict[str, Any], headers: dict[str, str]) -> Answer:
        arrived = time.monotonic()
        token = str(params.pop("access_token", "")) or headers.get("authorization", "").removeprefix("Bearer ")
        with self._lock:
            call = Call(token, method, params, arrived, headers)
            answer = self._answer(call)
            call.status = answer.status
            if answer.body is not None and "error" in answer.body:
                call.error = answer.body["error"]["error_code"]
            self.calls.append(call)
            self._arrived.notify_all()
            delay = self._delay
        if delay > 0:
            self._stopping.wait(delay)
        return answer

    def _answer(self, call: Call) -> Answer:
        """Under the lock: the first fault that applies, else the method's result."""
        if self._down is not None:
            return Answer(self._down, text=f"<html><body><h1>{self._down}</h1>nginx</body></html>")
        params = call.params
        if not params.get("v"):
            return error(8, params=params)
        community = self._communities.get(call.token)
        if community is None and call.token not in self._user_tokens:
            return error(5, params=params)
        faults = self._faults.get(call.method)
        if faults:
            fault = faults.popleft()
            return error(fault.code, fault.message, params)
        run = METHODS.get(call.method)
        if run is None:
            return error(3, params=params)
        return run(self, call, community)

    def _groups_get_by_id(self, call: Call, community: Community | None) -> Answer:
        if community is None and not call.params.get("group_ids") and not call.params.get("group_id"):
            return error(100, "One of the parameters specified was missing or invalid: group_ids is undefined",
                         call.params)
        groups = [community.group] if community is not None else []
        return response({"groups": groups, "profiles": []})

    def _send(self, call: Call, community: Community | None) -> Answer:
        params = call.params
        if community is None:
            return error(27, "Group authorization failed: method is unavailable with user auth", params)
        peer = str(params.get("peer_id") or params.get("user_id") or "")
        if not peer.lstrip("-").isdigit():
            return error(100, "One of the parameters specified was missing or invalid: peer_id is undefined", params)
        random_id = str(params.get("random_id", ""))
        if not random_id.lstrip("-").isdigit():
            return error(100, "One of the parameters specified was missing or invalid: random_id is a required "
                              "parameter", params)
        text = params.get("message", "")
        if not text and not params.get("attachment"):
            return error(100, "One of the parameters specified was missing or invalid: message is empty or invalid",
                         params)
        if len(text) > MAX_MESSAGE:
            return error(914, params=params)
        if peer in self._blocked:
            return error(901, params=params)
        if "keyboard" in params and not self._bot_features:
            return error(912, params=params)
        if "keyboard" in params and not _keyboard_ok(params["keyboard"]):
            return error(911, params=params)
        first = community.sent.get((peer, random_id))
        if first is not None:  # VK does not send a random_id twice: the first message's id again
            call.duplicate = True
            return response(first)
        message_id = next(community.message_ids)
        community.sent[(peer, random_id)] = message_id
        return response(message_id)

    def _event_answer(self, call: Call, community: Community | None) -> Answer:
        params = call.params
        if community is None:
            return error(27, "Group authorization failed: method is unavailable with user auth", params)
        if not all(params.get(key) for key in ("event_id", "user_id", "peer_id")):
            return error(100, params=params)
        return response(1)

    def _set_activity(self, call: Call, community: Community | None) -> Answer:
        peer = str(call.params.get("peer_id", ""))
        if peer in self._blocked:
            return error(901, params=call.params)
        return response(1)

    def _users_get(self, call: Call, community: Community | None) -> Answer:
        ids = [part.strip() for part in str(call.params.get("user_ids", "")).split(",") if part.strip()]
        users = []
        for user_id in ids:
            number = int(user_id) if user_id.isdigit() else 0
            users.append(self._users.get(number) or {"id": number, "first_name": "DELETED", "last_name": "",
                                                       "deactivated": "deleted"})
        return response(users)


METHODS: dict[str, Callable[[FakeVK, Call, Community | None], Answer]] = {
    "groups.getById": FakeVK._groups_get_by_id,
    "messages.send": FakeVK._send,
    "messages.sendMessageEventAnswer": FakeVK._event_answer,
    "messages.setActivity": FakeVK._set_activity,
    "users.get": FakeVK._users_get,
}


def _keyboard_ok(keyboard: Any) -> bool:
    """What VK checks of a keyboard: its shape, the labels' length, the payloads' length, and for an
    inline one at most 10 buttons in 6 rows."""
    if not isinstance(keyboard, dict) or not isinstance(keyboard.get("buttons"), list):
        return False
    rows = keyboard["buttons"]
    buttons = [button for row in rows if isinstance(row, list) for button in row]
    if any(not isinstance(row, list) for row in rows):
        return False
    if keyboard.get("inline") and (len(buttons) > MAX_INLINE_BUTTONS or len(rows) > MAX_INLINE_ROWS):
        return False
    for button in buttons:
        action = button.get("action") if isinstance(button, dict) else None
        if not isinstance(action, dict) or action.get("type") not in ("text", "open_link", "callback", "location",
                                                                       "vkpay", "open_app"):
            return False
        label = action.get("label", "")
        if action["type"] in ("text", "open_link", "callback") and not (0 < len(label) <= MAX_LABEL):
            return False
        if action["type"] == "open_link" and not str(action.get("link", "")).startswith(("http://", "https://")):
            return False
        if len(str(action.get("payload", ""))) > MAX_PAYLOAD:
            return False
    return True


# --- HTTP -------------------------------------------------------------------------------------------------


def _handler_for(fake: FakeVK) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        server_fake = fake

    return Handler


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_fake: FakeVK

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._serve(b"")

    def do_POST(self) -> None:
        self._serve(self.rfile.read(int(self.headers.get("content-length") or 0)))

    def _serve(self, raw: bytes) -> None:
        self.close_connection = True
        url = urlsplit(self.path)
        path = unquote(url.path)
        if not path.startswith("/method/") or not path.removeprefix("/method/"):
            answer = Answer(404, text="<html><body>404 Not Found</body></html>")
        else:
            params: dict[str, Any] = dict(parse_qsl(url.query)) | _parse_body(raw, self.headers.get("content-type", ""))
            params = {key: _decoded(key, value) for key, value in params.items()}
            headers = {name.lower(): value for name, value in self.headers.items()}
            answer = self.server_fake._handle(path.removeprefix("/method/"), params, headers)
        try:
            self._send(answer)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _send(self, answer: Answer) -> None:
        if answer.body is not None:
            data, kind = json.dumps(answer.body, ensure_ascii=False).encode("utf-8"), "application/json; charset=utf-8"
        else:
            data, kind = answer.text.encode("utf-8"), "text/html; charset=utf-8"
        self.send_response(answer.status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(data)))
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(data)


def _parse_body(raw: bytes, content_type: str) -> dict[str, Any]:
    if not raw:
        return {}
    if content_type.split(";", 1)[0].strip().lower() == "application/json":
        body = json.loads(raw)
        return body if isinstance(body, dict) else {}
    return dict(parse_qsl(raw.decode("utf-8"), keep_blank_values=True))


def _decoded(key: str, value: Any) -> Any:
    if key not in JSON_FIELDS or not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value


# --- events, as the Callback API posts them ---------------------------------------------------------------

GROUP_ID = 220000001
API_VERSION = "5.199"


def event_id() -> str:
    """An event id as VK makes them: 40 hexadecimal characters."""
    return secrets.token_hex(20)


def _event(kind: str, obj: dict[str, Any] | None, *, secret: str, group_id: int, event: str | None) -> dict[str, Any]:
    body: dict[str, Any] = {"group_id": group_id, "type": kind, "event_id": event or event_id(), "v": API_VERSION}
    if obj is not None:
        body["object"] = obj
    if secret:
        body["secret"] = secret
    return body


def confirmation_event(*, secret: str, group_id: int = GROUP_ID) -> dict[str, Any]:
    """The handshake VK sends when the owner presses «Подтвердить»: answered with the code."""
    body = {"type": "confirmation", "group_id": group_id}
    return body | ({"secret": secret} if secret else {})


def _message(peer_id: int, text: str, *, message_id: int, attachments: list[dict[str, Any]] | None = None,
             payload: dict[str, Any] | None = None, from_id: int | None = None, **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {
        "date": int(time.time()), "from_id": peer_id if from_id is None else from_id, "id": message_id, "out": 0,
        "version": 10000000 + message_id, "attachments": attachments or [], "conversation_message_id": message_id,
        "fwd_messages": [], "important": False, "is_hidden": False, "peer_id": peer_id, "random_id": 0, "text": text,
    }
    if payload is not None:
        message["payload"] = json.dumps(payload, separators=(",", ":"))
    return message | extra


def _client_info() -> dict[str, Any]:
    return {"button_actions": ["text", "vkpay", "open_app", "location", "open_link", "callback", "intent_subscribe",
                               "intent_unsubscribe"], "keyboard": True, "inline_keyboard": True, "carousel": True,
            "lang_id": 0}


def message_new(peer_id: int, text: str, *, secret: str, group_id: int = GROUP_ID, event: str | None = None,
                message_id: int = 1, attachments: list[dict[str, Any]] | None = None,
                payload: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    """A message from a user to the community (`extra`: more fields of the message: geo, from_id…)."""
    obj = {"message": _message(peer_id, text, message_id=message_id, attachments=attachments, payload=payload,
                               **extra), "client_info": _client_info()}
    return _event("message_new", obj, secret=secret, group_id=group_id, event=event)


def start_event(peer_id: int, *, secret: str, **keywords: Any) -> dict[str, Any]:
    """«Начать» under an empty dialog: its label as text, `{"command":"start"}` as payload."""
    return message_new(peer_id, "Начать", secret=secret, payload={"command": "start"}, **keywords)


def photo(owner_id: int = 1, photo_id: int = 457239017) -> dict[str, Any]:
    sizes = [{"height": height, "width": height * 4 // 3, "type": kind,
              "url": f"https://sun9-1.userapi.example/impg/{photo_id}_{kind}.jpg"}
             for kind, height in (("s", 56), ("m", 97), ("x", 453))]
    return {"type": "photo", "photo": {"album_id": -3, "date": int(time.time()), "id": photo_id,
                                       "owner_id": owner_id, "access_key": "a1b2c3", "sizes": sizes, "text": ""}}


def sticker(sticker_id: int = 163) -> dict[str, Any]:
    return {"type": "sticker", "sticker": {"product_id": 4, "sticker_id": sticker_id, "images": [
        {"url": f"https://vk.example/sticker/1-{sticker_id}-128", "width": 128, "height": 128}]}}


def voice(owner_id: int = 1, duration: int = 3) -> dict[str, Any]:
    return {"type": "audio_message", "audio_message": {"id": 456239001, "owner_id": owner_id, "duration": duration,
                                                       "waveform": [0, 3, 7], "link_ogg": "https://vk.example/a.ogg",
                                                       "link_mp3": "https://vk.example/a.mp3"}}


def document(title: str = "rekvizity.pdf") -> dict[str, Any]:
    return {"type": "doc", "doc": {"id": 6001, "owner_id": 1, "title": title, "size": 52000, "ext": "pdf",
                                   "url": "https://vk.example/doc1_6001", "type": 1}}


def message_event(peer_id: int, payload: dict[str, Any], *, secret: str, group_id: int = GROUP_ID,
                  event: str | None = None, conversation_message_id: int = 1) -> dict[str, Any]:
    """A press on a callback button (its payload as an object); `object.event_id` is what
    messages.sendMessageEventAnswer answers."""
    obj = {"user_id": peer_id, "peer_id": peer_id, "event_id": secrets.token_hex(6), "payload": payload,
           "conversation_message_id": conversation_message_id}
    return _event("message_event", obj, secret=secret, group_id=group_id, event=event)


def message_deny(user_id: int, *, secret: str, group_id: int = GROUP_ID, event: str | None = None) -> dict[str, Any]:
    """The user forbade the community's messages."""
    return _event("message_deny", {"user_id": user_id}, secret=secret, group_id=group_id, event=event)


def message_allow(user_id: int, *, secret: str, group_id: int = GROUP_ID, event: str | None = None) -> dict[str, Any]:
    """The user allowed the community's messages again."""
    return _event("message_allow", {"user_id": user_id, "key": "spravka"}, secret=secret, group_id=group_id,
                  event=event)
