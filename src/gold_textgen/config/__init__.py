"""An experiment's config: read strictly (strict_yaml.py), layer by layer (layers.py), with its overlays
(overlays.py) and `--set` items (set_overrides.py), checked against the schema (config.schema.yaml, shipped
with the package; its objective part built from the catalog by objective_schema.py) and across keys, and
viewed per rule (views.py: each rule's params hold only what changes its output)."""
