"""Login throttling: wrong passwords counted per (username, client), per username and per
client; a correct password never counts (README, "Login throttling").

Keyed as django-axes's ``AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]``, with
the slower global caps django-ratelimit's docs stack on top of it:

- a *pair* (username, client address) is locked after MAX_FAILURES wrong passwords in
  WINDOW_SECONDS: the guesser at that address, no one else (a username known to anyone
  cannot lock its owner out);
- a *username*, past USER_MAX_FAILURES wrong passwords from all addresses together in
  USER_WINDOW_SECONDS (a distributed guess), lets each address one check: an address
  with a failure for that name is refused, one without is still checked;
- an *address*, past ADDRESS_MAX_FAILURES wrong passwords for any names in
  WINDOW_SECONDS (password spraying), is locked; the number leaves a lab or a class
  behind one NAT room for its typos.

Each counter is one integer in the shared cache, ``failures * SLOT + checks in flight``,
changed only by atomic increments (``config.cache.DatabaseCache.incr``).  A request takes
a place in its three counters before its password is checked and, when the check is
over, turns it into a failure or gives it back; a request refused with 429 gives its
place back at once.  So parallel guesses cannot pass a limit (a check in flight counts as
a failure until it is over), and a correct password is never refused because others are
logging in at the same moment: a request with no place left waits for the checks in
flight (BUSY_WAIT_SECONDS at most) instead of being refused.

Windows are fixed and staggered per key (django-ratelimit's way), named in the key, so a
place is always given back to the counter it was taken from.  The username is keyed the
way authentication reads it (stripped, NFKC, case-folded), so no other spelling of a name
gets through.  Behind a reverse proxy the client address comes from the header named by
``settings.CLIENT_IP_HEADER``.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import time
import zlib
from dataclasses import dataclass
from enum import Enum

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import UsernameField
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

MAX_FAILURES = 5  # wrong passwords per (username, address) ...
WINDOW_SECONDS = 15 * 60  # ... and ADDRESS_MAX_FAILURES per address, per this window
USER_MAX_FAILURES = 30  # wrong passwords per username, all addresses together ...
USER_WINDOW_SECONDS = 60 * 60  # ... per this window
ADDRESS_MAX_FAILURES = 100  # wrong passwords per address, all usernames together
# a request with no place left waits while the checks in flight finish, however many are
# queued (each takes a password hash, ~0.3 s), but gives up with a 429 "try again in a few
# seconds" after BUSY_WAIT_SECONDS in which none finished (a worker killed mid-check holds
# its place until the window ends) or BUSY_MAX_WAIT_SECONDS in all (gunicorn's 30 s worker
# timeout usually comes first; with 4 sync workers no pair ever waits)
BUSY_WAIT_SECONDS = 10
BUSY_MAX_WAIT_SECONDS = 60

SLOT = 1_000_000  # a failure's weight in a counter; checks in flight stay far below it
GRACE_SECONDS = 60  # a counter outlives its window, so a late give-back finds it


def client_address(request: HttpRequest) -> str:
    """The client's address: REMOTE_ADDR, or, when ``settings.CLIENT_IP_HEADER`` names the
    header a trusted reverse proxy sets (``X-Forwarded-For``, ``X-Real-IP``), the address
    the proxy put there.  In a comma list the last entry is the one the proxy added (the
    ones before it are whatever the client sent)."""
    header = getattr(settings, "CLIENT_IP_HEADER", "")
    if header:
        value = request.META.get("HTTP_" + header.upper().replace("-", "_"), "")
        address = value.split(",")[-1].strip()
        if address:
            return address[:64]
    return request.META.get("REMOTE_ADDR", "unknown")


def username_key(raw: str) -> str:
    """The throttling key of a submitted username: what authentication looks up (the
    login form strips and NFKC-normalises it), case-folded."""
    name = UsernameField().to_python(raw or "") or ""
    return name.casefold()[:150]


def count_attempt(key: str, seconds: int = WINDOW_SECONDS) -> int:
    """Add one to ``key``'s counter (created for ``seconds``) and return the new value;
    atomic with a cache whose ``incr`` is (config.cache.DatabaseCache, memcached, redis)."""
    if cache.add(key, 1, seconds):
        return 1
    try:
        return cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, seconds)
        return 1


@dataclass(frozen=True)
class Counter:
    """One throttling counter in its current window."""

    key: str
    ends_at: float  # when the window ends (time.time())

    @classmethod
    def of(cls, scope: str, ident: str, seconds: int, now: float) -> Counter:
        # hashed: any username fits a cache key; staggered: the locks of many keys do not
        # all end at the same second
        digest = hashlib.sha256(ident.encode()).hexdigest()[:40]
        offset = zlib.crc32(digest.encode()) % seconds
        start = int((now - offset) // seconds * seconds + offset)
        return cls(f"login:{scope}:{digest}:{start}", start + seconds)

    def add(self, delta: int, *, if_missing: int | None = None) -> int | None:
        """Add ``delta`` atomically and return the new value; a counter not there (new,
        past its window, or culled) starts at ``if_missing``, or stays away (None)."""
        try:
            return cache.incr(self.key, delta)
        except ValueError:
            if if_missing is None:
                return None
            if cache.add(self.key, if_missing, self.ends_at - time.time() + GRACE_SECONDS):
                return if_missing
            return cache.incr(self.key, delta)  # another request created it meanwhile


def login_counters(*, username: str, address: str, now: float | None = None) -> dict:
    """The counters a login as ``username`` (as typed) from ``address`` counts in:
    ``{"address": Counter, "user": Counter, "pair": Counter}``."""
    now = time.time() if now is None else now
    name = username_key(username)
    return {
        "address": Counter.of("address", address, WINDOW_SECONDS, now),
        "user": Counter.of("user", name, USER_WINDOW_SECONDS, now),
        "pair": Counter.of("pair", json.dumps([name, address]), WINDOW_SECONDS, now),
    }


def login_counter_keys(*, username: str, address: str) -> dict[str, str]:
    """The cache keys of ``login_counters`` (for tests and operators clearing a lock)."""
    return {k: c.key for k, c in login_counters(username=username, address=address).items()}


class Verdict(Enum):
    CHECK = "check"  # the password may be checked
    LOCKED = "locked"  # a limit is reached by failures
    BUSY = "busy"  # checks in flight could reach a limit: wait for them


def verdict(values: dict[str, int], *, own: int) -> Verdict:
    """What the counter ``values`` (``failures * SLOT + in flight``, ``own`` of the places
    in flight being this request's) allow: LOCKED when the failures alone reach a limit,
    CHECK when the limits hold even if every other check in flight fails, BUSY otherwise."""
    failed, others = {}, {}
    for name, value in values.items():
        failed[name], in_flight = divmod(max(value, 0), SLOT)
        others[name] = max(in_flight - own, 0)

    def pair_limit(user_failures: int) -> int:
        return MAX_FAILURES if user_failures < USER_MAX_FAILURES else 1

    if failed["address"] >= ADDRESS_MAX_FAILURES or failed["pair"] >= pair_limit(failed["user"]):
        return Verdict.LOCKED
    worst = {name: failed[name] + others[name] for name in values}
    if worst["address"] < ADDRESS_MAX_FAILURES and worst["pair"] < pair_limit(worst["user"]):
        return Verdict.CHECK
    return Verdict.BUSY


class LoginAttempt:
    """One login POST's places in its counters: ``enter`` takes them (or says why not),
    ``leave`` turns them into failures or gives them back."""

    def __init__(self, request: HttpRequest):
        self.counters = login_counters(
            username=request.POST.get("username", ""), address=client_address(request)
        )
        self.held: list[Counter] = []

    def _peek(self) -> dict[str, int]:
        found = cache.get_many([c.key for c in self.counters.values()])
        return {name: found.get(c.key, 0) for name, c in self.counters.items()}

    def _take(self) -> Verdict:
        # the address first: a locked address adds no username counters (which could
        # otherwise crowd the cache until it culls the counter of a locked username)
        values = {}
        for name in ("address", "user", "pair"):
            counter = self.counters[name]
            values[name] = counter.add(1, if_missing=1)
            self.held.append(counter)
            if name == "address" and values[name] // SLOT >= ADDRESS_MAX_FAILURES:
                self.leave(failed=False)
                return Verdict.LOCKED
        found = verdict(values, own=1)
        if found is not Verdict.CHECK:
            self.leave(failed=False)
        return found

    def enter(self) -> Verdict:
        """CHECK with places held, or LOCKED / BUSY (after waiting) with none."""
        started = time.monotonic()
        progress, seen = started, None
        while True:
            # a read first: refusing a locked client writes nothing
            values = self._peek()
            found = verdict(values, own=0)
            if found is Verdict.CHECK:
                found = self._take()
            if found is not Verdict.BUSY:
                return found
            now = time.monotonic()
            if values != seen:
                progress, seen = now, values
            if now - progress > BUSY_WAIT_SECONDS or now - started > BUSY_MAX_WAIT_SECONDS:
                return found
            time.sleep(random.uniform(0.05, 0.2))  # a check takes ~0.1-0.5 s

    def leave(self, *, failed: bool) -> None:
        """Turn the places held into failures, or give them back; a success also clears
        its pair's failures (the client has shown it knows the password)."""
        for counter in self.held:
            if failed:
                counter.add(SLOT - 1, if_missing=SLOT)
                continue
            value = counter.add(-1)
            if counter is self.counters["pair"] and (value or 0) >= SLOT:
                counter.add(-(value // SLOT) * SLOT)
        self.held = []

    def lock_ends_at(self) -> float:
        """When the lock LOCKED reported ends: the end of the window of the first counter
        whose failures reach its limit (for a pair locked by the username's cap, whichever
        of the two windows ends first)."""
        values = self._peek()
        failures = {name: value // SLOT for name, value in values.items()}
        ends = self.counters
        if failures["address"] >= ADDRESS_MAX_FAILURES:
            return ends["address"].ends_at
        if failures["pair"] >= MAX_FAILURES:
            return ends["pair"].ends_at
        return min(ends["pair"].ends_at, ends["user"].ends_at)


class RateLimitedLoginView(auth_views.LoginView):
    """Django's LoginView, its password checks throttled by LoginAttempt: a refused login
    gets 429 with Retry-After."""

    def post(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not (username_key(request.POST.get("username", "")) and request.POST.get("password")):
            return super().post(request, *args, **kwargs)  # refused by the form, unchecked
        attempt = LoginAttempt(request)
        found = attempt.enter()
        if found is not Verdict.CHECK:
            return self.refused(attempt, found)
        self.logged_in = False
        try:
            return super().post(request, *args, **kwargs)
        finally:
            attempt.leave(failed=not self.logged_in)

    def form_valid(self, form):
        self.logged_in = True
        return super().form_valid(form)

    def refused(self, attempt: LoginAttempt, found: Verdict) -> HttpResponse:
        wait = 5 if found is Verdict.BUSY else math.ceil(attempt.lock_ends_at() - time.time())
        wait = max(1, wait)
        context = {
            **self.get_context_data(form=self.get_form()),
            "locked": found is Verdict.LOCKED,
            "busy": found is Verdict.BUSY,
            "minutes": math.ceil(wait / 60),
        }
        response = TemplateResponse(
            self.request, self.template_name or "registration/login.html", context, status=429
        )
        response["Retry-After"] = str(wait)
        return response
