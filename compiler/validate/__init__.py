"""Spec validation: loaded data in, a `JobSpec` out, every problem reported at once.

job.py         the document, metadata and spec: framework, roles, env, restart, success, the job's settings
probes.py      what a container carries besides its command: probes, lifecycle hooks
scheduling.py  the job's scheduling (gang, minAvailable, queue, priority class, scheduler)
pod.py         spec v1.1's pod and container settings, resources, downward-API env, volumes and their conflicts
elastic.py     pytorch.elastic
patches.py     spec v1.1's patches per target
"""

from .job import validate

__all__ = ["validate"]
