"""Production cannot fall back to toys: `manage.py` run in a subprocess with the environment of a
deployment. A forgotten variable stops it, named, before any embedded server starts; the environment
docs/deploy.md documents passes `check --deploy` without a warning."""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

DEPLOY_DOC = REPO / "docs" / "deploy.md"
PRODUCTION_ONLY = ("SECRET_KEY", "DATABASE_URL", "REDIS_URL", "SPRAVKA_PRODUCTION", "DEBUG", "ALLOWED_HOSTS",
                   "SECURE_SSL_REDIRECT", "SECURE_HSTS_SECONDS", "SECURE_PROXY_SSL_HEADER", "SESSION_COOKIE_SECURE",
                   "CSRF_COOKIE_SECURE", "SECURE_HSTS_INCLUDE_SUBDOMAINS", "SECURE_HSTS_PRELOAD")


def documented_environment() -> dict[str, str]:
    """The `NAME=value` lines of the ```env block in docs/deploy.md, with a real random secret."""
    block = re.search(r"```env\n(.*?)```", DEPLOY_DOC.read_text(encoding="utf-8"), re.DOTALL)
    assert block, "docs/deploy.md shows the production environment in an ```env block"
    pairs = dict(line.split("=", 1) for line in block.group(1).splitlines() if line and not line.startswith("#"))
    assert pairs["SECRET_KEY"].startswith("<")  # a placeholder, never a key anyone could copy
    return {**pairs, "SECRET_KEY": secrets.token_urlsafe(50)}


def manage(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`manage.py ARGS` with only `env` of the production variables set; embedded servers, should
    any start, would land in tmp_path/data (asserted empty by the callers that care)."""
    base = {k: v for k, v in os.environ.items() if k not in PRODUCTION_ONLY}
    base["SPRAVKA_DATA_DIR"] = str(tmp_path / "data")
    return subprocess.run([sys.executable, "manage.py", *args], cwd=REPO, env={**base, **env},
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize("missing", ["SECRET_KEY", "DATABASE_URL", "REDIS_URL"])
@pytest.mark.parametrize("on", ["1", "true", "yes", "YES"])
def test_a_missing_variable_stops_production_before_any_embedded_server(tmp_path, missing, on):
    env = {**documented_environment(), "SPRAVKA_PRODUCTION": on}
    del env[missing]

    done = manage(tmp_path, "check", **env)

    assert done.returncode != 0
    assert done.stderr.strip().splitlines()[-1] == (
        f"Spravka cannot start: SPRAVKA_PRODUCTION is on, so {missing} must be set (see docs/deploy.md)"
    )
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "data").exists(), "an embedded server was started in production"


def test_a_blank_variable_counts_as_missing(tmp_path):
    done = manage(tmp_path, "check", **{**documented_environment(), "REDIS_URL": "  "})

    assert done.returncode != 0 and "so REDIS_URL must be set" in done.stderr


def test_the_documented_environment_passes_check_deploy_without_a_warning(tmp_path):
    done = manage(tmp_path, "check", "--deploy", "--fail-level", "WARNING", **documented_environment())

    assert done.returncode == 0, done.stdout + done.stderr
    assert "System check identified no issues" in done.stdout
    assert not (tmp_path / "data").exists()


@pytest.mark.parametrize("off", ["0", "false", "no", "NO", ""])
def test_false_words_turn_production_off(tmp_path, off):
    # Production off: no SECRET_KEY needed, and check --deploy names the HTTPS settings left off.
    env = {"SPRAVKA_PRODUCTION": off, "DATABASE_URL": "postgresql://u@db.invalid/x", "REDIS_URL": "redis://r.invalid/0"}

    done = manage(tmp_path, "check", "--deploy", **env)

    assert done.returncode == 0, done.stderr
    for warning in ("security.W004", "security.W008", "security.W012", "security.W016", "security.W018"):
        assert warning in done.stderr


def test_an_unknown_word_is_refused_not_guessed(tmp_path):
    done = manage(tmp_path, "check", **{**documented_environment(), "SPRAVKA_PRODUCTION": "maybe"})

    assert done.returncode != 0
    assert "SPRAVKA_PRODUCTION must be one of 1/0, true/false, yes/no; got 'maybe'" in done.stderr


PROBE = """
from django.test import Client
client = Client()
plain = client.get("/accounts/login/")
proxied = client.get("/accounts/login/", headers={"X-Forwarded-Proto": "https"})
print(plain.status_code, plain.get("Location"))
print(proxied.status_code, proxied.get("Strict-Transport-Security"))
print("secure" if proxied.cookies["csrftoken"]["secure"] else "plain")
"""


def test_behind_a_tls_proxy_plain_http_is_redirected_and_https_gets_hsts_and_secure_cookies(tmp_path):
    env = {**documented_environment(), "ALLOWED_HOSTS": "testserver"}

    done = manage(tmp_path, "shell", "-c", PROBE, **env)

    assert done.returncode == 0, done.stderr
    redirect, hsts, cookie = done.stdout.strip().splitlines()[-3:]
    assert redirect == "301 https://testserver/accounts/login/"
    assert hsts == "200 max-age=31536000; includeSubDomains; preload"
    assert cookie == "secure"


def test_a_malformed_proxy_header_is_refused(tmp_path):
    env = {**documented_environment(), "SECURE_PROXY_SSL_HEADER": "X-Forwarded-Proto: https"}
    done = manage(tmp_path, "check", **env)

    assert done.returncode != 0 and "SECURE_PROXY_SSL_HEADER must be a header name" in done.stderr
