"""The pages of docs/ generated from the code (generated_pages.py writes them all): the configuration,
objectives and claims references, and the code map of docs/development.md (code_map.py, whose floors the
import test checks)."""
