"""The workflow's plumbing: config validation and the per-rule views, resources, provenance, job logs,
atomic files, runtime settings."""
