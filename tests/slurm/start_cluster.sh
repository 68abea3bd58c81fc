#!/usr/bin/env bash
# A throw-away single-node SLURM cluster on this machine, for the workflow's SLURM tests and for trying
# `--profile profiles/slurm` without a real cluster. Runs as root, without systemd or cgroups.
#
#   apt-get install -y --no-install-recommends slurmctld slurmd slurm-client munge   # Debian 12
#   bash tests/slurm/start_cluster.sh        # then: sinfo, sbatch, snakemake --profile ...
#   bash tests/slurm/stop_cluster.sh         # stops exactly the daemons started here (recorded PIDs)
#
# Settings (environment):
#   SLURM_RUN_DIR  state, spool, logs and PID files          (default /tmp/gold-slurm)
#   FAKE_GPUS      GPUs declared as GRES type `fake`         (default 4)
#   NODE_CPUS      CPUs declared for the node                (default: what slurmd detects)
#
# The fake GPUs are character devices with the major/minor numbers of /dev/null, /dev/zero, ...: slurmd
# rejects plain files, and with real device nodes it sets CUDA_VISIBLE_DEVICES for each job from the
# GRES it was given. No accounting daemon runs, so clients must poll with squeue, not sacct.
set -euo pipefail

RUN_DIR="${SLURM_RUN_DIR:-/tmp/gold-slurm}"
FAKE_GPUS="${FAKE_GPUS:-4}"
NODE="$(uname -n)"
CONF_DIR=/etc/slurm

for tool in slurmctld slurmd sinfo munged; do
  command -v "$tool" >/dev/null || { echo "error: $tool not found; install slurmctld slurmd slurm-client munge" >&2; exit 1; }
done
mkdir -p "$RUN_DIR"/{state,spool,log,dev} /run/munge "$CONF_DIR"

running () { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# munge: authentication between the SLURM daemons and clients.
if ! running "$RUN_DIR/munged.pid"; then
  [ -s /etc/munge/munge.key ] || dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 status=none
  chown munge:munge /etc/munge/munge.key /run/munge /var/lib/munge /var/log/munge
  chmod 0400 /etc/munge/munge.key
  rm -f /run/munge/munged.pid
  runuser -u munge -- /usr/sbin/munged --pid-file=/run/munge/munged.pid
  for _ in $(seq 50); do [ -s /run/munge/munged.pid ] && break; sleep 0.1; done
  cp /run/munge/munged.pid "$RUN_DIR/munged.pid"
fi
munge -n | unmunge >/dev/null

read -r DETECTED_CPUS DETECTED_MB < <(slurmd -C | tr ' ' '\n' | awk -F= '$1=="CPUs"{c=$2} $1=="RealMemory"{m=$2} END{print c, m}')
NODE_CPUS="${NODE_CPUS:-$DETECTED_CPUS}"
NODE_MB=$((DETECTED_MB * 9 / 10)) # slurmd drains a node that has less memory than declared

GRES=""
rm -f "$CONF_DIR/gres.conf"
if [ "$FAKE_GPUS" -gt 0 ]; then
  for i in $(seq 0 $((FAKE_GPUS - 1))); do
    rm -f "$RUN_DIR/dev/fakegpu$i"
    mknod "$RUN_DIR/dev/fakegpu$i" c 1 $((3 + 2 * i))
  done
  echo "NodeName=$NODE Name=gpu Type=fake File=$RUN_DIR/dev/fakegpu[0-$((FAKE_GPUS - 1))]" > "$CONF_DIR/gres.conf"
  GRES="Gres=gpu:fake:$FAKE_GPUS"
fi

cat > "$CONF_DIR/slurm.conf" <<CONF
# Written by tests/slurm/start_cluster.sh: a single-node test cluster.
ClusterName=gold-test
SlurmctldHost=$NODE(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$RUN_DIR/state
SlurmdSpoolDir=$RUN_DIR/spool
SlurmctldPidFile=$RUN_DIR/slurmctld.pid
SlurmdPidFile=$RUN_DIR/slurmd.pid
SlurmctldLogFile=$RUN_DIR/log/slurmctld.log
SlurmdLogFile=$RUN_DIR/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
# squeue must still list finished jobs when the executor polls (at least 3x its initial delay)
MinJobAge=600
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1000
ReturnToService=2
InactiveLimit=0
KillWait=5
MpiDefault=none
MailProg=/bin/true
GresTypes=gpu
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$NODE_CPUS RealMemory=$NODE_MB $GRES State=UNKNOWN
PartitionName=cpu Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
PartitionName=gpu Nodes=$NODE MaxTime=INFINITE State=UP
CONF
[ "$NODE_CPUS" -le "$DETECTED_CPUS" ] || echo "SlurmdParameters=config_overrides" >> "$CONF_DIR/slurm.conf"

start () { # name pid-file command...: the daemons fork and write their PID file
  local name=$1 pid_file=$2; shift 2
  running "$pid_file" && return
  rm -f "$pid_file"
  "$@"
  for _ in $(seq 100); do running "$pid_file" && return; sleep 0.1; done
  echo "error: $name did not start; its log:" >&2; tail -30 "$RUN_DIR/log/$name.log" >&2 || true; exit 1
}
start slurmctld "$RUN_DIR/slurmctld.pid" /usr/sbin/slurmctld -c -i # -c: fresh state every time
start slurmd "$RUN_DIR/slurmd.pid" /usr/sbin/slurmd

for _ in $(seq 60); do
  case "$(sinfo -h -N -o %T 2>/dev/null | head -1)" in idle | mixed | allocated) break ;; esac
  sleep 0.5
done
state="$(sinfo -h -N -o %T | head -1)"
if [ "$state" != idle ] && [ "$state" != mixed ]; then
  echo "error: node $NODE is $state" >&2; scontrol show node "$NODE" >&2; tail -30 "$RUN_DIR/log/slurmd.log" >&2; exit 1
fi
sinfo -N -o "%N %T %c %m %G"
echo "SLURM up: slurmctld $(cat "$RUN_DIR/slurmctld.pid"), slurmd $(cat "$RUN_DIR/slurmd.pid"), munged $(cat "$RUN_DIR/munged.pid")"
