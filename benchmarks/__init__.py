"""Benchmarks of the workflow's costs, run from the project root: python -m benchmarks.<name>."""
