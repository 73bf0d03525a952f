"""Django settings for Spravka. Everything that differs between a laptop and production comes
from the environment (see docs/deploy.md); with DATABASE_URL / REDIS_URL unset, embedded servers
are started by `assistant.embedded`."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path
from urllib.parse import parse_qs, urlparse

from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext_lazy as _

from assistant import dbpool, embedded
from assistant.env import env_bool, env_float, env_int, env_list, env_proxy_header, env_required, env_str, env_vapid

BASE_DIR = Path(__file__).resolve().parent.parent

# Production (1/true/yes; 0/false/no or unset: a laptop, a demo, the tests) never falls back to the
# toys: a forgotten variable stops the process here, named, before any embedded server is started.
PRODUCTION = env_bool("SPRAVKA_PRODUCTION", False)
if PRODUCTION:
    env_required("SECRET_KEY", "DATABASE_URL", "REDIS_URL", because="SPRAVKA_PRODUCTION is on")
else:
    embedded.ensure_services()

DEBUG = env_bool("DEBUG", default=not PRODUCTION)
SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    SECRET_KEY = "dev-only-insecure-key-do-not-use-in-production"  # noqa: S105
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])
# Where visitors' browsers reach this server (the widget script and websocket live here).
SPRAVKA_PUBLIC_URL = env_str("SPRAVKA_PUBLIC_URL", "http://127.0.0.1:8000").rstrip("/")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "simple_history",
    "axes",
    "channels",
    "bots",
    "behavior",
    "knowledge",
    "llm",
    "chat",
    "inbox",
    "review",
    "feedback",
    "routes",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI's files, served from STATIC_URL (no CDN)
    "api",
    "knowledge.catalog",
    "voice",  # the Voice layer: sliders, dictionary, «условия», canned replies
    "owner.tuning",  # the owner's voice and experiments pages
    "owner.dashboard",  # the owner dashboard at / and /b/<slug>/ (above feedback, review, inbox)
    "demo",  # the demo shop and `manage.py rundemo` (`make run`)
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "simple_history.middleware.HistoryRequestMiddleware",
    "axes.middleware.AxesMiddleware",  # last: turns a throttled login into the lockout page
]

ROOT_URLCONF = "assistant.urls"
ASGI_APPLICATION = "assistant.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]


def _database_from_url(url: str) -> dict[str, object]:
    parsed = urlparse(url)
    if parsed.scheme not in {"postgres", "postgresql"}:
        raise ImproperlyConfigured("DATABASE_URL must be a postgresql:// URL (pgvector is required)")
    query = parse_qs(parsed.query)
    host = query.get("host", [parsed.hostname or ""])[0]
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": (parsed.path or "/postgres").lstrip("/") or "postgres",
        "USER": parsed.username or "",
        "PASSWORD": parsed.password or "",
        "HOST": host,
        "PORT": str(parsed.port or ""),
        "CONN_MAX_AGE": env_int("DB_CONN_MAX_AGE", 0),
        "TEST": {"NAME": env_str("SPRAVKA_TEST_DB", "test_spravka")},
    }


DATABASE_URL = env_str("DATABASE_URL", "postgresql://postgres@localhost/postgres")
DATABASES = {"default": _database_from_url(DATABASE_URL)}

# --- Database connection pool: the serving process only (assistant/dbpool.py, docs/deploy.md) ---
# uvicorn (assistant.asgi as its entry point, `make run`) takes its PostgreSQL connections from one
# psycopg pool per process instead of opening one per HTTP request and per socket thread; Celery
# workers, management commands and the tests' own database connect as before. DB_POOL=0 turns it
# off (so does DB_CONN_MAX_AGE > 0 unless DB_POOL=1 is set too, which is refused: the pool needs 0).
# Each process holds DB_POOL_MIN_SIZE..DB_POOL_MAX_SIZE connections: plan PostgreSQL's
# max_connections for N uvicorn processes × the maximum. Its users at once: the widget's and the
# inbox's socket threads (DB_THREADS, asyncio's default executor size: chat.consumers)
# and one thread per HTTP request in flight (asgiref's per-request thread; asgiref 3.13 reads no
# ASGI_THREADS), so the default maximum is DB_THREADS + 4. A request that waits DB_POOL_TIMEOUT s
# for a connection gets the database-away error (the widget's `unavailable` frame).
DB_THREADS = min(32, (os.cpu_count() or 1) + 4)
DB_POOL = env_bool("DB_POOL", DATABASES["default"]["CONN_MAX_AGE"] == 0)
DB_POOL_OPTIONS = dbpool.pool_options(
    enabled=DB_POOL,
    min_size=env_int("DB_POOL_MIN_SIZE", 2),
    max_size=env_int("DB_POOL_MAX_SIZE", DB_THREADS + 4),
    timeout=env_float("DB_POOL_TIMEOUT", 5.0),
    conn_max_age=DATABASES["default"]["CONN_MAX_AGE"],  # type: ignore[arg-type]
)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env_str("REDIS_URL", "redis://localhost:6379/0")


def _celery_url(redis_url: str) -> str:
    """Kombu spells unix sockets `redis+socket://`; redis-py spells them `unix://`."""
    if redis_url.startswith("unix://"):
        path, _sep, query = redis_url[len("unix://"):].partition("?")
        db = parse_qs(query).get("db", ["0"])[0]
        return f"redis+socket://{path}?virtual_host={db}"
    return redis_url


CELERY_BROKER_URL = _celery_url(REDIS_URL)
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_DEFAULT_QUEUE = env_str("CELERY_QUEUE", "spravka")
# Embedding (CPU-bound) has its own queue, so a crawl (waiting on politeness delays) and the
# vectors of its pages run side by side. Every worker setup must consume both queues.
CELERY_EMBED_QUEUE = env_str("CELERY_EMBED_QUEUE", f"{CELERY_TASK_DEFAULT_QUEUE}-embed")
CELERY_TASK_ROUTES = {
    "knowledge.indexing.embed_bot": {"queue": CELERY_EMBED_QUEUE},
    "knowledge.catalog.embedding.offers_embed": {"queue": CELERY_EMBED_QUEUE},  # offer vectors
}
WORKER_QUEUES = [CELERY_TASK_DEFAULT_QUEUE, CELERY_EMBED_QUEUE]  # what `make run` and the tests consume
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
# Faults (docs/reliability.md). A task whose worker died unacked (kill -9, OOM) is delivered again
# after this many seconds (kombu's Redis transport; its default is an hour). A running crawl's
# heartbeat (knowledge/runclaims.py) lapses after CRAWL_ALIVE_SECONDS: the redelivered task then
# crawls the run again; while it beats, a redelivery returns at once. The embedding pass's lock
# (knowledge/indexing.py) frees itself EMBED_LOCK_SECONDS after a dead worker's last batch.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 3600)}
CRAWL_ALIVE_SECONDS = env_int("CRAWL_ALIVE_SECONDS", 60)
EMBED_LOCK_SECONDS = env_int("EMBED_LOCK_SECONDS", 120)
CELERY_BEAT_SCHEDULE: dict[str, dict[str, object]] = {
    "recrawl-due-sources": {"task": "knowledge.tasks.recrawl_due_sources", "schedule": 300.0},
    # Operators: e-mail about conversations waiting too long; the contact form when nobody came.
    "alert-waiting-operators": {"task": "inbox.tasks.alert_waiting", "schedule": 30.0},
    "offer-leads-to-waiting": {"task": "chat.tasks.offer_leads_to_waiting", "schedule": 30.0},
    "purge-expired-transcripts": {"task": "chat.tasks.purge_expired", "schedule": 6 * 3600.0},
}

# The widget's channel layer (chat/layers.py): one bounded pool of Redis connections per
# ASGI process; a burst of group_add / group_discard (thousands of sockets opening or closing at
# once) waits up to CHANNELS_POOL_TIMEOUT s for a free connection instead of failing.
CHANNELS_POOL_SIZE = env_int("CHANNELS_POOL_SIZE", 20)
CHANNELS_POOL_TIMEOUT = env_float("CHANNELS_POOL_TIMEOUT", 30.0)
if CHANNELS_POOL_SIZE < 4:  # one connection sits in the layer's BZPOPMIN; the rest serve groups and sends
    raise ImproperlyConfigured(f"CHANNELS_POOL_SIZE must be at least 4; got {CHANNELS_POOL_SIZE}")
CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "chat.layers.BoundedRedisChannelLayer",
        # redis-py 8 reads with a 5 s socket timeout by default, the same as the layer's 5 s
        # BZPOPMIN: an idle socket then dies with "Timeout reading". Give reads room to spare.
        "CONFIG": {
            "hosts": [{
                "address": REDIS_URL, "socket_timeout": 30, "socket_connect_timeout": 5,
                "max_connections": CHANNELS_POOL_SIZE, "timeout": CHANNELS_POOL_TIMEOUT,
            }],
            "prefix": env_str("CHANNELS_PREFIX", "spravka"),
        },
    }
}
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": env_str("CACHE_PREFIX", "spravka"),
    }
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

# The installation's language: pages for a browser that asks for neither Russian nor English, e-mails
# sent outside a request and the management commands' output. A person's own choice (the language
# switch: a cookie) and the browser's Accept-Language come first on every page (LocaleMiddleware).
LANGUAGES = [("ru", _("Русский")), ("en", _("English"))]
LANGUAGE_CODE = env_str("SPRAVKA_LANGUAGE", "ru")
if LANGUAGE_CODE not in dict(LANGUAGES):
    raise ImproperlyConfigured(f"SPRAVKA_LANGUAGE must be ru or en; got {LANGUAGE_CODE!r}")
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "Europe/Moscow"
USE_I18N = True
USE_TZ = True
# Dates and numbers follow the page's language (Django's formats: «0,485», «2 декабря 2026»), with the
# project's corrections in assistant/formats/. No thousands separator by default: `{{ n }}` also
# writes ids into links and data attributes; a big count asks for grouping where it is shown
# (`|floatformat:"g"`).
FORMAT_MODULE_PATH = ["assistant.formats"]

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / ".data" / "static"
MEDIA_ROOT = BASE_DIR / ".data" / "media"
DATA_UPLOAD_MAX_MEMORY_SIZE = 25 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024

# --- Knowledge layer -------------------------------------------------------------------------
# Which local embedding model new vectors use ("use-m3" or "e5-small"); see knowledge/embeddings.py.
EMBEDDING_MODEL = env_str("EMBEDDING_MODEL", "e5-small")
EMBEDDING_BATCH = env_int("EMBEDDING_BATCH", 32)
# The crawler refuses private, loopback and link-local addresses unless this is on (demo, tests).
CRAWL_ALLOW_PRIVATE = env_bool("CRAWL_ALLOW_PRIVATE", False)
# Trusted intranet networks the crawler may reach even with private addresses refused (CIDR list).
CRAWL_ALLOWED_NETWORKS = env_list("CRAWL_ALLOWED_NETWORKS", [])
CRAWL_MAX_PAGES = env_int("CRAWL_MAX_PAGES", 500)
CRAWL_MAX_PAGE_BYTES = env_int("CRAWL_MAX_PAGE_BYTES", 5 * 1024 * 1024)
CRAWL_TIMEOUT = env_float("CRAWL_TIMEOUT", 15.0)
CRAWL_MAX_REDIRECTS = env_int("CRAWL_MAX_REDIRECTS", 5)
CRAWL_DELAY = env_float("CRAWL_DELAY", 0.5)
CRAWL_CONCURRENCY = env_int("CRAWL_CONCURRENCY", 2)
CRAWL_USER_AGENT = env_str("CRAWL_USER_AGENT", "SpravkaBot/0.1 (+https://spravka.example/bot)")
UPLOAD_MAX_BYTES = env_int("UPLOAD_MAX_BYTES", 20 * 1024 * 1024)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "WARNING")},
    "loggers": {
        "spravka": {"level": env_str("SPRAVKA_LOG_LEVEL", "INFO"), "propagate": True},
    },
}

# --- Production: HTTPS only (docs/deploy.md). On by default with SPRAVKA_PRODUCTION; each switch can
# be turned off one by one, and `manage.py check --deploy` then names what is off.
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", PRODUCTION)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", PRODUCTION)
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", PRODUCTION)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 365 * 24 * 3600 if PRODUCTION else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", PRODUCTION)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", PRODUCTION)
# Behind a TLS-terminating proxy: the header it sets to "https" (e.g. X-Forwarded-Proto). Only name a
# header the proxy always overwrites, or any client can claim HTTPS.
SECURE_PROXY_SSL_HEADER = env_proxy_header("SECURE_PROXY_SSL_HEADER")

# --- Logins (/accounts/login/ and the admin's): failed attempts counted per account and per client
# address by django-axes, in the database; a lock lifts after LOGIN_LOCKOUT_MINUTES, or earlier with
# `manage.py axes_reset_username EMAIL` / `axes_reset_ip IP` or by a superuser in the admin.
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("LOGIN_LOCKOUT_MINUTES", 30))
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]  # either one over the limit locks
AXES_RESET_ON_SUCCESS = True
AXES_USERNAME_CALLABLE = "bots.accounts.login_username"
AXES_CLIENT_IP_CALLABLE = "bots.accounts.client_ip"
AXES_LOCKOUT_CALLABLE = "bots.accounts.locked_out"
if AXES_FAILURE_LIMIT < 1 or AXES_COOLOFF_TIME.total_seconds() < 60:
    raise ImproperlyConfigured("LOGIN_FAILURE_LIMIT must be at least 1 and LOGIN_LOCKOUT_MINUTES at least 1")

# --- E-mail: operator alerts, digests. Django's SMTP backend with the usual variables. ---
EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.smtp.EmailBackend")
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
EMAIL_TIMEOUT = env_float("EMAIL_TIMEOUT", 10.0)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "Spravka <noreply@localhost>")
EMAIL_FILE_PATH = env_str("EMAIL_FILE_PATH", str(BASE_DIR / ".data" / "mail"))  # the file backend (make run)

# --- LLM ---
# Provider: anthropic | openai (any OpenAI-compatible server) | none (retrieval-only). Default:
# anthropic when ANTHROPIC_API_KEY is set. Bots can override provider and models (llm.BotLLMSettings).
ANTHROPIC_API_KEY = env_str("ANTHROPIC_API_KEY")
ANTHROPIC_BASE_URL = env_str("ANTHROPIC_BASE_URL")  # empty: the SDK's default endpoint
LLM_PROVIDER = env_str("LLM_PROVIDER", "anthropic" if ANTHROPIC_API_KEY else "none")
if LLM_PROVIDER not in {"anthropic", "openai", "none"}:
    raise ImproperlyConfigured(f"LLM_PROVIDER must be anthropic, openai or none; got {LLM_PROVIDER!r}")
LLM_OPENAI_BASE_URL = env_str("LLM_OPENAI_BASE_URL")  # e.g. http://127.0.0.1:8001/v1
LLM_OPENAI_API_KEY = env_str("LLM_OPENAI_API_KEY")
LLM_FAST_MODEL = env_str("LLM_FAST_MODEL", "claude-haiku-4-5")
LLM_STRONG_MODEL = env_str("LLM_STRONG_MODEL", "claude-sonnet-4-6")
LLM_TIMEOUT = env_float("LLM_TIMEOUT", 20.0)  # seconds per call (whole stream included)
LLM_MAX_RETRIES = env_int("LLM_MAX_RETRIES", 2)  # connection errors, 429, 5xx, 529 only
LLM_RETRY_BACKOFF = env_float("LLM_RETRY_BACKOFF", 0.5)  # first pause, doubled each time, jittered
LLM_RETRY_MAX_WAIT = env_float("LLM_RETRY_MAX_WAIT", 8.0)  # a longer Retry-After is not waited for

# --- Chat ---
# Widget message limits, counted in Redis and shared by every ASGI process (0 switches one off).
CHAT_RATE_VISITOR = env_int("CHAT_RATE_VISITOR", 10)  # messages per window from one visitor of a bot
CHAT_RATE_IP = env_int("CHAT_RATE_IP", 30)  # messages per window from one client address
CHAT_RATE_WINDOW = env_int("CHAT_RATE_WINDOW", 60)  # seconds
CHAT_MAX_FRAME_BYTES = env_int("CHAT_MAX_FRAME_BYTES", 16 * 1024)
# Behind N trusted reverse proxies, the client address is read from the right of X-Forwarded-For;
# 0 (the default) ignores the header, which any client can forge. Uvicorn's --proxy-headers also works.
CHAT_PROXY_HOPS = env_int("CHAT_PROXY_HOPS", 0)
# A resent message whose answer is still being made waits this long for it (seconds) ...
CHAT_REPLY_WAIT = env_float("CHAT_REPLY_WAIT", 30.0)
# ... and the claim on making that answer expires after this long, should its worker die (a dead
# process's claims are taken over sooner: chat/claims.py).
CHAT_ANSWER_CLAIM_SECONDS = env_int("CHAT_ANSWER_CLAIM_SECONDS", 120)
# A visitor who reconnects (a new page, a crashed server) within this many seconds of a question the
# bot has not answered yet gets its answer on the new socket.
CHAT_RESUME_SECONDS = env_int("CHAT_RESUME_SECONDS", 600)
# A person waits on a chat answer: a model slower than this (seconds) gives way to retrieval-only.
CHAT_LLM_TIMEOUT = env_float("CHAT_LLM_TIMEOUT", 8.0)
# The checks of a reply without a model (docs/search.md), each switchable for `manage.py calibrate`
# to show what it does: the speller's second pass (knowledge/spelling.py) and the scope check
# (knowledge/scope.py: no excerpt from an entry about something else, nor for a name never mentioned).
CHAT_SPELLER = env_bool("CHAT_SPELLER", True)
CHAT_SCOPE_CHECK = env_bool("CHAT_SCOPE_CHECK", True)
# Every other write of a widget socket, per visitor of a bot / per address per CHAT_RATE_WINDOW
# (0 switches one off): new conversations, requests for an operator, ratings, contact forms.
CHAT_RATE_CONVERSATIONS_IP = env_int("CHAT_RATE_CONVERSATIONS_IP", 10)
CHAT_RATE_HANDOFF_VISITOR = env_int("CHAT_RATE_HANDOFF_VISITOR", 3)
CHAT_RATE_HANDOFF_IP = env_int("CHAT_RATE_HANDOFF_IP", 10)
CHAT_RATE_RATINGS_VISITOR = env_int("CHAT_RATE_RATINGS_VISITOR", 20)
CHAT_RATE_RATINGS_IP = env_int("CHAT_RATE_RATINGS_IP", 60)
CHAT_RATE_LEADS_VISITOR = env_int("CHAT_RATE_LEADS_VISITOR", 3)
CHAT_RATE_LEADS_IP = env_int("CHAT_RATE_LEADS_IP", 10)
# Widget sockets open at once from one address, across all processes (0: no cap).
CHAT_MAX_SOCKETS_IP = env_int("CHAT_MAX_SOCKETS_IP", 50)

# --- Commerce (assistant/commerce): the shop's order endpoint ---
ORDER_TIMEOUT = env_float("ORDER_TIMEOUT", 3.0)  # seconds per attempt (redirects included)
ORDER_RETRIES = env_int("ORDER_RETRIES", 1)  # more attempts after a timeout, a refused connection or a 5xx
ORDER_MAX_BYTES = env_int("ORDER_MAX_BYTES", 256 * 1024)  # an order's JSON, not a catalogue
# Encrypts the endpoints' secret headers at rest; empty: derived from SECRET_KEY (changing either
# makes stored headers unreadable, and the admin asks for them again).
ORDER_SECRETS_KEY = env_str("ORDER_SECRETS_KEY")
# A product feed (YML or CSV) larger than this is refused before it is read or parsed.
CATALOG_MAX_BYTES = env_int("CATALOG_MAX_BYTES", 50 * 1024 * 1024)
# Catalog feeds by address with a schedule (importcatalog --every-hours, the admin's upload form):
# checked like the crawler's recrawl_hours, every 5 minutes.
CELERY_BEAT_SCHEDULE |= {
    "catalog-refresh-due": {"task": "knowledge.catalog.tasks.catalog_refresh_due", "schedule": 300.0},
}
# Order lookups per visitor of a bot / per address per CHAT_RATE_WINDOW (enumerating orders is an attack).
CHAT_RATE_ORDERS_VISITOR = env_int("CHAT_RATE_ORDERS_VISITOR", 5)
CHAT_RATE_ORDERS_IP = env_int("CHAT_RATE_ORDERS_IP", 20)
# Page reports of the widget (`page` frames, docs/widget-protocol.md): past these per window they
# are dropped quietly (no invitation, no inbox update), never an error a visitor would see.
CHAT_RATE_PAGES_VISITOR = env_int("CHAT_RATE_PAGES_VISITOR", 30)
CHAT_RATE_PAGES_IP = env_int("CHAT_RATE_PAGES_IP", 300)

# --- Operators (assistant/inbox): webhooks to the owner's URL ---
WEBHOOK_TIMEOUT = env_float("WEBHOOK_TIMEOUT", 5.0)  # seconds per attempt
WEBHOOK_MAX_ATTEMPTS = env_int("WEBHOOK_MAX_ATTEMPTS", 6)
WEBHOOK_RETRY_BASE = env_float("WEBHOOK_RETRY_BASE", 10.0)  # seconds before the first retry, doubled each time

# --- Web Push to the operators' browsers (inbox/push.py, docs/deploy.md "Web Push") ---
# The VAPID key pair and contact; all unset: push is off and the inbox shows no push button.
# `make run` makes a pair once for the demo (.data/vapid.json); production sets its own.
SPRAVKA_VAPID_PUBLIC_KEY, SPRAVKA_VAPID_PRIVATE_KEY, SPRAVKA_VAPID_SUBJECT = env_vapid()
# A subscription's endpoint must be https:// on one of these hosts (or a subdomain): the push services
# of Chrome, Firefox, Edge and Safari. The worker posts to it, so no other address is ever accepted.
PUSH_HOSTS = env_list("PUSH_HOSTS", [
    "fcm.googleapis.com", "android.googleapis.com", "push.services.mozilla.com", "notify.windows.com",
    "push.apple.com",
])
PUSH_ALLOW_HTTP = env_bool("PUSH_ALLOW_HTTP", False)  # http:// endpoints too: a local fake push service only
PUSH_TIMEOUT = env_float("PUSH_TIMEOUT", 10.0)  # seconds per request to a push service
PUSH_MAX_ATTEMPTS = env_int("PUSH_MAX_ATTEMPTS", 4)  # a notice is tried this many times per subscription
PUSH_RETRY_BASE = env_float("PUSH_RETRY_BASE", 5.0)  # seconds before the first retry, doubled each time
PUSH_TTL = env_int("PUSH_TTL", 900)  # seconds a push service keeps a notice for a browser that is offline

# --- Messengers: Telegram, VK, MAX (messengers/, docs/channels.md) ---
INSTALLED_APPS += ["messengers"]
TELEGRAM_API_BASE = env_str("TELEGRAM_API_BASE", "https://api.telegram.org").rstrip("/")
VK_API_BASE = env_str("VK_API_BASE", "https://api.vk.com").rstrip("/")  # calls go to {base}/method/{name}
MAX_API_BASE = env_str("MAX_API_BASE", "https://platform-api2.max.ru").rstrip("/")  # calls go to {base}/messages…
MESSENGER_TIMEOUT = env_float("MESSENGER_TIMEOUT", 10.0)  # seconds per call to a messenger
MESSENGER_MAX_ATTEMPTS = env_int("MESSENGER_MAX_ATTEMPTS", 6)  # a reply is tried this many times
MESSENGER_RETRY_BASE = env_float("MESSENGER_RETRY_BASE", 2.0)  # seconds before the first retry, doubled each time
MESSENGER_MAX_BODY = env_int("MESSENGER_MAX_BODY", 262144)  # bytes of one update; larger ones are refused
# The key messenger tokens are sealed with (core/secrets.py); derived from SECRET_KEY when unset.
SECRETS_KEY = env_str("SECRETS_KEY", "")

# --- Leads into the owner's CRM: amoCRM, Bitrix24 (crm/, docs/crm.md) ---
INSTALLED_APPS += ["crm"]
AMOCRM_DOMAIN = env_str("AMOCRM_DOMAIN", "amocrm.ru")  # a bare subdomain «company» means https://company.amocrm.ru
CRM_TIMEOUT = env_float("CRM_TIMEOUT", 10.0)  # seconds per call to a CRM
CRM_MAX_ATTEMPTS = env_int("CRM_MAX_ATTEMPTS", 6)  # a lead is tried this many times, then fails with the reason
CRM_RETRY_BASE = env_float("CRM_RETRY_BASE", 30.0)  # seconds before the first retry, doubled each time
# A CRM address on http:// (not https://): the demo and the tests' fake CRMs only.
CRM_ALLOW_HTTP = env_bool("CRM_ALLOW_HTTP", CRAWL_ALLOW_PRIVATE)
# Leads whose queueing for the CRM was lost (a process stopped right after the lead's commit).
CELERY_BEAT_SCHEDULE |= {"crm-sweep": {"task": "crm.delivery.crm_sweep", "schedule": 600.0}}

# --- Feedback layer: review queue, Gaps, digest (review/, feedback/) ---
from celery.schedules import crontab  # noqa: E402

CELERY_BEAT_SCHEDULE |= {
    "review-sweep": {"task": "review.tasks.review_sweep_all", "schedule": 600.0},
    "gaps-refresh": {"task": "feedback.tasks.gaps_refresh_all", "schedule": 300.0},
    "outcomes-refresh": {"task": "feedback.tasks.outcomes_refresh_all", "schedule": 1800.0},
    # Monday morning, Moscow time (TIME_ZONE): last week's figures for every owner.
    "weekly-digest": {"task": "feedback.tasks.send_digests", "schedule": crontab(hour=9, minute=0, day_of_week=1)},
}
CELERY_TIMEZONE = TIME_ZONE
# A conversation without a new message for this long has ended as far as its outcome goes (minutes).
FEEDBACK_IDLE_MINUTES = env_int("FEEDBACK_IDLE_MINUTES", 30)

# --- Async routes with bounded self-correction (routes/, docs/architecture.md) -------------------
# The installation's maximum repair budget per step: a route's declaration may only lower it.
ROUTES_MAX_REPAIRS = env_int("ROUTES_MAX_REPAIRS", 3)
ROUTES_MAX_STEP_SECONDS = env_float("ROUTES_MAX_STEP_SECONDS", 120.0)

# --- REST API (api/, docs/api.md): per-bot keys, limits per key counted in Redis ---
API_RATE = env_str("API_RATE", "600/min")  # requests per key
API_ASK_RATE = env_str("API_ASK_RATE", "60/min")  # ask/ calls per key (each runs the answer chain)
API_MAX_JSON_BYTES = env_int("API_MAX_JSON_BYTES", 2 * 1024 * 1024)
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["api.authentication.ApiKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["api.authentication.HasApiKey"],
    "DEFAULT_THROTTLE_CLASSES": ["api.throttling.ApiKeyRateThrottle"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["api.parsers.LimitedJSONParser"],
    "DEFAULT_PAGINATION_CLASS": "api.pagination.IdCursorPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "EXCEPTION_HANDLER": "api.problems.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": None,
    "STRICT_JSON": True,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Spravka API",
    "DESCRIPTION": "Знания, разговоры и ответы бота. Ключ: Authorization: Bearer <ключ>. Подробно: docs/api.md.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# --- Members (bots/members.py): invitation links expire after this many days ---
INVITE_MAX_AGE_DAYS = env_int("INVITE_MAX_AGE_DAYS", 7)

# --- Insights (owner/insights/): question sets re-run this many seconds after the bot's knowledge changed
# (one queued re-run per bot in that window: a crawl storing hundreds of entries is one change) ---
INSIGHTS_RERUN_DELAY = env_int("INSIGHTS_RERUN_DELAY", 180)
INSTALLED_APPS += ["owner.insights"]

# --- Site checks (robots.txt, page, sitemaps of a typed address) per person (owner/dashboard/sitecheck.py) ---
SITECHECK_RATE_USER = env_int("SITECHECK_RATE_USER", 10)  # checks per window; 0 switches the limit off
SITECHECK_RATE_WINDOW = env_int("SITECHECK_RATE_WINDOW", 600)  # seconds
