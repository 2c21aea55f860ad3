"""Subprocesses of the app against the test database (shared by the fault tests)."""

from __future__ import annotations

import fcntl
import hashlib
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from django.db import connection

ROOT = Path(__file__).resolve().parents[2]


def database_url() -> str:
    """The URL of the test database this run uses (pytest-django's test_<name>)."""
    s = connection.settings_dict
    auth = s["USER"] + (f":{s['PASSWORD']}" if s["PASSWORD"] else "")
    return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


def app_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}
    # production settings (DJANGO_DEBUG is off by default), with a key
    env.update(
        DATABASE_URL=database_url(),
        PYTHONPATH=str(ROOT),
        DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
    )
    env.update(extra)
    return env


def admin_sql(sql: str, *params) -> list:
    """Run ``sql`` on the server's maintenance database (not the test database)."""
    import psycopg

    s = connection.settings_dict
    with psycopg.connect(
        host=s["HOST"] or "127.0.0.1",
        port=s["PORT"] or 5432,
        user=s["USER"],
        password=s["PASSWORD"] or None,
        dbname="postgres",
        autocommit=True,
    ) as conn:
        cur = conn.execute(sql, params or None)
        return cur.fetchall() if cur.description else []


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


_collected: list[bool] = []


def _static_digest() -> str:
    """What the collected files depend on: Django's version (the admin's files) and every
    file under static/ (its path, size and modification time)."""
    import django

    h = hashlib.sha256(django.__version__.encode())
    for path in sorted((ROOT / "static").rglob("*")):
        if path.is_file():
            st = path.stat()
            h.update(f"{path.relative_to(ROOT)}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    return h.hexdigest()[:16]


def collect_static(env: dict) -> None:
    """The static files production settings serve (collectstatic's manifest), collected
    once for the checkout, under a lock, then marked done (``STATIC_ROOT/.collected-*``):
    a collectstatic rewrites hashed files (deleted, then saved again), so one running in
    another test process while a gunicorn boots there made whitenoise's scan of
    STATIC_ROOT fail with FileNotFoundError (seen twice in CI: the worker failed to boot).
    With the mark, only the first process collects; the others wait for it, then skip."""
    if _collected:
        return
    digest = hashlib.sha256(str(ROOT).encode()).hexdigest()[:12]
    lock = Path(tempfile.gettempdir()) / f"qasynset-collectstatic-{digest}.lock"
    done = ROOT / "staticfiles" / f".collected-{_static_digest()}"
    with lock.open("w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        if not done.exists():
            subprocess.run(
                [sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"],
                cwd=ROOT,
                env=env,
                check=True,
            )
            done.touch()
    _collected.append(True)


def start_gunicorn(
    port: int, log: Path, workers: int = 2, threads: int = 0, **extra_env
) -> subprocess.Popen:
    """gunicorn on the test database: sync workers, or gthread ones with ``threads``;
    ``extra_env`` adds settings (environment variables)."""
    env = app_env(
        DJANGO_DEBUG="0",
        DJANGO_ALLOWED_HOSTS="127.0.0.1",
        DJANGO_SECURE_SSL_REDIRECT="0",
        DJANGO_SECURE_COOKIES="0",
        DJANGO_CONN_MAX_AGE="60",
        **extra_env,
    )
    collect_static(env)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "config.wsgi",
            "-w",
            str(workers),
            "-b",
            f"127.0.0.1:{port}",
            "--timeout",
            "30",
            "--graceful-timeout",
            "5",
            *(["-k", "gthread", "--threads", str(threads)] if threads else []),
        ],
        cwd=ROOT,
        env=env,
        stdout=open(log, "w"),
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("gunicorn exited at start:\n" + log.read_text()[-2000:])
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError("gunicorn did not start")


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
