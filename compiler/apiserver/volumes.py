"""A pod's volumes: kubernetes pkg/apis/core/validation ValidateVolumes and validateVolumeSource
(names, one source each, hostPath, secret and configMap, downwardAPI and CSI sources, key-to-path items)."""

from __future__ import annotations

from ..kube_rules import backsteps_problem
from .findings import Sink
from .values import dns_label_problem, is_int, local_path, quantity

MAX_MODE = 0o777  # validateKeyToPath / validateSecretVolumeSource: "must be a number between 0 and 0777"


VOLUME_SOURCES = ("hostPath", "emptyDir", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "secret", "nfs",
                  "iscsi", "glusterfs", "persistentVolumeClaim", "rbd", "flexVolume", "cinder", "cephfs", "flocker",
                  "downwardAPI", "fc", "azureFile", "configMap", "vsphereVolume", "quobyte", "azureDisk",
                  "photonPersistentDisk", "projected", "portworxVolume", "scaleIO", "storageos", "csi", "ephemeral",
                  "image")


def pod_volumes(s: Sink, volumes, path: tuple) -> dict[str, dict]:
    """core ValidateVolumes: names DNS-1123 labels, unique, one source each; validateVolumeSource."""
    out: dict[str, dict] = {}
    for i, volume in enumerate(volumes if isinstance(volumes, list) else []):
        vp = path + (i,)
        if not isinstance(volume, dict):
            continue
        name = volume.get("name")
        if not name:
            s.required(vp + ("name",))
        else:
            problem = dns_label_problem(name)
            if problem:
                s.invalid(vp + ("name",), name, problem)
            elif name in out:
                s.duplicate(vp + ("name",), name)
            out[name] = volume
        sources = [key for key in VOLUME_SOURCES if volume.get(key) is not None]
        # no source (or only null ones): SetDefaults_Volume makes it an emptyDir before validation, so the
        # server's "must specify a volume type" is never reached on create (measured on v1.36.2)
        if len(sources) > 1:
            s.forbidden(vp + (sources[1],), "may not specify more than 1 volume type")
        if isinstance(volume.get("hostPath"), dict):
            host = volume["hostPath"].get("path")
            if not host:
                s.required(vp + ("hostPath", "path"))
            elif backsteps_problem(host):  # validateHostPathVolumeSource -> validatePathNoBacksteps
                s.invalid(vp + ("hostPath", "path"), host, "must not contain '..'")
        for kind, ref in (("secret", "secretName"), ("configMap", "name")):
            source = volume.get(kind)
            if isinstance(source, dict):  # validateSecretVolumeSource / validateConfigMapVolumeSource
                ref_name = source.get(ref)
                if kind == "secret" and not ref_name:
                    s.required(vp + (kind, ref))
                elif not ref_name and kind == "configMap":
                    s.required(vp + (kind, ref))
                mode = source.get("defaultMode")
                if mode is not None and (not is_int(mode) or not 0 <= mode <= MAX_MODE):
                    s.invalid(vp + (kind, "defaultMode"), mode, "must be a number between 0 and 0777 (octal), both "
                              "inclusive")
                for j, item in enumerate(source.get("items") or []):
                    _key_to_path(s, item, vp + (kind, "items", j))
        downward = volume.get("downwardAPI")
        if isinstance(downward, dict):  # validateDownwardAPIVolumeSource
            for item in downward.get("items") or []:
                _downward_file(s, item, vp + ("downwardAPI",))
        csi = volume.get("csi")
        if isinstance(csi, dict) and not csi.get("driver"):  # validateCSIVolumeSource
            s.required(vp + ("csi", "driver"))
        empty = volume.get("emptyDir")
        if isinstance(empty, dict) and empty.get("sizeLimit") is not None:
            quantity(s, vp + ("emptyDir", "sizeLimit"), empty["sizeLimit"], "sizeLimit")
    return out


VOLUME_FIELD_REFS = ("metadata.name", "metadata.namespace", "metadata.uid", "metadata.labels",
                     "metadata.annotations")  # validVolumeDownwardAPIFieldPathExpressions


def _downward_file(s: Sink, item, path: tuple) -> None:
    """core validateDownwardAPIVolumeFile: a relative path, one of fieldRef (a pod metadata field) and
    resourceFieldRef.  Its errors are at the volume source's path, not the item's, as upstream reports them."""
    if not isinstance(item, dict):
        return
    local_path(s, item.get("path"), path + ("path",), required=True)
    field, resource = item.get("fieldRef"), item.get("resourceFieldRef")
    if isinstance(field, dict):  # validateObjectFieldSelector
        value = str(field.get("fieldPath") or "")
        base = value.split("[", 1)[0]
        if not value:
            s.required(path + ("fieldRef", "fieldPath"))
        elif base not in VOLUME_FIELD_REFS or "[" in value and base not in ("metadata.labels", "metadata.annotations"):
            s.unsupported(path + ("fieldRef", "fieldPath"), value, VOLUME_FIELD_REFS)
        if resource is not None:
            s.invalid(path, "resource", "fieldRef and resourceFieldRef can not be specified simultaneously")
    elif resource is None:
        s.required(path, "one of fieldRef and resourceFieldRef is required")
    mode = item.get("mode")
    if mode is not None and (not is_int(mode) or not 0 <= mode <= MAX_MODE):
        s.invalid(path + ("mode",), mode, "must be a number between 0 and 0777 (octal), both inclusive")


def _key_to_path(s: Sink, item, path: tuple) -> None:
    """core validateKeyToPath: key required; path relative, no '..' element; mode 0-0777."""
    if not isinstance(item, dict):
        return
    if not item.get("key"):
        s.required(path + ("key",))
    local_path(s, item.get("path"), path + ("path",), required=True)
    mode = item.get("mode")
    if mode is not None and (not is_int(mode) or not 0 <= mode <= MAX_MODE):
        s.invalid(path + ("mode",), mode, "must be a number between 0 and 0777 (octal), both inclusive")
