"""Which failed requests are asked again and after how long: client-go's rules, bounded (cluster/retry.py)."""

from __future__ import annotations

import pytest

from trainspec.cluster.retry import MAX_RETRIES, MAX_WAIT, after_connection_error, after_status, backoff


def test_a_named_retry_after_is_waited_and_capped():
    assert after_status(429, "storage is (re)initializing", "1", 1).delay == 1
    assert after_status(429, "too many requests", "3600", 1).delay == MAX_WAIT
    assert after_status(500, "etcdserver: leader changed", "2", 1).delay == 2  # a 5xx with Retry-After


@pytest.mark.parametrize("code, message", [(503, "storage is (re)initializing"), (503, ""), (502, "bad gateway"),
                                           (504, "gateway timeout"), (500, "storage is (re)initializing")])
def test_transient_answers_back_off_exponentially_without_retry_after(code, message):
    delays = [after_status(code, message, None, n).delay for n in (1, 2, 3, 4, 5)]
    assert delays == [0.5, 1, 2, 4, 4] == [backoff(n) for n in (1, 2, 3, 4, 5)]


@pytest.mark.parametrize("code, message", [(422, "is invalid"), (409, "conflict"), (403, "forbidden"),
                                           (404, "not found"), (500, "internal error"), (400, "bad request")])
def test_a_failure_that_another_try_will_not_cure_is_not_retried(code, message):
    assert after_status(code, message, None, 1) is None


def test_retries_are_bounded_as_client_gos():
    assert after_status(503, "", None, MAX_RETRIES) is not None
    assert after_status(503, "", None, MAX_RETRIES + 1) is None
    assert after_status(429, "", "1", MAX_RETRIES + 1) is None


@pytest.mark.parametrize("text, retried", [
    ("ProtocolError: ('Connection aborted.', ConnectionResetError(104, 'Connection reset by peer'))", True),
    ("ProtocolError: ('Connection aborted.', RemoteDisconnected('Remote end closed connection'))", True),
    ("MaxRetryError: Failed to establish a new connection: [Errno 111] Connection refused", False),
    ("ReadTimeoutError: Read timed out. (read timeout=60)", False),
    ("SSLError: [SSL: WRONG_VERSION_NUMBER] wrong version number", False),
])
def test_a_reset_connection_is_retried_a_refused_one_is_not(text, retried):
    assert (after_connection_error(text, 1) is not None) is retried
