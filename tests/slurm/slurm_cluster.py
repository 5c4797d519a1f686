#!/usr/bin/env python3
"""A single-node Slurm for the tests, in a folder of the build tree, on loopback, as the user who
runs ctest: its own munge key and socket, its own slurm.conf (free ports, one node with one
'gpu' that is /dev/null: the jobs run the CPU fake worker), its own state, spool and logs. Two
partitions: 'tune' (the default, for the GPU jobs) and 'cpu', where each core takes up to 8 jobs
at once: the compiles a compiler launcher (`srun --partition=cpu`) sends there, more at once
than this host has cores.

  slurm_cluster.py start <dir>   start munged, slurmctld and slurmd; wait for the node
  slurm_cluster.py stop <dir>    stop them (by the pid files this script wrote)

The tests read <dir>/slurm.conf through SLURM_CONF. When the daemons are not installed or do
not start here (Debian's slurmd may want root on some hosts), `start` writes the reason to
<dir>/skip and succeeds, so that the tests that need the cluster skip with that reason instead
of failing; `.ci/run` installs the daemons (slurmctld, slurmd, munge).
"""
import getpass
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def skip(d, reason):
    (d / "skip").write_text(reason + "\n")
    print(f"slurm_cluster: skipping the Slurm tests: {reason}")
    stop(d)
    return 0


def log_tail(path):
    try:
        lines = [l for l in path.read_text().splitlines() if "error" in l.lower()]
        return lines[-1] if lines else ""
    except OSError:
        return ""


def start(d):
    stop(d)
    shutil.rmtree(d, ignore_errors=True)
    for sub in ("munge", "state", "spool", "log", "jobs"):
        (d / sub).mkdir(parents=True)
    missing = [p for p in ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo")
               if shutil.which(p) is None]
    if missing:
        return skip(d, f"not installed: {', '.join(missing)} (apt-get install slurmctld slurmd "
                       "munge)")
    # munge: a key of our own, its socket and state in <dir>/munge (munged wants the folder
    # closed to others).
    munge = d / "munge"
    os.chmod(munge, 0o700)
    key = munge / "munge.key"
    key.write_bytes(os.urandom(1024))
    os.chmod(key, 0o400)
    sock = munge / "socket"
    r = subprocess.run(["munged", "--force", f"--socket={sock}", f"--key-file={key}",
                        f"--log-file={d / 'log' / 'munged.log'}",
                        f"--pid-file={munge / 'munged.pid'}", f"--seed-file={munge / 'seed'}"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return skip(d, f"munged does not start here: {r.stderr.strip()}")

    host = socket.gethostname().split(".")[0]
    user = getpass.getuser()
    cpus = os.cpu_count() or 1
    conf = d / "slurm.conf"
    conf.write_text(f"""# Written by tests/slurm/slurm_cluster.py: one node on loopback, one fake GPU.
ClusterName=tunetest
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
SlurmUser={user}
SlurmdUser={user}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={sock}
StateSaveLocation={d / 'state'}
SlurmdSpoolDir={d / 'spool'}
SlurmctldPidFile={d / 'slurmctld.pid'}
SlurmdPidFile={d / 'slurmd.pid'}
SlurmctldLogFile={d / 'log' / 'slurmctld.log'}
SlurmdLogFile={d / 'log' / 'slurmd.log'}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
GresTypes=gpu
MinJobAge=600
NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory=1000 Gres=gpu:1 State=UNKNOWN
PartitionName=tune Nodes={host} Default=YES MaxTime=INFINITE State=UP
PartitionName=cpu Nodes={host} MaxTime=INFINITE State=UP OverSubscribe=FORCE:8
""")
    (d / "gres.conf").write_text(f"AutoDetect=off\nNodeName={host} Name=gpu File=/dev/null\n")
    env = dict(os.environ, SLURM_CONF=str(conf))
    for daemon, log in (("slurmctld", "slurmctld.log"), ("slurmd", "slurmd.log")):
        r = subprocess.run([daemon, "-f", str(conf)], capture_output=True, text=True, env=env)
        if r.returncode != 0:
            return skip(d, f"{daemon} does not start here: "
                           f"{(r.stderr.strip() or log_tail(d / 'log' / log))}")
    deadline = time.time() + 60
    state = ""
    while time.time() < deadline:
        r = subprocess.run(["sinfo", "-h", "-o", "%t"], capture_output=True, text=True, env=env)
        state = r.stdout.strip()
        if r.returncode == 0 and state == "idle":
            print(f"slurm_cluster: node {host} idle, SLURM_CONF={conf}")
            return 0
        time.sleep(0.5)
    return skip(d, f"the node did not come up (state '{state}'): "
                   f"{log_tail(d / 'log' / 'slurmctld.log') or log_tail(d / 'log' / 'slurmd.log')}")


def stop(d):
    for pidfile in ("slurmd.pid", "slurmctld.pid", "munge/munged.pid"):
        p = d / pidfile
        try:
            pid = int(p.read_text().strip())
        except (OSError, ValueError):
            continue
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            continue
        for _ in range(100):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("start", "stop"):
        sys.exit("usage: slurm_cluster.py start|stop <dir>")
    folder = Path(sys.argv[2]).resolve()
    sys.exit(start(folder) if sys.argv[1] == "start" else stop(folder))
