"""A tiny HTTP server on 127.0.0.1 that answers the requests `trainspec apply | ps | logs | down` make,
the way a kube-apiserver does, for end-to-end tests of the CLI over real HTTP with no cluster.

It is not a Kubernetes API server: it keeps objects in a dict, validates nothing and runs no
controller. What it says is real data: discovery of the CRD groups comes from the CRDs in
reference/crds (their kinds, plurals, scope), `kubeflow.org/v1` discovery and every error body it
replays are the recorded answers of a real kube-apiserver v1.36 (reference/apiserver/), with
only names substituted. Tests that need a real server use TRAINSPEC_TEST_KUBECONFIG
(tests/cluster/test_cluster_integration.py).
"""

from __future__ import annotations

import copy
import functools
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import yaml

# Built-in kinds the CLI touches: (groupVersion, kind, plural, namespaced).
BUILTIN = [("v1", "Namespace", "namespaces", False), ("v1", "ConfigMap", "configmaps", True),
           ("v1", "Secret", "secrets", True), ("v1", "Service", "services", True), ("v1", "Pod", "pods", True),
           ("v1", "ServiceAccount", "serviceaccounts", True),
           ("v1", "PersistentVolumeClaim", "persistentvolumeclaims", True),
           ("batch/v1", "Job", "jobs", True), ("apps/v1", "Deployment", "deployments", True),
           ("scheduling.k8s.io/v1", "PriorityClass", "priorityclasses", False),
           ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "clusterrolebindings", False),
           ("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", "mutatingwebhookconfigurations",
            False),
           ("apiextensions.k8s.io/v1", "CustomResourceDefinition", "customresourcedefinitions", False)]
# Written down (the recordings hold no 403) in the shape k8s.io/apimachinery/pkg/api/errors.NewForbidden
# gives: reason Forbidden, code 403, details {name, group, kind}, the RBAC authorizer's message.
FORBIDDEN_403 = {
    "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
    "message": 'tfjobs.kubeflow.org "tf-ps" is forbidden: User "system:serviceaccount:ml:ci" cannot patch '
               'resource "tfjobs" in API group "kubeflow.org" in the namespace "ml"',
    "reason": "Forbidden", "details": {"name": "tf-ps", "group": "kubeflow.org", "kind": "tfjobs"}, "code": 403}
VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]


def recorded(reference: Path, name: str) -> tuple[int, object]:
    data = json.loads((reference / "apiserver" / f"{name}.json").read_text())
    return data["response"]["status"], data["response"]["body"]


@functools.cache
def crd_kinds(reference: Path, groups: tuple[str, ...]) -> list[tuple[str, str, str, bool]]:
    out = []
    for path in sorted((reference / "crds").rglob("*.yaml")):
        if "runtimes" in path.parts:
            continue
        for doc in yaml.load_all(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
            if not isinstance(doc, dict) or doc.get("kind") != "CustomResourceDefinition":
                continue
            spec = doc["spec"]
            if spec["group"] not in groups:
                continue
            for version in spec["versions"]:
                if version.get("served", True):
                    out.append((f"{spec['group']}/{version['name']}", spec["names"]["kind"], spec["names"]["plural"],
                                spec["scope"] == "Namespaced"))
    return out


class FakeApiServer:
    def __init__(self, reference: Path, crd_groups: tuple[str, ...] = ("kubeflow.org", "batch.volcano.sh",
                                                                       "jobset.x-k8s.io", "trainer.kubeflow.org",
                                                                       "scheduling.volcano.sh"),
                 namespaces: tuple[str, ...] = ("default", "ml")):
        self.reference = reference
        self.kinds = BUILTIN + list(crd_kinds(reference, crd_groups))
        self.namespaces = set(namespaces)
        self.store: dict[str, dict] = {}  # object path -> object
        self.version = 100  # the last resourceVersion handed out
        self.logs: dict[str, str] = {}  # pod name -> its log text
        self.requests: list[tuple[str, str, dict, object]] = []
        self.content_types: list[str] = []  # of each request, in order
        # No kube-controller-manager, as on a bare kube-apiserver: nothing removes the foregroundDeletion
        # finalizer, so a foreground-deleted object stays (deletionTimestamp set) until a test says `gc = True`.
        self.gc = False
        self.warnings: list[str] = []  # sent as `Warning: 299 - "..."` headers with every PATCH answer
        # (method, path pattern, status, body, headers, how many times: None for always)
        self.failures: list[list] = []
        self.lock = threading.Lock()
        self.last_headers: dict[str, str] = {}  # extra headers of the answer being sent (Retry-After)
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def _serve(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else None
                url = urlsplit(self.path)
                query = {k: v[0] for k, v in parse_qs(url.query).items()}
                with server.lock:
                    server.requests.append((method, url.path, query, body))
                    server.content_types.append(self.headers.get("Content-Type", ""))
                    status, answer = server.answer(method, url.path, query, body,
                                                   self.headers.get("Content-Type", ""))
                    headers = server.last_headers
                    server.last_headers = {}
                data = answer.encode() if isinstance(answer, str) else json.dumps(answer).encode()
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "text/plain" if isinstance(answer, str) else "application/json")
                self.send_header("Content-Length", str(len(data)))
                for text in server.warnings if method == "PATCH" else ():
                    self.send_header("Warning", '299 - "' + text.replace('"', '\\"') + '"')
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                self._serve("GET")

            def do_PATCH(self):
                self._serve("PATCH")

            def do_DELETE(self):
                self._serve("DELETE")

            def do_POST(self):
                self._serve("POST")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        # shutdown() waits for the serve loop to look again: every 50 ms, not the default 500 ms
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    # -- test controls --------------------------------------------------------------------------
    def __enter__(self) -> FakeApiServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def kubeconfig(self, folder: Path, namespace: str = "ml") -> Path:
        path = folder / "kubeconfig"
        path.write_text(yaml.safe_dump({
            "apiVersion": "v1", "kind": "Config", "current-context": "fake",
            "clusters": [{"name": "fake", "cluster": {"server": f"http://127.0.0.1:{self.port}"}}],
            "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "u", "namespace": namespace}}],
            "users": [{"name": "u", "user": {"token": "t"}}]}))
        return path

    def fail(self, method: str, path_regex: str, status: int, body: object, times: int | None = None,
             headers: dict[str, str] | None = None) -> None:
        """Answer matching requests with `status` and `body` (`times` times, else always)."""
        self.failures.append([method, re.compile(path_regex), status, body, headers or {}, times])

    def reinitializing(self, method: str, path_regex: str, times: int, retry_after: int | None = None) -> None:
        """The watch cache of a resource not ready yet (right after its CRD is created again), as
        k8s.io/apiserver's cacher answers: 429 TooManyRequests with Retry-After when it can tell how long
        (errors.NewTooManyRequests), else 503 ServiceUnavailable (errors.NewServiceUnavailable)."""
        if retry_after is None:
            body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                    "message": "storage is (re)initializing", "reason": "ServiceUnavailable", "code": 503}
            self.fail(method, path_regex, 503, body, times)
        else:
            body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                    "message": "storage is (re)initializing", "reason": "TooManyRequests",
                    "details": {"retryAfterSeconds": retry_after}, "code": 429}
            self.fail(method, path_regex, 429, body, times, {"Retry-After": str(retry_after)})

    def put(self, obj: dict) -> None:
        """Seed an object (a pod, another tool's object) as if a controller or user made it."""
        api, kind = obj["apiVersion"], obj["kind"]
        plural, namespaced = next((p, n) for g, k, p, n in self.kinds if g == api and k == kind)
        meta = obj["metadata"]
        self.store[self._path(api, plural, meta.get("namespace") if namespaced else None, meta["name"])] = obj

    def objects(self, label: str | None = None) -> list[dict]:
        return [o for o in self.store.values()
                if label is None or label in ((o.get("metadata") or {}).get("labels") or {})]

    # -- answers --------------------------------------------------------------------------------
    @staticmethod
    def _path(api: str, plural: str, namespace: str | None, name: str | None = None) -> str:
        base = "/api/v1" if api == "v1" else f"/apis/{api}"
        return base + (f"/namespaces/{namespace}" if namespace else "") + f"/{plural}" + (f"/{name}" if name else "")

    def _not_found(self, plural: str, group: str, name: str) -> tuple[int, object]:
        status, body = recorded(self.reference, "get-deleted-404")
        body = copy.deepcopy(body)
        what = f"{plural}.{group}" if group else plural
        body["details"] = {"group": group, "kind": plural, "name": name} if group else {"kind": plural, "name": name}
        body["message"] = f'{what} "{name}" not found'
        return status, body

    def answer(self, method: str, path: str, query: dict, body: object,
               content_type: str = "application/json") -> tuple[int, object]:
        for entry in self.failures:
            m, pattern, status, failure, headers, times = entry
            if m == method and pattern.search(path) and times != 0:
                if times is not None:
                    entry[5] = times - 1
                self.last_headers = dict(headers)
                return status, failure
        if query.get("dryRun") not in (None, "All"):
            return _bad_request(f'Invalid value: "{query["dryRun"]}": supported values: "All"', 400, "Invalid")
        if query.get("fieldValidation") not in (None, "Ignore", "Warn", "Strict"):
            return _bad_request(f'invalid fieldValidation directive: {query["fieldValidation"]}')
        if method == "PATCH" and content_type.split(";")[0].strip() not in (
                "application/apply-patch+yaml", "application/merge-patch+json", "application/json-patch+json",
                "application/strategic-merge-patch+json"):
            return 415, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                         "message": f'the server does not support the patch type "{content_type}"',
                         "reason": "UnsupportedMediaType", "code": 415}
        if method == "PATCH" and content_type.startswith("application/apply-patch") and not query.get("fieldManager"):
            return _bad_request("PATCH /apply requires fieldManager")  # apiserver: apply needs a field manager
        versions = {g for g, *_ in self.kinds}
        groups = sorted({g.rpartition("/")[0] for g in versions if "/" in g})
        if method == "GET" and path.startswith("/apis/") and path[len("/apis/"):] in groups:
            group = path[len("/apis/"):]  # an APIGroup, as a server answers for every group it serves
            served = sorted(v.rpartition("/")[2] for v in versions if v.startswith(group + "/"))
            entries = [{"groupVersion": f"{group}/{v}", "version": v} for v in reversed(served)]
            return 200, {"kind": "APIGroup", "apiVersion": "v1", "name": group, "versions": entries,
                         "preferredVersion": entries[0]}
        for version in sorted(versions, key=len, reverse=True):
            base = "/api/v1" if version == "v1" else f"/apis/{version}"
            if path == base:
                if version == "kubeflow.org/v1":
                    return recorded(self.reference, "discovery-kubeflow-v1")
                return 200, {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": version,
                             "resources": [{"name": p, "singularName": k.lower(), "namespaced": n, "kind": k,
                                            "verbs": VERBS} for g, k, p, n in self.kinds if g == version]}
            if not path.startswith(base + "/"):
                continue
            rest = path[len(base) + 1:].split("/")
            namespace = None
            if rest[0] == "namespaces" and len(rest) >= 3:
                namespace, rest = rest[1], rest[2:]
            kind = next(((k, p, n) for g, k, p, n in self.kinds if g == version and p == rest[0]), None)
            if kind is None:
                break
            group = version.rpartition("/")[0]
            if namespace and namespace not in self.namespaces and not (rest == ["namespaces"]):
                status, nf = recorded(self.reference, "missing-namespace-404")
                nf = copy.deepcopy(nf)
                nf["details"]["name"] = namespace
                nf["message"] = f'namespaces "{namespace}" not found'
                return status, nf
            if len(rest) == 3 and rest[2] == "log" and method == "GET":
                text = self.logs.get(rest[1], "")
                if query.get("tailLines"):
                    text = "".join(text.splitlines(True)[-int(query["tailLines"]):])
                return 200, text
            name = rest[1] if len(rest) > 1 else None
            key = self._path(version, rest[0], namespace, name)
            if name is None and method == "GET":
                return 200, {"kind": f"{kind[0]}List", "apiVersion": version, "metadata": {},
                             "items": [o for p, o in sorted(self.store.items())
                                       if p.startswith(key + "/") and "/" not in p[len(key) + 1:]
                                       and _selected(o, query.get("labelSelector", ""))]}
            if method == "GET":
                if kind[0] == "Namespace":
                    if name in self.namespaces:
                        return 200, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
                    return self._not_found("namespaces", "", str(name))
                return (200, self.store[key]) if key in self.store else self._not_found(rest[0], group, str(name))
            if method == "PATCH":
                obj = copy.deepcopy(body)
                assert isinstance(obj, dict)
                obj.setdefault("metadata", {}).setdefault("creationTimestamp", "2026-11-26T02:22:06Z")
                old = self.store.get(key)
                if old is not None:
                    refused = _immutable(version, kind[0], old, obj)
                    if refused:
                        return refused
                    obj["metadata"]["resourceVersion"] = old["metadata"].get("resourceVersion", "1")
                    if _without_rv(old) != _without_rv(obj) and query.get("dryRun") != "All":
                        self.version += 1  # a no-op apply writes nothing: the resourceVersion stays
                        obj["metadata"]["resourceVersion"] = str(self.version)
                elif query.get("dryRun") != "All":
                    self.version += 1
                    obj["metadata"]["resourceVersion"] = str(self.version)
                if query.get("dryRun") != "All":
                    if kind[0] == "Namespace":
                        self.namespaces.add(str(name))
                    created = key not in self.store
                    if kind[0] == "CustomResourceDefinition":  # no controller needed to say it is served
                        obj["status"] = {"conditions": [{"type": "Established", "status": "True"}]}
                    self.store[key] = obj
                    return (201 if created else 200), obj
                return 200, obj
            if method == "DELETE":
                if key not in self.store:
                    return self._not_found(rest[0], group, str(name))
                options = body if isinstance(body, dict) else {}
                policy = query.get("propagationPolicy") or options.get("propagationPolicy") or "Background"
                if query.get("dryRun") == "All" or (options.get("dryRun") or []) == ["All"]:
                    return 200, self.store[key]
                if policy == "Foreground" and not self.gc:
                    # as the apiserver's registry store does: mark, add the finalizer, keep the object
                    obj = self.store[key]
                    meta = obj.setdefault("metadata", {})
                    meta.setdefault("deletionTimestamp", "2026-11-26T02:22:06Z")
                    meta["deletionGracePeriodSeconds"] = 0
                    if "foregroundDeletion" not in (meta.get("finalizers") or []):
                        meta["finalizers"] = list(meta.get("finalizers") or []) + ["foregroundDeletion"]
                    return 200, obj
                return 200, self.store.pop(key)
        return recorded(self.reference, "missing-crd-404")


# Fields a kube-apiserver will not change on an existing object, by kind, with its own words
# (k8s.io/kubernetes pkg/apis/batch/validation ValidateJobSpecUpdate -> apimachinery ValidateImmutableField;
# pkg/apis/core/validation validateServiceClusterIPsRelatedFields).
_IMMUTABLE_FIELDS = {("batch/v1", "Job"): (("spec", "selector"), ("spec", "completionMode"), ("spec", "template")),
                     ("v1", "Service"): (("spec", "clusterIP"),)}


def _immutable(version: str, kind: str, old: dict, new: dict) -> tuple[int, object] | None:
    """The 422 a real server gives when an update changes an immutable field (StatusError of
    field.Invalid(path, newValue, "field is immutable")): the message and each cause echo the new value (a
    kube-apiserver v1.36 writes it as JSON: 2 KB for a small pod template, 5 KB for a real one), which the CLI
    must cut to the reason."""
    causes = []
    for path in _IMMUTABLE_FIELDS.get((version, kind), ()):
        before, after = _get(old, path), _get(new, path)
        if before is None and after is None or before == after:
            continue
        if path[-1] == "clusterIP":
            if before is None or after is None:
                continue  # not written: the server keeps the one it allocated
            value, text = "[]string{" + json.dumps(after) + "}", "may not change once set"
            causes.append({"reason": "FieldValueInvalid", "message": f"Invalid value: {value}: {text}",
                           "field": "spec.clusterIPs[0]"})
            continue
        dump = json.dumps(after, separators=(",", ":"))  # v1.36 prints the new value as JSON
        causes.append({"reason": "FieldValueInvalid", "message": f"Invalid value: {dump}: field is immutable",
                       "field": ".".join(path)})
    if not causes:
        return None
    group = version.rpartition("/")[0]
    name = new["metadata"]["name"]
    what = f"{kind}.{group}" if group else kind
    message = f'{what} "{name}" is invalid: ' + ", ".join(f"{c['field']}: {c['message']}" for c in causes)
    if len(causes) > 1:
        message = f'{what} "{name}" is invalid: [' + ", ".join(f"{c['field']}: {c['message']}" for c in causes) + "]"
    return 422, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
                 "reason": "Invalid", "details": {"name": name, "group": group, "kind": kind, "causes": causes},
                 "code": 422}


def _get(obj: dict, path: tuple) -> object:
    node: object = obj
    for step in path:
        if not isinstance(node, dict):
            return None
        node = node.get(step)
    return node


def _without_rv(obj: dict) -> dict:
    out = copy.deepcopy(obj)
    out.get("metadata", {}).pop("resourceVersion", None)
    return out


def _bad_request(message: str, code: int = 400, reason: str = "BadRequest") -> tuple[int, object]:
    return code, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
                  "reason": reason, "code": code}


def _selected(obj: dict, selector: str) -> bool:
    labels = (obj.get("metadata") or {}).get("labels") or {}
    for term in filter(None, selector.split(",")):
        if "=" in term:
            k, v = term.split("=", 1)
            if labels.get(k) != v:
                return False
        elif term not in labels:
            return False
    return True
