#!/usr/bin/env bash
# Stop the daemons tests/slurm/start_cluster.sh started, by their recorded PIDs (nothing else is touched).
RUN_DIR="${SLURM_RUN_DIR:-/tmp/gold-slurm}"
for daemon in slurmd slurmctld munged; do
  pid_file="$RUN_DIR/$daemon.pid"
  [ -s "$pid_file" ] || continue
  pid="$(cat "$pid_file")"
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
    echo "stopped $daemon ($pid)"
  fi
  rm -f "$pid_file"
done
