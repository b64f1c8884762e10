#!/usr/bin/env bash
# A single-node Slurm on localhost for the cluster tests: Debian's slurm-wlm, slurmdbd and munge, with MariaDB
# behind slurmdbd (submitit reads job states with `sacct`, which needs the accounting database).
#
#   bash tests/support/slurm.sh install   packages (when missing) and configuration (`make slurm`)
#   bash tests/support/slurm.sh start     munge, MariaDB, slurmdbd, slurmctld, slurmd; waits for the node to be idle
#   bash tests/support/slurm.sh stop      the Slurm daemons (MariaDB and munge stay: they are cheap and shared)
#
# Idempotent: each step checks what is already there. The node is this machine under its short host name, with
# its cores and memory, no GPUs, in one partition `debug`. Needs root (CI and the dev machine are).
set -euo pipefail

CLUSTER=asyncbench
PARTITION=debug
CONF=/etc/slurm/slurm.conf
DBD_CONF=/etc/slurm/slurmdbd.conf
DB_PASSWORD=asyncbench-slurm
STATE=/var/lib/slurm-asyncbench
LOGS=/var/log/slurm-asyncbench

say() { echo "slurm.sh: $*" >&2; }

install_packages() {
    bash "$(dirname "$0")/debian_packages.sh" install slurm
}

configure() {
    local node cores memory_mb
    node=$(hostname -s)
    cores=$(nproc)
    memory_mb=$(($(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 1024))
    mkdir -p "$STATE/ctld" "$STATE/d" "$LOGS" /run/slurm /run/munge
    chown -R slurm:slurm "$STATE" "$LOGS" /run/slurm
    chown munge:munge /run/munge
    [ -s /etc/munge/munge.key ] || mungekey --create --keyfile /etc/munge/munge.key
    chown munge:munge /etc/munge/munge.key && chmod 600 /etc/munge/munge.key
    cat >"$CONF" <<EOF
# written by asyncbench's tests/support/slurm.sh: one node, this machine
ClusterName=$CLUSTER
SlurmctldHost=$node
SlurmUser=slurm
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/d
SlurmctldPidFile=/run/slurm/slurmctld.pid
SlurmdPidFile=/run/slurm/slurmd.pid
SlurmctldLogFile=$LOGS/slurmctld.log
SlurmdLogFile=$LOGS/slurmd.log
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
JobAcctGatherType=jobacct_gather/none
JobRequeue=1
MinJobAge=300
KillWait=5
InactiveLimit=0
NodeName=$node CPUs=$cores RealMemory=$memory_mb State=UNKNOWN
PartitionName=$PARTITION Nodes=$node Default=YES MaxTime=INFINITE State=UP OverSubscribe=EXCLUSIVE
EOF
    cat >"$DBD_CONF" <<EOF
# written by asyncbench's tests/support/slurm.sh
AuthType=auth/munge
DbdHost=localhost
SlurmUser=slurm
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=slurm
StoragePass=$DB_PASSWORD
StorageLoc=slurm_acct_db
LogFile=$LOGS/slurmdbd.log
PidFile=/run/slurm/slurmdbd.pid
EOF
    chown slurm:slurm "$DBD_CONF" && chmod 600 "$DBD_CONF"
}

running() { pgrep -x "$1" >/dev/null; }

wait_for() { # seconds, what, command...
    local seconds=$1 what=$2
    shift 2
    for _ in $(seq $((seconds * 5))); do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.2
    done
    say "$what did not come up in ${seconds}s"
    tail -n 20 "$LOGS"/*.log 2>/dev/null >&2 || true
    return 1
}

node_ready() { sinfo -h -N -o %t | grep -Eq '^(idle|alloc|mix)'; }

start() {
    [ -f "$CONF" ] || configure
    mkdir -p /run/slurm /run/munge && chown slurm:slurm /run/slurm && chown munge:munge /run/munge
    running munged || runuser -u munge -- /usr/sbin/munged
    wait_for 10 munge bash -c 'munge -n | unmunge'
    if ! running mariadbd; then
        mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld
        (setsid mysqld_safe >/dev/null 2>&1 &)
    fi
    # waited for even when it was already running (it may still be starting), and the statements retried: a fresh
    # clone's CI once saw "Can't connect ... (111)" here, a server that mysqld_safe restarted just after it answered
    wait_for 30 MariaDB mariadb -e 'SELECT 1'
    wait_for 30 "the accounting database" mariadb -e "CREATE DATABASE IF NOT EXISTS slurm_acct_db;
        CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY '$DB_PASSWORD';
        GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost'; FLUSH PRIVILEGES;"
    running slurmdbd || slurmdbd
    wait_for 30 slurmdbd sacctmgr -n list cluster
    sacctmgr -n list cluster format=cluster | grep -qw "$CLUSTER" || sacctmgr -i add cluster "$CLUSTER" >/dev/null
    running slurmctld || slurmctld
    running slurmd || slurmd
    wait_for 60 "the node" node_ready
    scontrol update nodename="$(hostname -s)" state=resume >/dev/null 2>&1 || true
    say "Slurm ready: partition $PARTITION on $(hostname -s)"
}

stop() {
    for daemon in slurmd slurmctld slurmdbd; do
        pkill -x "$daemon" 2>/dev/null || true
    done
    for daemon in slurmd slurmctld slurmdbd; do
        for _ in $(seq 50); do running "$daemon" || break; sleep 0.2; done
    done
}

case "${1:-}" in
install) install_packages && configure ;;
start) start ;;
stop) stop ;;
*) echo "usage: $0 install|start|stop" >&2; exit 2 ;;
esac
