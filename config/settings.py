"""Settings, all from the environment (STYLE.md habit 7).

DJANGO_DEBUG (default 0), DJANGO_SECRET_KEY (required when DJANGO_DEBUG=0),
DJANGO_ALLOWED_HOSTS (comma list), DATABASE_URL (SQLite file db.sqlite3 by default;
postgres://user@host:port/name for PostgreSQL), DJANGO_SECURE_SSL_REDIRECT (default 1 when
not in debug; set 0 behind a proxy that already redirects), DJANGO_SECURE_COOKIES (default 1
when not in debug; 0 only for plain-http runs on 127.0.0.1 such as bench/load.py),
DJANGO_CONN_MAX_AGE (0), RUN_UPLOAD_MAX_MB (50), IMPORT_MAX_MB (50), ARCHIVE_MAX_MB (512),
ARCHIVE_MAX_ROWS (500000), ARCHIVE_MAX_ANSWERS (12000000), ARCHIVE_JSON_MAX_MB (32),
DJANGO_CLIENT_IP_HEADER (unset), DJANGO_DB_STATEMENT_TIMEOUT_MS (20000),
DJANGO_DB_LOCK_TIMEOUT_MS (5000), DJANGO_UPLOAD_TEMP_DIR (var/uploads), API_RATE (120/min:
requests per API user and window; units s, min, h, day); background jobs: JOBS_QUEUE
(database; redis; immediate), REDIS_URL, JOBS_QUEUE_NAME (default), JOBS_STALE_AFTER (120 s),
JOBS_TIMEOUT (21600 s), JOBS_DB_STATEMENT_TIMEOUT_MS (3600000), JOBS_DB_LOCK_TIMEOUT_MS (60000).
"""

import os
from importlib.util import find_spec
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


# Off unless asked for (`make demo` and the test settings turn it on).
DEBUG = env_bool("DJANGO_DEBUG", False)
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "")
# Without a key in production the web server refuses to start (config/wsgi.py, asgi.py)
# and so do the commands that run system checks (config/checks.py); `manage.py score`,
# which needs neither key nor database, still runs.
SECRET_KEY_MISSING = not SECRET_KEY and not DEBUG
SECRET_KEY_MESSAGE = (
    "DJANGO_SECRET_KEY must be set when DJANGO_DEBUG is off (the default); "
    "for local development set DJANGO_DEBUG=1"
)
if not SECRET_KEY and DEBUG:
    SECRET_KEY = "dev-only-insecure-key-do-not-use-in-production-" + "x" * 16

ALLOWED_HOSTS = [
    h.strip()
    for h in os.environ.get(
        "DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost" if not DEBUG else "*"
    ).split(",")
    if h.strip()
]

INSTALLED_APPS = [
    "config.apps.ProjectConfig",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_htmx",
    "template_partials",
    # Django's task framework (the django-tasks backport of django.tasks) and its database
    # queue (django_tasks_db, the default); the Redis queue's apps are added below
    "django_tasks",
    "django_tasks_db",
    "jobs",
    "annotate",
    "evaluation",
    "api",
]

# Static files are answered by whitenoise before anything that touches the database
# (sessions, authentication), and an over-size body is refused before anything reads it.
MIDDLEWARE = [
    "config.middleware.LanguageScopeMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "config.middleware.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "config.middleware.RequestSizeLimitMiddleware",
    "config.middleware.ControlCharacterMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    "annotate.language.UserLanguageMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "config.middleware.DebugNotFoundMiddleware",  # DEBUG only: the app's 404, not Django's
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # a score page whose scores a job computes answers the job's progress (202)
    "evaluation.middleware.ScoresPendingMiddleware",
]

ROOT_URLCONF = "config.urls"

# django-ninja's vendored Swagger UI (static files and page template: the API docs page
# loads nothing from a CDN, ``api.endpoints.Swagger``), found without importing ninja:
# as an installed app it was imported at every start, half a second of each manage.py
NINJA_DIR = Path(find_spec("ninja").origin).parent
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates", NINJA_DIR / "templates"],
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "annotate.context_processors.navigation",
            ],
            "builtins": [
                "template_partials.templatetags.partials",
                "django.templatetags.i18n",
            ],
            "loaders": [
                (
                    "template_partials.loader.Loader",
                    [
                        (
                            "django.template.loaders.cached.Loader",
                            [
                                "django.template.loaders.filesystem.Loader",
                                "django.template.loaders.app_directories.Loader",
                            ],
                        ),
                    ],
                ),
            ],
        },
    },
]

WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL") or f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        conn_max_age=int(os.environ.get("DJANGO_CONN_MAX_AGE", "0")),
        # a persistent connection broken by a database restart is replaced, not reused
        conn_health_checks=True,
    )
}
# A stuck database must not hang the site: on PostgreSQL a statement is cancelled after
# DJANGO_DB_STATEMENT_TIMEOUT_MS and a lock wait given up after DJANGO_DB_LOCK_TIMEOUT_MS
# (0 turns either off), well within gunicorn's 30 s worker timeout; the request then gets
# a 503 page (config/errors.py) and the worker is free again.
DB_STATEMENT_TIMEOUT_MS = int(os.environ.get("DJANGO_DB_STATEMENT_TIMEOUT_MS", "20000"))
DB_LOCK_TIMEOUT_MS = int(os.environ.get("DJANGO_DB_LOCK_TIMEOUT_MS", "5000"))
# JIT compilation off: the pages' queries are short, and PostgreSQL compiled any whose
# estimated cost passed jit_above_cost (the dashboard's stuck questions at size M: 15 ms
# of execution, 430 ms of compiling)
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    DATABASES["default"].setdefault("OPTIONS", {})
    DATABASES["default"]["OPTIONS"]["options"] = (
        f"-c statement_timeout={DB_STATEMENT_TIMEOUT_MS} -c lock_timeout={DB_LOCK_TIMEOUT_MS}"
        " -c jit=off"
    )
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"].setdefault("OPTIONS", {})
    # wait for a concurrent writer instead of failing at once; write transactions start
    # with BEGIN IMMEDIATE so two writers never deadlock on a lock upgrade
    # write-ahead log: readers never wait for the writer, and a commit is one fsync of the
    # log (synchronous stays FULL: an acknowledged judgment survives a power cut)
    DATABASES["default"]["OPTIONS"].update(
        {
            "timeout": 20,
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;",
        }
    )

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "annotate:collection-list"
LOGOUT_REDIRECT_URL = "login"

# the pages' languages (README "Languages" says how to add one): each person's choice
# (annotate.language), else the language cookie, else the browser's Accept-Language
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("ja", "日本語")]
LOCALE_PATHS = [BASE_DIR / "locale"]
LANGUAGE_COOKIE_SAMESITE = "Lax"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static", NINJA_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if not DEBUG
        else "django.contrib.staticfiles.storage.StaticFilesStorage",
    },
}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
SESSION_ENGINE = "django.contrib.sessions.backends.db"
# Shared state (login throttling) lives in the database, so every worker sees it; computed
# scores are cached per process, keyed by the judgment version, so they are never stale.
CACHES = {
    # Django's database cache with an atomic incr (the login throttle's counters)
    "default": {
        "BACKEND": "config.cache.DatabaseCache",
        "LOCATION": "django_cache",
        "OPTIONS": {"MAX_ENTRIES": 100_000},
    },
    "scores": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "LOCATION": "scores",
        "OPTIONS": {"MAX_ENTRIES": 200},
    },
}

# Background jobs (jobs/, DESIGN.md section 8) run on Django's task framework.  JOBS_QUEUE
# picks the queue: "database" (the default: the database is the queue, no extra service;
# run `manage.py jobs_worker` beside the server), "redis" (RQ on REDIS_URL, workers on as
# many machines as needed, each `manage.py jobs_worker`) or "immediate" (no worker: a job
# runs inside the request that starts it, as the tests do).  A running job writes a
# heartbeat every second; one silent for JOBS_STALE_AFTER seconds (its worker killed on
# another machine) is failed; a dead worker on the same machine fails its job at once.
JOBS_QUEUE = os.environ.get("JOBS_QUEUE", "database")
REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
# the queue's name: two deployments (or test runs) sharing one Redis database each use
# their own
JOBS_QUEUE_NAME = os.environ.get("JOBS_QUEUE_NAME", "default")
JOBS_STALE_AFTER = int(os.environ.get("JOBS_STALE_AFTER", "120"))
# A job is long by nature: in a worker, a PostgreSQL statement may run for up to an hour
# and a lock be waited for up to a minute (the web's 20 s and 5 s would cut a large import)
JOBS_DB_STATEMENT_TIMEOUT_MS = int(os.environ.get("JOBS_DB_STATEMENT_TIMEOUT_MS", "3600000"))
JOBS_DB_LOCK_TIMEOUT_MS = int(os.environ.get("JOBS_DB_LOCK_TIMEOUT_MS", "60000"))
_TASK_BACKENDS = {
    "database": "django_tasks_db.DatabaseBackend",
    "redis": "django_tasks_rq.RQBackend",
    "immediate": "django_tasks.backends.immediate.ImmediateBackend",
}
if JOBS_QUEUE not in _TASK_BACKENDS:
    raise ImproperlyConfigured(
        f"JOBS_QUEUE={JOBS_QUEUE!r}: expected one of {', '.join(_TASK_BACKENDS)}"
    )
_JOB_QUEUES = sorted({"default", JOBS_QUEUE_NAME})
TASKS = {"default": {"BACKEND": _TASK_BACKENDS[JOBS_QUEUE], "QUEUES": _JOB_QUEUES}}
# RQ's queues (used when JOBS_QUEUE=redis); a job may run for up to JOBS_TIMEOUT seconds (6
# hours), then RQ stops it (it fails, nothing written).  django_rq gives the rqworker
# command and an RQ dashboard in the admin
JOBS_TIMEOUT = int(os.environ.get("JOBS_TIMEOUT", str(6 * 3600)))
RQ_QUEUES = {q: {"URL": REDIS_URL, "DEFAULT_TIMEOUT": JOBS_TIMEOUT} for q in _JOB_QUEUES}
if JOBS_QUEUE == "redis":
    INSTALLED_APPS += ["django_rq", "django_tasks_rq"]

# Uploads: runs up to RUN_UPLOAD_MAX_MB, imports up to IMPORT_MAX_MB.  A request body
# larger than the largest of them (plus 1 MB for the other form fields) is refused with 413
# before it is read (config.middleware.RequestSizeLimitMiddleware).  Files above 5 MB are
# spooled to FILE_UPLOAD_TEMP_DIR (DJANGO_UPLOAD_TEMP_DIR, default var/uploads in the
# project), where files a killed worker left behind are deleted (config/uploads.py).
RUN_UPLOAD_MAX_MB = int(os.environ.get("RUN_UPLOAD_MAX_MB", "50"))
IMPORT_MAX_MB = int(os.environ.get("IMPORT_MAX_MB", "50"))  # questions/answers/judgments
# a collection archive (import_collection) once unpacked, all members together
ARCHIVE_MAX_MB = int(os.environ.get("ARCHIVE_MAX_MB", "512"))
# its memory budget: the rows an import holds until it writes them (CSV rows and events
# together, the run answers aside) and its JSON members (held parsed), so that no archive
# under ARCHIVE_MAX_MB takes more than about 600 MB (bench/archive_memory.py: a string
# held takes some 600 bytes, an event some 1,400)
ARCHIVE_MAX_ROWS = int(os.environ.get("ARCHIVE_MAX_ROWS", "500000"))
# the run answers are streamed into the database, never held (8 bytes a row are kept to
# find a rank given twice): 12 million admits size L (5,000 questions x 200 runs x 10)
ARCHIVE_MAX_ANSWERS = int(os.environ.get("ARCHIVE_MAX_ANSWERS", "12000000"))
ARCHIVE_JSON_MAX_MB = int(os.environ.get("ARCHIVE_JSON_MAX_MB", "32"))
MAX_REQUEST_BODY_BYTES = (max(RUN_UPLOAD_MAX_MB, IMPORT_MAX_MB) + 1) * 1024 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
FILE_UPLOAD_TEMP_DIR = os.environ.get("DJANGO_UPLOAD_TEMP_DIR") or str(BASE_DIR / "var" / "uploads")
FILE_UPLOAD_HANDLERS = [
    "django.core.files.uploadhandler.MemoryFileUploadHandler",
    "config.uploads.CleaningTemporaryFileUploadHandler",
]

# Security: secure cookies and HTTPS when not in debug; headers always.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'self'; "
    "form-action 'self'; frame-ancestors 'none'"
)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False  # htmx reads the token from the page, not the cookie
if not DEBUG:
    SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", True)
    LANGUAGE_COOKIE_SECURE = SESSION_COOKIE_SECURE
    SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", True)
    SECURE_HSTS_SECONDS = int(os.environ.get("DJANGO_HSTS_SECONDS", "31536000"))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# Behind a reverse proxy every request comes from the proxy's address: name the header the
# proxy sets to the client's address (X-Forwarded-For, X-Real-IP) so the login throttle
# counts per client.  Off by default: a header a client can set itself must not be trusted.
CLIENT_IP_HEADER = os.environ.get("DJANGO_CLIENT_IP_HEADER", "").strip()

# The REST API (api/): requests allowed per user (all their tokens) and window, counted in
# the shared cache.
API_RATE = os.environ.get("API_RATE", "120/min")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("DJANGO_LOG_LEVEL", "WARNING")},
}
