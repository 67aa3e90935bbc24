"""The field names each level of a spec allows: one table for the job's, the roles' and the containers' rules."""

from __future__ import annotations

from .. import fields as F
from . import pod

# Allowed and required keys, enums and bounds come from the field table (compiler/fields.py),
# which `trainspec schema` also writes as JSON Schema.
TOP_FIELDS = F.TOP.names
METADATA_FIELDS = F.METADATA.names
SPEC_FIELDS = F.SPEC.names
ROLE_FIELDS = F.ROLE.names
# also read (not in the table): keys written at the wrong level, reported with where they belong
ALL_SPEC_FIELDS, ALL_ROLE_FIELDS = SPEC_FIELDS + pod.ROLE_ONLY_FIELDS, ROLE_FIELDS + pod.JOB_ONLY_FIELDS
RESOURCE_FIELDS = F.MAPPINGS["resources"].names
VOLUME_FIELDS = F.MAPPINGS["volume"].names
VOLUME_SOURCES = F.MAPPINGS["volumeSource"].exactly_one
INIT_FIELDS = F.MAPPINGS["initContainer"].names
FRAMEWORK_BLOCKS = F.FRAMEWORK_BLOCKS
RESERVED_ENV_PREFIX = "TRAINSPEC_"
