"""What a workflow step runs on: atomic files and checked tables, per-job logs, outputs known by their
contents (file_times.py for the plan, output_records.py for each job's inputs and outputs), the warm-start
server, the process set-up of a model step (threads, allocator, seeds, device), provenance, the checks
before a cluster run, and the errors a step or a config check raises."""
