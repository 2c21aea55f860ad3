"""Production settings pass ``check --deploy``; DATABASE_URL selects the database."""

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

# each test starts Django in subprocesses
pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]


def run_manage(*args, **env):
    full = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}
    full.update(env)
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=full, capture_output=True, text=True
    )


def test_check_deploy_is_clean_with_production_settings():
    out = run_manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        DJANGO_DEBUG="0",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
        DJANGO_ALLOWED_HOSTS="qa.example.org",
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "no issues" in out.stdout


def test_production_refuses_to_start_without_a_secret_key():
    out = run_manage("check", DJANGO_DEBUG="0", DJANGO_SECRET_KEY="")
    assert out.returncode != 0
    assert "DJANGO_SECRET_KEY must be set" in out.stderr


def test_database_url_selects_postgresql():
    code = (
        "from django.conf import settings; d = settings.DATABASES['default']; "
        "print(d['ENGINE'], d['NAME'], d['HOST'])"
    )
    out = run_manage(
        "shell",
        "--no-imports",
        "-c",
        code,
        DJANGO_DEBUG="1",
        DATABASE_URL="postgres://u@db.example:5432/qa",
    )
    assert out.stdout.split()[-3:] == ["django.db.backends.postgresql", "qa", "db.example"]


def test_secure_cookies_by_default_in_production_and_off_only_when_asked():
    code = (
        "from django.conf import settings; "
        "print(settings.SESSION_COOKIE_SECURE, settings.CSRF_COOKIE_SECURE)"
    )
    prod = {"DJANGO_DEBUG": "0", "DJANGO_SECRET_KEY": secrets.token_urlsafe(50)}
    assert run_manage("shell", "--no-imports", "-c", code, **prod).stdout.split() == [
        "True",
        "True",
    ]
    assert run_manage(
        "shell", "--no-imports", "-c", code, DJANGO_SECURE_COOKIES="0", **prod
    ).stdout.split() == ["False", "False"]


def test_postgresql_gets_statement_and_lock_timeouts_from_the_environment():
    code = (
        "from django.conf import settings; "
        "print(settings.DATABASES['default']['OPTIONS']['options'])"
    )
    url = "postgres://u@db.example:5432/qa"
    default = run_manage("shell", "--no-imports", "-c", code, DATABASE_URL=url, DJANGO_DEBUG="1")
    assert default.stdout.split() == [
        "-c",
        "statement_timeout=20000",
        "-c",
        "lock_timeout=5000",
        "-c",
        "jit=off",
    ], default.stderr
    custom = run_manage(
        "shell",
        "--no-imports",
        "-c",
        code,
        DATABASE_URL=url,
        DJANGO_DEBUG="1",
        DJANGO_DB_STATEMENT_TIMEOUT_MS="9000",
        DJANGO_DB_LOCK_TIMEOUT_MS="1500",
    )
    assert custom.stdout.split() == [
        "-c",
        "statement_timeout=9000",
        "-c",
        "lock_timeout=1500",
        "-c",
        "jit=off",
    ], custom.stderr


def test_debug_is_off_unless_asked_for():
    code = "from django.conf import settings; print(settings.DEBUG)"
    key = secrets.token_urlsafe(50)
    assert run_manage(
        "shell", "--no-imports", "-c", code, DJANGO_SECRET_KEY=key
    ).stdout.split() == ["False"]
    assert run_manage(
        "shell", "--no-imports", "-c", code, DJANGO_SECRET_KEY=key, DJANGO_DEBUG="1"
    ).stdout.split() == ["True"]


def test_without_debug_and_key_no_server_starts_but_the_scorer_runs(tmp_path):
    out = run_manage("check")
    assert out.returncode != 0 and "DJANGO_SECRET_KEY must be set" in out.stderr
    wsgi = subprocess.run(
        [sys.executable, "-c", "import config.wsgi"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")},
    )
    assert wsgi.returncode != 0 and "DJANGO_SECRET_KEY must be set" in wsgi.stderr
    (tmp_path / "j.csv").write_text("question_id,synset_id,answer,level\nQ1,1,x,S\n")
    (tmp_path / "r.tsv").write_text("Q1\t1\tx\n")
    score = run_manage("score", "--judgments", str(tmp_path / "j.csv"), str(tmp_path / "r.tsv"))
    assert score.returncode == 0, score.stderr


def test_make_demo_turns_debug_on():
    makefile = (ROOT / "Makefile").read_text()
    assert "demo: export DJANGO_DEBUG := 1" in makefile
