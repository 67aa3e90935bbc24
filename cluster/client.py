"""The one module that talks to the API server, and the only one that imports the `kubernetes` client.

Configuration follows kubectl: `--kubeconfig`, else `KUBECONFIG` (a list of files, merged), else
~/.kube/config; `--context`; `-n/--namespace`, else the context's namespace, else "default"; and
in a pod with none of these, the in-cluster service account. Requests are plain REST calls through
the client's ApiClient (JSON in, JSON out), so every answer, error or not, is data the pure
modules read. Failures become one-line `ClusterError`s; an error answer becomes `ApiFailure`.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from collections.abc import Iterator
from typing import Any

from .errors import ApiFailure, ClusterError, parse_status

CONNECT_TIMEOUT, READ_TIMEOUT = 10, 60
APPLY_PATCH = "application/apply-patch+yaml"


_WARNING = re.compile(r'^\s*(\d{3})\s+\S+\s+"((?:[^"\\]|\\.)*)"')


def warning_text(header: str) -> str:
    """The text of one RFC 7234 warning value (`299 - "text"`) as the API server writes it; the value as is
    when it is not in that form."""
    match = _WARNING.match(header)
    return re.sub(r"\\(.)", r"\1", match.group(2)) if match else header.strip()


def _network_errors() -> tuple[type[BaseException], ...]:
    import urllib3

    return (urllib3.exceptions.HTTPError, OSError)


class _Transient(Exception):
    """A failed attempt: `final` is what is raised when it is not retried (or retried too often)."""

    def __init__(self, final: Exception, status: Any, retry_after: str | None, text: str = ""):
        super().__init__(str(final))
        self.final, self.status, self.retry_after, self.text = final, status, retry_after, text


def _header(headers: Any, name: str) -> str | None:
    if headers is None:
        return None
    try:
        value = headers.get(name)
    except AttributeError:
        return None
    return None if value is None else str(value)


def _tmpfs() -> str | None:
    # The client writes inline certificate data from the kubeconfig to files for urllib3: on tmpfs, not disk.
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


class Cluster:
    def __init__(self, kubeconfig: str | None = None, context: str | None = None, namespace: str | None = None):
        try:
            from kubernetes import client, config
            from kubernetes.config.config_exception import ConfigException
        except ModuleNotFoundError:  # pragma: no cover - a declared dependency
            raise ClusterError("the cluster commands need the `kubernetes` package: pip install kubernetes") from None
        from .kubeconfig import candidate_files, chosen_context, merge

        configuration = client.Configuration()
        env = os.environ.get("KUBECONFIG")
        paths, explicit = candidate_files(kubeconfig, env, os.path.expanduser("~"))
        files = os.pathsep.join(paths)
        self.context_namespace = "default"
        self.where = ""
        try:
            merged = merge(paths, explicit)
            if merged.config is not None:
                # kubectl's merge (first current-context and first definition of a name win), loaded as a dict:
                # the client's own KUBECONFIG merge lets the last file's current-context win
                name, chosen = chosen_context(merged.config, context, files)
                self.context_namespace = chosen.get("namespace") or "default"
                self.where = f"context {name}"
                config.load_kube_config_from_dict(merged.config, context=name, client_configuration=configuration,
                                                  persist_config=False, temp_file_path=_tmpfs())
            elif context:
                raise ClusterError(f"--context {context}: no kubeconfig at {files} (set KUBECONFIG or --kubeconfig)")
            elif os.environ.get("KUBERNETES_SERVICE_HOST"):
                try:
                    config.load_incluster_config(client_configuration=configuration)
                except ConfigException as exc:
                    raise ClusterError(f"no kubeconfig at {files}, and the in-cluster service account cannot be "
                                       f"used: {exc}") from None
                try:
                    with open("/var/run/secrets/kubernetes.io/serviceaccount/namespace", encoding="utf-8") as f:
                        self.context_namespace = f.read().strip() or "default"
                except OSError:
                    pass
                self.where = "in-cluster service account"
            else:
                raise ClusterError(f"no cluster configured: no kubeconfig at {files} and not running in a pod "
                                   "(set KUBECONFIG, or --kubeconfig FILE)")
        except ConfigException as exc:
            raise ClusterError(f"cannot use the kubeconfig: {str(exc).splitlines()[0] if str(exc) else exc}") \
                from None
        except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
            raise ClusterError(f"cannot read the kubeconfig {files}: {exc}") from None
        configuration.retries = 0  # an unreachable server is an error now, not after urllib3's three retries
        self.host = configuration.host
        self.namespace = namespace or self.context_namespace
        self.explicit_namespace = namespace is not None
        self._api = client.ApiClient(configuration)
        self._warned: set[str] = set()

    # -- requests ------------------------------------------------------------------------------

    def request(self, method: str, path: str, query: dict | None = None, body: Any = None,
                content_type: str = "application/json", timeout: Any = (CONNECT_TIMEOUT, READ_TIMEOUT)) -> Any:
        response = self._call(method, path, query, body, content_type, timeout)
        try:
            data = response.data
        except Exception as exc:
            raise self._unreachable(exc) from None
        finally:
            response.release_conn()
        try:
            return json.loads(data) if data else None
        except ValueError:
            return data.decode("utf-8", "replace")

    def stream(self, path: str, query: dict | None = None) -> Iterator[bytes]:
        """The body as it comes (a followed log), line by line."""
        response = self._call("GET", path, query, None, "application/json", (CONNECT_TIMEOUT, None),
                              accept="application/json, */*")  # kubectl's: a log is text, its error a Status
        pending = b""
        try:
            for chunk in response.stream(4096, decode_content=True):
                pending += chunk
                *lines, pending = pending.split(b"\n")
                yield from (line + b"\n" for line in lines)
            if pending:
                yield pending
        except _network_errors() as exc:
            raise self._unreachable(exc) from None
        finally:
            response.release_conn()

    def _call(self, method: str, path: str, query: dict | None, body: Any, content_type: str, timeout: Any,
              accept: str = "application/json"):
        """The raw urllib3 response of a 2xx answer; ApiFailure with the Status of any other. A transient
        failure (retry.py: 429, 503 "storage is (re)initializing", a reset connection...) is asked again
        after a bounded wait, at most retry.MAX_RETRIES times, as client-go does."""
        from . import retry

        attempt = 0
        while True:
            attempt += 1
            try:
                return self._call_once(method, path, query, body, content_type, timeout, accept)
            except _Transient as failure:
                decision = (retry.after_status(failure.status.code, failure.status.message, failure.retry_after,
                                               attempt) if failure.status is not None
                            else retry.after_connection_error(failure.text, attempt))
                if decision is None:
                    raise failure.final from None
                print(f"trainspec: warning: {method} {path}: {decision.why}; retrying in {decision.delay:g} s "
                      f"({attempt} of {retry.MAX_RETRIES})", file=sys.stderr)
                time.sleep(decision.delay)

    def _call_once(self, method: str, path: str, query: dict | None, body: Any, content_type: str, timeout: Any,
                   accept: str):
        from kubernetes.client.exceptions import ApiException

        params = [(k, v) for k, v in (query or {}).items() if v is not None]
        headers = {"Accept": accept, "Content-Type": content_type}
        try:
            request = self._api.param_serialize(method, path, query_params=params, header_params=headers,
                                                body=body, auth_settings=["BearerToken"])
            response = self._api.call_api(*request, _request_timeout=timeout)
        except ApiException as exc:
            status = parse_status(exc.status or 0, exc.body or exc.reason or "")
            raise _Transient(ApiFailure(status), status, _header(getattr(exc, "headers", None), "Retry-After")) \
                from None
        except _network_errors() as exc:
            raise _Transient(self._unreachable(exc), None, None, f"{type(exc).__name__}: {exc}") from None
        if not 200 <= response.status <= 299:
            try:
                data = response.read()
            except _network_errors() as exc:
                raise _Transient(self._unreachable(exc), None, None, f"{type(exc).__name__}: {exc}") from None
            status = parse_status(response.status, data or response.reason or "")
            raise _Transient(ApiFailure(status), status, _header(response.getheaders(), "Retry-After"))
        self._warn(response.response)
        return response.response

    def _warn(self, raw: Any) -> None:
        """The server's `Warning: 299 - "..."` headers (deprecated versions, CEL warnings, fields it dropped),
        printed once each on stderr, as kubectl does."""
        headers = getattr(raw, "headers", None)
        getlist = getattr(headers, "getlist", None)
        for value in (getlist("Warning") if getlist else []):
            text = warning_text(value)
            if text and text not in self._warned:
                self._warned.add(text)
                print(f"trainspec: warning: {text}", file=sys.stderr)

    def _unreachable(self, exc: BaseException) -> ClusterError:
        reason = getattr(exc, "reason", None) or exc
        text = str(reason)
        if "Connection refused" in text or "Errno 111" in text:
            text = "connection refused"
        elif "timed out" in text.lower():
            text = "timed out"
        elif "SSL" in text or "SSLError" in type(reason).__name__:
            import re

            match = re.search(r"\[SSL[^\]]*\] ([^(]+?)\s*\(_ssl", text)  # "[SSL: X] what went wrong (_ssl.c:N)"
            text = "TLS failed: " + (match.group(1) if match else text.splitlines()[0][:160])
        else:
            text = text.splitlines()[0][:200] if text else type(exc).__name__
        via = f" ({self.where})" if self.where else ""
        return ClusterError(f"cannot reach the cluster at {self.host}{via}: {text}")
