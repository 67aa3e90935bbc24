"""Which failures are worth asking again, and how long to wait first: client-go's rules, bounded.

client-go's rest.Request retries a request up to 10 times when the server answers 429 or a 5xx
with a `Retry-After` header (waiting the seconds it names), and a GET whose connection was reset
or closed early. A kube-apiserver says "storage is (re)initializing" for a resource whose watch
cache is not ready yet (right after its CRD is created again): 429 with Retry-After when it can
tell how long, else 503 with none. Both are retried here, as are 502/503/504 (a proxy or load
balancer in front of the server) and a connection reset. The requests trainspec sends are
idempotent (reads, server-side apply, deletes of a named object), so a reset is retried for every
method. Pure: no clock, no network; client.py sleeps.
"""

from __future__ import annotations

from typing import NamedTuple

MAX_RETRIES = 10  # client-go's default (rest.Request.maxRetries)
MAX_WAIT = 10.0  # seconds: a larger Retry-After is capped (nothing waits a minute on a CLI's behalf)
BACKOFF_BASE, BACKOFF_CAP = 0.5, 4.0  # without Retry-After: 0.5, 1, 2, 4, 4, ... seconds
TRANSIENT_CODES = frozenset({429, 502, 503, 504})
REINITIALIZING = "storage is (re)initializing"
# What urllib3 / http.client say when a connection broke under a request (not refused, not timed out: a server
# that is down or unreachable is an error now, not after a minute of retries).
_RESET = ("Connection reset", "Connection aborted", "RemoteDisconnected", "BadStatusLine", "Broken pipe",
          "IncompleteRead", "EOF occurred", "ProtocolError", "ECONNRESET", "Errno 104")


class Retry(NamedTuple):
    delay: float  # seconds to wait before asking again
    why: str  # what the server (or the connection) said, for the note on stderr


def parse_retry_after(value: str | None) -> float | None:
    """Retry-After in seconds (the API server writes an integer); an HTTP date or garbage is ignored."""
    if value is None:
        return None
    try:
        seconds = float(str(value).strip())
    except ValueError:
        return None
    return seconds if seconds >= 0 else None


def backoff(attempt: int) -> float:
    """The wait before retry number `attempt` (1-based) when the server named none."""
    return min(BACKOFF_CAP, BACKOFF_BASE * 2 ** (attempt - 1))


def after_status(code: int, message: str, retry_after: str | None, attempt: int) -> Retry | None:
    """Whether an error answer is retried (attempt = the retry this would be, 1-based), and after how long."""
    if attempt > MAX_RETRIES:
        return None
    named = parse_retry_after(retry_after)
    if code in TRANSIENT_CODES or (code >= 500 and (named is not None or REINITIALIZING in message)):
        delay = named if named is not None else backoff(attempt)
        why = f"{code}{': ' + message.splitlines()[0][:120] if message else ''}"
        return Retry(min(MAX_WAIT, delay), why)
    return None


def after_connection_error(text: str, attempt: int) -> Retry | None:
    """Whether a broken connection is retried: a reset or an early close, never a refusal or a timeout."""
    if attempt > MAX_RETRIES or "refused" in text.lower() or not any(mark in text for mark in _RESET):
        return None
    return Retry(backoff(attempt), "connection reset")
