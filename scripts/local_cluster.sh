#!/bin/sh
# This workstation as a Ray cluster: `make local-cluster` and `make stop-cluster`.
#
#   scripts/local_cluster.sh start [override ...]   start a Ray head and an MLflow server (each only
#                                                   if not already running), then submit a training
#                                                   job: Hydra overrides as for `omega-cluster train`
#   scripts/local_cluster.sh up                     the same without the job
#   scripts/local_cluster.sh add-worker             start one more Ray node on this machine, joining
#                                                   the head (a second node, as on a real cluster)
#   scripts/local_cluster.sh submit [override ...]  submit another job to the running cluster
#   scripts/local_cluster.sh status                 what runs, where: nodes, jobs
#   scripts/local_cluster.sh stop                   stop what `start`/`up`/`add-worker` started,
#                                                   nothing else
#
# What `start` does:
# * Ray head: `ray start --head --block`, detached in its own session, its PID in a PID file.
# * Loopback only: every process the script starts listens on 127.0.0.1 (or ::ffff:127.0.0.1),
#   nothing on 0.0.0.0, :: or the machine's address: the nodes' GCS, raylets, object managers,
#   dashboard (127.0.0.1:$DASHBOARD_PORT) and its agents, the Ray client server, the workers,
#   the jobs' drivers and actors, MLflow. `--node-ip-address 127.0.0.1` alone does not do it:
#   Ray replaces a loopback node address by the machine's outward one, and its services bind to
#   that address or to all interfaces. It keeps 127.0.0.1 only while its single-machine switch is
#   on, RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 (the default on macOS and Windows), which the script
#   exports for everything it starts; the processes the nodes start, jobs included, inherit it.
#   A driver started by hand needs it too (else it looks for the GCS at the outward address):
#   `. .local-cluster/cluster.env` sets it, with the rest.
#   A cluster of several machines is not started by this script (docs/cluster.md "Multi-node")
#   and keeps Ray's behaviour. tests/integration/test_local_cluster.py checks the listening
#   sockets of the whole process tree of a two-node cluster while a job runs.
# * A private Ray temp dir ($RAY_TEMP_DIR, not /tmp/ray): `ray start` records its address in
#   <temp dir>/ray_current_cluster, and every plain `ray.init()` on this machine joins the cluster
#   named there. Kept private, an embedded `make train` (or a test) keeps starting its own Ray. Jobs
#   find the head through the RAY_ADDRESS that Ray's job supervisor gives their driver.
# * MLflow server on 127.0.0.1: sqlite store and artifact root under the state dir, artifacts
#   served through the server (--serve-artifacts, so remote clients need no shared disk),
#   `--workers 1` and MLFLOW_SERVER_ENABLE_JOB_EXECUTION=false: measured ~360 MB and ~1 ms
#   per call, against ~2.3 GB and ~40 ms for the default server.
# * The job: `ray job submit --working-dir <repo> --no-wait -- python -m omega_cluster train
#   cluster=local tracking.uri=<MLflow URL> run.dir=<absolute dir> <overrides>`. `python -m`, not
#   the console script: the job runs the uploaded copy of the repository with the Python on the
#   cluster's PATH (the venv's bin/ is put first before Ray starts), where `omega-cluster` may not
#   exist. run.dir is absolute because the job's working directory is Ray's unpacked copy, which
#   Ray deletes. The upload leaves out the venv, runs, caches and .git (Ray's limit is ~100 MB).
#   JOB_PYTHONPATH goes into the job's PYTHONPATH (relative to the uploaded copy), so a game of
#   your own trains there too: `make local-cluster JOB_PYTHONPATH=examples
#   ARGS="game.name=blind_war:BlindWarGame 'game.params={}'"`.
#
# What `add-worker` does (a two-node cluster on one machine, as
# tests/integration/test_local_cluster.py does):
# `ray start --address 127.0.0.1:$RAY_PORT --block --num-cpus $WORKER_CPUS --resources
# '{"$WORKER_LABEL": 1}'`, detached in its own session like the head, with the head's temp dir and
# token settings and its own PID file (ray-worker-<n>.pid, log ray-worker-<n>.log), then waits
# until the head lists the new node ALIVE and writes its Ray node id to ray-worker-<n>.node. Two
# raylets on one machine must not share a port: of the ports `ray start --help` names, only the
# dashboard agent's HTTP port has a fixed default (52365, the head's DASHBOARD_AGENT_PORT); the
# node manager, object manager, metrics export, agent gRPC and runtime-env agent ports default to
# 0 (picked when the node starts). The script passes all six, each from WORKER_<NAME>_PORT or a
# free port the OS gives it now (so `status` and the log say where the node listens), and lets
# the node's worker processes take OS-chosen ports (`--min-worker-port 0 --max-worker-port 0`, as
# Ray's own multi-node-on-one-machine harness, ray.cluster_utils, does) instead of the head's
# 10002-19999 range. With the single-machine switch off (loopback only, above) Ray's CLI refuses
# to start a node that joins a head; the node is started through the same CLI with that one check
# let through (WORKER_START below). On real machines the plain `ray start --address <head>:6379`
# joins a head, with RAY_AUTH_MODE=token and the cluster's token file on that machine.
#
# Token authentication (Ray 2.60): a plain `ray.init()` cluster turns it on by itself, but
# `ray start --head` turns it on only if RAY_AUTH_MODE=token or a token file already exists, and a
# client (`ray job submit`, `ray job logs`) sends the token only when RAY_AUTH_MODE=token is set in
# its environment. So this script exports RAY_AUTH_MODE=token (unless you set RAY_AUTH_MODE
# yourself: `disabled` is respected, with a warning) and makes sure a token exists: RAY_AUTH_TOKEN,
# or the file RAY_AUTH_TOKEN_PATH, or Ray's default ~/.ray/auth_token, created with mode 0600 if
# missing (the same 256-bit token `ray get-auth-token --generate` makes). The cluster's processes
# and the job inherit it. <state dir>/cluster.env holds the settings a shell needs to talk to the
# cluster (never the token itself): `. .local-cluster/cluster.env; ray job logs --follow <id>`.
#
# Stopping: `stop` first asks the cluster's running jobs to stop (a driver writes its pending
# shards on SIGTERM), then ends each process by its PID file, worker nodes before the head, and
# only if that PID still runs the command line this script started (a PID can be reused):
# SIGTERM to the `ray start --block`
# process, which drains the node and stops the processes it started (the raylet takes its
# workers and the jobs' drivers with it); SIGTERM to the MLflow server; then SIGTERM/SIGKILL to
# what is left of each one's process group (each was started in a session of its own, so its
# group holds nothing else). Never `ray stop`: it terminates every Ray process on the machine by
# name, including clusters this script did not start (someone's `ray.init()`, another
# `ray start`, a test run).
#
# Environment (defaults in brackets): LOCAL_CLUSTER_DIR [.local-cluster] state: PID files, logs,
# the MLflow store and artifacts, run directories. RAY_PORT [6379] GCS; DASHBOARD_PORT [8265];
# MLFLOW_PORT [5050] (5000 is taken by AirPlay on macOS); RAY_CLIENT_PORT [10001];
# DASHBOARD_AGENT_PORT [52365]; NUM_CPUS, NUM_GPUS [Ray detects them]; RAY_TEMP_DIR
# [/tmp/omega_cluster-ray-<uid>-<RAY_PORT>] (short: Ray's socket paths must fit 104 bytes);
# VENV [.venv] (its bin/ goes first on PATH if it has `ray`); JOB_ID [omega-<time>-<pid>];
# START_TIMEOUT [180] seconds to wait for each service; STOP_TIMEOUT [60].
# add-worker: WORKER_LABEL [worker] the node's custom resource (1 of it), WORKER_CPUS [1],
# WORKER_GPUS [none], WORKER_OBJECT_STORE_MEMORY [Ray's default] bytes, and WORKER_<NAME>_PORT for
# NAME in NODE_MANAGER, OBJECT_MANAGER, METRICS_EXPORT, DASHBOARD_AGENT, DASHBOARD_AGENT_GRPC,
# RUNTIME_ENV_AGENT [free ports].
# POSIX sh: runs under dash, bash and macOS /bin/sh.

set -eu

usage="usage: $0 start|submit [hydra overrides ...] | up | add-worker | status | stop"
command=${1:-}
case $command in
    start | submit) shift ;;
    up | add-worker | status | stop)
        shift
        if [ $# -gt 0 ]; then
            printf 'local_cluster: error: %s takes no arguments (got: %s); %s\n' "$command" "$*" \
                "$usage" >&2
            exit 2
        fi
        ;;
    *)
        printf 'local_cluster: error: %s\n' "$usage" >&2
        exit 2
        ;;
esac

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

STATE=${LOCAL_CLUSTER_DIR:-.local-cluster}
mkdir -p "$STATE"
STATE=$(cd "$STATE" && pwd)
CLUSTER_ENV=$STATE/cluster.env
HEAD_PID=$STATE/ray-head.pid
MLFLOW_PID=$STATE/mlflow.pid

say() { printf '%s\n' "$*"; }
die() { printf 'local_cluster: error: %s\n' "$*" >&2; exit 1; }
# a value quoted for sh: 'it'\''s'
quote() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }

VENV=${VENV:-.venv}
case $VENV in /*) ;; *) VENV=$ROOT/$VENV ;; esac
if [ -x "$VENV/bin/ray" ]; then
    PATH=$VENV/bin:$PATH
    export PATH
fi
command -v ray >/dev/null 2>&1 || die "no 'ray' on PATH and none in $VENV/bin: run 'make venv' first"
command -v mlflow >/dev/null 2>&1 || die "no 'mlflow' on PATH and none in $VENV/bin: run 'make venv' first"
PY=$(command -v python3 || command -v python) || die "no python3 on PATH"
# Loopback only (see the header): Ray's switch for single-machine clusters, off for every process
# this script starts (the nodes, their agents and workers, the jobs' drivers inherit it).
RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0
export RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER

# A running cluster's recorded settings win over the environment: `stop`, `status` and `submit`
# must reach the ports and temp dir `start` used. (A file left by a cluster that is gone is not
# read: a new `start` takes the environment's settings.)
for pidfile in "$HEAD_PID" "$MLFLOW_PID" "$STATE"/ray-worker-*.pid; do
    if [ -f "$CLUSTER_ENV" ] && [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
        # shellcheck disable=SC1090
        . "$CLUSTER_ENV"
        break
    fi
done
RAY_PORT=${RAY_PORT:-6379}
DASHBOARD_PORT=${DASHBOARD_PORT:-8265}
MLFLOW_PORT=${MLFLOW_PORT:-5050}
RAY_CLIENT_PORT=${RAY_CLIENT_PORT:-10001}
DASHBOARD_AGENT_PORT=${DASHBOARD_AGENT_PORT:-52365}
RAY_TEMP_DIR=${RAY_TEMP_DIR:-/tmp/omega_cluster-ray-$(id -u)-$RAY_PORT}
START_TIMEOUT=${START_TIMEOUT:-180}
STOP_TIMEOUT=${STOP_TIMEOUT:-60}
DASHBOARD_URL=http://127.0.0.1:$DASHBOARD_PORT
MLFLOW_URL=http://127.0.0.1:$MLFLOW_PORT
BACKEND_URI=sqlite:///$STATE/mlflow/mlflow.db

# -- token authentication (see the header) ---------------------------------------------------------

auth_mode() {
    RAY_AUTH_MODE=${RAY_AUTH_MODE:-token}
    export RAY_AUTH_MODE
}

setup_auth() {
    auth_mode
    if [ "$RAY_AUTH_MODE" != token ]; then
        say "local_cluster: WARNING: RAY_AUTH_MODE=$RAY_AUTH_MODE: the Ray job API at $DASHBOARD_URL" \
            "runs any code for any process that can reach it (see README, Security)" >&2
        return 0
    fi
    [ -n "${RAY_AUTH_TOKEN:-}" ] && return 0
    token_file=${RAY_AUTH_TOKEN_PATH:-$HOME/.ray/auth_token}
    if [ ! -s "$token_file" ]; then
        mkdir -p "$(dirname "$token_file")"
        # umask 077: the token file is readable by its owner only
        (umask 077 && "$PY" -c 'import secrets; print(secrets.token_hex(32))' >"$token_file")
        say "created a Ray authentication token in $token_file (mode 0600)"
    fi
}

# -- processes by PID file -------------------------------------------------------------------------

# alive PID: the process exists and is not a zombie
alive() {
    stat=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
    case $stat in Z*) return 1 ;; esac
    return 0
}

# ours PIDFILE MARK: the PID in PIDFILE runs and its command line contains MARK (-ww: the whole
# line; BSD ps cuts it to the terminal width otherwise)
ours() {
    [ -f "$1" ] || return 1
    pid=$(cat "$1")
    alive "$pid" || return 1
    case $(ps -ww -o args= -p "$pid" 2>/dev/null) in *"$2"*) return 0 ;; esac
    return 1
}

# group_members PGID: the live (non-zombie) processes of a process group
group_members() {
    ps -A -o pid= -o pgid= -o stat= | awk -v g="$1" '$2 == g && $3 !~ /^Z/ { print $1 }'
}

# wait_gone SECONDS PGID: wait until the process group is empty
wait_gone() {
    n=0
    while [ -n "$(group_members "$2")" ]; do
        [ "$n" -ge "$1" ] && return 1
        sleep 1
        n=$((n + 1))
    done
}

# stop_pidfile PIDFILE MARK WHAT: SIGTERM the process, then its group; SIGKILL what remains
stop_pidfile() {
    if ! ours "$1" "$2"; then
        [ -f "$1" ] && say "$3: not running (stale PID file removed)"
        rm -f "$1"
        return 0
    fi
    pid=$(cat "$1")
    say "stopping $3 (PID $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    n=0
    while alive "$pid" && [ "$n" -lt "$STOP_TIMEOUT" ]; do
        sleep 1
        n=$((n + 1))
    done
    # It was started in its own session: its process group is exactly what it spawned.
    if [ -n "$(group_members "$pid")" ]; then
        kill -TERM -"$pid" 2>/dev/null || true
        if ! wait_gone 10 "$pid"; then
            say "$3: SIGKILL to what is left of process group $pid"
            kill -KILL -"$pid" 2>/dev/null || true
            wait_gone 5 "$pid" || say "$3: processes left in group $pid: $(group_members "$pid")" >&2
        fi
    fi
    rm -f "$1"
}

# detached LOG CMD...: run CMD in a new session (its own process group, no controlling terminal:
# a closed terminal does not stop it), output to LOG; prints its PID.
detached() {
    log=$1
    shift
    "$PY" -c 'import os, sys; os.setsid(); os.execvp(sys.argv[1], sys.argv[1:])' "$@" \
        </dev/null >"$log" 2>&1 &
    echo $!
}

# -- HTTP (health checks, jobs): Python's urllib, with Ray's token when auth is on ------------------

http() {
    "$PY" - "$@" <<'PYTHON'
import json, os, sys, time, urllib.error, urllib.request
from pathlib import Path

def headers():
    if os.environ.get("RAY_AUTH_MODE", "").lower() != "token":
        return {}
    token = os.environ.get("RAY_AUTH_TOKEN")
    if not token:
        path = Path(os.environ.get("RAY_AUTH_TOKEN_PATH") or Path.home() / ".ray" / "auth_token")
        token = path.read_text().strip() if path.is_file() else ""
    return {"Authorization": f"Bearer {token}"} if token else {}

def call(url, method="GET", timeout=5.0):
    request = urllib.request.Request(url, method=method, headers=headers())
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return response.read().decode()

def alive(pid):  # exists and is not a zombie (a failed start stays one until this shell reaps it)
    import subprocess
    ps = subprocess.run(["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True)
    return ps.returncode == 0 and not ps.stdout.strip().startswith("Z")

mode, args = sys.argv[1], sys.argv[2:]
if mode == "free":  # free PORT...: fail naming the ports something on 127.0.0.1 already answers on
    import socket
    busy = []
    for port in args:
        with socket.socket() as s:
            s.settimeout(1.0)
            if s.connect_ex(("127.0.0.1", int(port))) == 0:
                busy.append(port)
    if busy:
        sys.exit(f"port(s) {', '.join(busy)} of 127.0.0.1 already in use (another Ray or MLflow?)")
elif mode == "wait":  # wait URL TIMEOUT PID: until URL answers 200 (or PID dies, or timeout)
    url, deadline, pid = args[0], time.monotonic() + float(args[1]), int(args[2])
    last = "no answer"
    while time.monotonic() < deadline:
        try:
            call(url, timeout=3.0)
            sys.exit(0)
        except urllib.error.HTTPError as e:
            last = f"HTTP {e.code}"
            if e.code in (401, 403):
                sys.exit(f"{url}: HTTP {e.code}: the server refuses our Ray token")
        except OSError as e:
            last = str(getattr(e, "reason", e))
        if not alive(pid):
            sys.exit(f"{url}: the process (PID {pid}) exited")
        time.sleep(1.0)
    sys.exit(f"{url}: no answer within {args[1]} s (last: {last})")
elif mode == "ports":  # ports N: N distinct free ports of this machine, as the OS gives them
    import socket
    sockets = [socket.socket() for _ in range(int(args[0]))]
    for s in sockets:  # all bound at once: distinct
        s.bind(("", 0))
    print(" ".join(str(s.getsockname()[1]) for s in sockets))
    for s in sockets:
        s.close()
elif mode in ("nodes", "newnode"):
    # nodes URL: the cluster's nodes, one a line (the dashboard's state API)
    # newnode URL LABEL TIMEOUT PID KNOWN_ID...: wait until a node that is not one of KNOWN_ID is
    # ALIVE with resource LABEL; print its node id (fail if PID dies or on timeout)
    def nodes():
        answer = json.loads(call(f"{args[0]}/api/v0/nodes?limit=10000&detail=true", timeout=10.0))
        return answer["data"]["result"]["result"]
    if mode == "nodes":
        for n in sorted(nodes(), key=lambda n: (not n.get("is_head_node"), n["node_id"])):
            res = n.get("resources_total") or {}
            custom = [f"{k}={v:g}" for k, v in sorted(res.items())
                      if k not in ("CPU", "GPU", "memory", "object_store_memory")
                      and not k.startswith("node:")]
            print(f"  node {n['node_id']} {'head  ' if n.get('is_head_node') else 'worker'} "
                  f"{n['state']:<6} CPU={res.get('CPU', 0):g} GPU={res.get('GPU', 0):g} "
                  f"{' '.join(custom)}".rstrip(), flush=True)
        sys.exit(0)
    label, deadline, pid = args[1], time.monotonic() + float(args[2]), int(args[3])
    known = set(args[4:])
    last = "no answer"
    while time.monotonic() < deadline:
        try:
            for n in nodes():
                if (n["node_id"] not in known and n["state"] == "ALIVE"
                        and (n.get("resources_total") or {}).get(label, 0) > 0):
                    print(n["node_id"])
                    sys.exit(0)
            last = "not listed yet"
        except (OSError, KeyError, ValueError) as e:
            last = str(getattr(e, "reason", e))
        if not alive(pid):
            sys.exit(f"the worker node (PID {pid}) exited")
        time.sleep(1.0)
    sys.exit(f"no new ALIVE node with resource {label!r} within {args[2]} s (last: {last})")
elif mode == "jobs":  # jobs DASHBOARD_URL [stop]: list the cluster's jobs; stop the running ones
    url, stop = args[0], args[1:] == ["stop"]
    active = ("PENDING", "RUNNING")
    stopping = []
    for job in json.loads(call(f"{url}/api/jobs/")):
        job_id, status = job.get("submission_id") or job.get("job_id"), job.get("status")
        if stop and status in active:
            call(f"{url}/api/jobs/{job_id}/stop", method="POST")
            stopping.append(job_id)
            status = f"{status} -> stop requested"
        print(f"  job {job_id:<32} {status}", flush=True)
    # Ray sends the driver SIGTERM, then SIGKILL after a few seconds; wait for that before the
    # head goes, so a driver's last shards and MLflow records are written (bounded wait).
    deadline = time.monotonic() + 30.0
    while stopping and time.monotonic() < deadline:
        time.sleep(1.0)
        stopping = [j for j in stopping
                    if json.loads(call(f"{url}/api/jobs/{j}")).get("status") in active]
PYTHON
}

# -- start ------------------------------------------------------------------------------------------

STARTED=""
on_exit() {
    status=$?
    if [ "$status" -ne 0 ] && [ -n "$STARTED" ]; then
        say "local_cluster: start failed: stopping what this run started" >&2
        case $STARTED in
            *worker*) stop_pidfile "$WORKER_PID" "$WORKER_MARK" "Ray worker node" ;;
        esac
        case $STARTED in *mlflow*) stop_pidfile "$MLFLOW_PID" "$BACKEND_URI" "MLflow server" ;; esac
        case $STARTED in *head*) stop_pidfile "$HEAD_PID" "$RAY_TEMP_DIR" "Ray head" ;; esac
    fi
    exit "$status"
}

record_settings() {
    {
        say "# written by scripts/local_cluster.sh start; sourced in a shell, it points 'ray job ...'"
        say "# and MLflow clients at this cluster (the token itself is never written here)"
        for name in RAY_PORT DASHBOARD_PORT MLFLOW_PORT RAY_CLIENT_PORT DASHBOARD_AGENT_PORT \
            RAY_TEMP_DIR RAY_AUTH_MODE RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER; do
            value=$(eval "printf '%s' \"\${$name}\"")
            say "$name=$(quote "$value")"
        done
        [ -n "${RAY_AUTH_TOKEN_PATH:-}" ] && say "RAY_AUTH_TOKEN_PATH=$(quote "$RAY_AUTH_TOKEN_PATH")"
        say "RAY_API_SERVER_ADDRESS=$(quote "$DASHBOARD_URL")"
        say "MLFLOW_TRACKING_URI=$(quote "$MLFLOW_URL")"
        say "export RAY_AUTH_MODE RAY_API_SERVER_ADDRESS MLFLOW_TRACKING_URI RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
        [ -n "${RAY_AUTH_TOKEN_PATH:-}" ] && say "export RAY_AUTH_TOKEN_PATH"
        true
    } >"$CLUSTER_ENV"
}

start_head() {
    if ours "$HEAD_PID" "$RAY_TEMP_DIR"; then
        say "Ray head already running (PID $(cat "$HEAD_PID"))"
        return 0
    fi
    rm -f "$HEAD_PID"
    set -- --head --block --port "$RAY_PORT" --node-ip-address 127.0.0.1 \
        --include-dashboard true --dashboard-host 127.0.0.1 --dashboard-port "$DASHBOARD_PORT" \
        --dashboard-agent-listen-port "$DASHBOARD_AGENT_PORT" \
        --ray-client-server-port "$RAY_CLIENT_PORT" --temp-dir "$RAY_TEMP_DIR" --disable-usage-stats
    [ -n "${NUM_CPUS:-}" ] && set -- "$@" --num-cpus "$NUM_CPUS"
    [ -n "${NUM_GPUS:-}" ] && set -- "$@" --num-gpus "$NUM_GPUS"
    say "starting the Ray head (GCS port $RAY_PORT, dashboard $DASHBOARD_URL; log $STATE/ray-head.log)"
    detached "$STATE/ray-head.log" ray start "$@" >"$HEAD_PID"
    STARTED="$STARTED head"
    if ! http wait "$DASHBOARD_URL/api/version" "$START_TIMEOUT" "$(cat "$HEAD_PID")"; then
        tail -n 30 "$STATE/ray-head.log" >&2
        die "the Ray head did not come up (log above: $STATE/ray-head.log)"
    fi
}

start_mlflow() {
    if ours "$MLFLOW_PID" "$BACKEND_URI"; then
        say "MLflow server already running (PID $(cat "$MLFLOW_PID"))"
        return 0
    fi
    rm -f "$MLFLOW_PID"
    mkdir -p "$STATE/mlflow/artifacts"
    say "starting the MLflow server ($MLFLOW_URL; log $STATE/mlflow.log)"
    detached "$STATE/mlflow.log" env MLFLOW_SERVER_ENABLE_JOB_EXECUTION=false mlflow server \
        --host 127.0.0.1 --port "$MLFLOW_PORT" --workers 1 --backend-store-uri "$BACKEND_URI" \
        --serve-artifacts --artifacts-destination "$STATE/mlflow/artifacts" >"$MLFLOW_PID"
    STARTED="$STARTED mlflow"
    if ! http wait "$MLFLOW_URL/health" "$START_TIMEOUT" "$(cat "$MLFLOW_PID")"; then
        tail -n 30 "$STATE/mlflow.log" >&2
        die "the MLflow server did not come up (log above: $STATE/mlflow.log)"
    fi
}

submit() {
    job=${JOB_ID:-omega-$(date +%Y%m%d-%H%M%S)-$$}
    run_dir=$STATE/runs/$job
    # gitwildmatch patterns, relative to the working dir (Ray also honours .gitignore)
    runtime_env='{"excludes": [".venv", ".git", ".local-cluster", "runs", "mlruns", "mlartifacts",
        "outputs", "*.egg-info", ".mypy_cache", ".ruff_cache", ".pytest_cache", ".hypothesis",
        "__pycache__", "*.db", "*.onnx", "*.safetensors"]}'
    # JOB_PYTHONPATH (e.g. examples): where the job finds a game of your own
    # (game.name=<module>:<Class>), relative to the uploaded repository or absolute
    if [ -n "${JOB_PYTHONPATH:-}" ]; then
        runtime_env="${runtime_env%\}}, \"env_vars\": {\"PYTHONPATH\": \"$JOB_PYTHONPATH\"}}"
    fi
    say "submitting job $job (run dir $run_dir)"
    ray job submit --address "$DASHBOARD_URL" --submission-id "$job" --working-dir "$ROOT" \
        --runtime-env-json "$runtime_env" --no-wait --log-style record -- \
        python -m omega_cluster train cluster=local "tracking.uri=$MLFLOW_URL" \
        "run.dir=$run_dir" run.progress=false "$@" >"$STATE/submit.log" 2>&1 || {
        tail -n 20 "$STATE/submit.log" >&2
        die "ray job submit failed (log above: $STATE/submit.log); the cluster is still up:" \
            "'make stop-cluster' stops it"
    }
    say "$job" >>"$STATE/jobs"
    ray_cmd=ray
    [ -x "$VENV/bin/ray" ] && ray_cmd=$VENV/bin/ray
    env_prefix="RAY_AUTH_MODE=$RAY_AUTH_MODE"
    [ -n "${RAY_AUTH_TOKEN_PATH:-}" ] && env_prefix="$env_prefix RAY_AUTH_TOKEN_PATH=$(quote "$RAY_AUTH_TOKEN_PATH")"
    cat <<EOF

omega_cluster local cluster (state: $STATE)
  Ray dashboard   $DASHBOARD_URL
  MLflow          $MLFLOW_URL
  job             $job
  run directory   $run_dir
follow the job's logs:
  $env_prefix $ray_cmd job logs --address $DASHBOARD_URL --follow $job
  (or: . $(quote "$CLUSTER_ENV") && $ray_cmd job logs --follow $job)
its status:       $env_prefix $ray_cmd job status --address $DASHBOARD_URL $job
another job:      make local-cluster ARGS='game=goofspiel'   (reuses the running cluster)
stop everything:  make stop-cluster
EOF
}

# -- add-worker ------------------------------------------------------------------------------------

# The command line of every worker node this script starts contains this (`ours` checks it).
WORKER_MARK="start --address 127.0.0.1:$RAY_PORT --block"

# `ray start` for a worker node: with the single-machine switch off, Ray's CLI refuses to start a
# node that joins a head ("Multi-node Ray clusters are not supported on Windows and OSX"). This
# runs the same CLI with that one check let through (the CLI reads the switch from a copy of Ray's
# constants); everything else, the node's own address included, still sees the switch off.
WORKER_START='import sys, types
import ray._private.ray_constants as constants
from ray.scripts import scripts
cli_constants = types.ModuleType(constants.__name__)
cli_constants.__dict__.update(vars(constants), ENABLE_RAY_CLUSTER=True)
scripts.ray_constants = cli_constants
sys.argv[0] = "ray"
sys.exit(scripts.main())'

worker_settings() {
    WORKER_LABEL=${WORKER_LABEL:-worker}
    WORKER_CPUS=${WORKER_CPUS:-1}
    case $WORKER_LABEL in
        "" | [!A-Za-z_]* | *[!A-Za-z0-9_.-]* | CPU | GPU | memory | object_store_memory)
            die "WORKER_LABEL='$WORKER_LABEL' is not a custom resource name: letters, digits," \
                "'_', '.' or '-', starting with a letter or '_', and not CPU, GPU, memory or" \
                "object_store_memory" ;;
    esac
    case $WORKER_CPUS in
        "" | *[!0-9]*) die "WORKER_CPUS='$WORKER_CPUS' must be a whole number (0, 1, 2, ...)" ;;
    esac
    case ${WORKER_GPUS:-0} in
        *[!0-9]*) die "WORKER_GPUS='$WORKER_GPUS' must be a whole number (0, 1, 2, ...)" ;;
    esac
}

# worker_ports: the six ports of the new node (see the header), from WORKER_<NAME>_PORT or free
worker_ports() {
    ports=$(http ports 6) || die "could not get free ports from the OS"
    # shellcheck disable=SC2086
    set -- $ports
    W_NODE_MANAGER=${WORKER_NODE_MANAGER_PORT:-$1}
    W_OBJECT_MANAGER=${WORKER_OBJECT_MANAGER_PORT:-$2}
    W_METRICS=${WORKER_METRICS_EXPORT_PORT:-$3}
    W_AGENT=${WORKER_DASHBOARD_AGENT_PORT:-$4}
    W_AGENT_GRPC=${WORKER_DASHBOARD_AGENT_GRPC_PORT:-$5}
    W_RUNTIME_ENV=${WORKER_RUNTIME_ENV_AGENT_PORT:-$6}
    http free "$W_NODE_MANAGER" "$W_OBJECT_MANAGER" "$W_METRICS" "$W_AGENT" "$W_AGENT_GRPC" \
        "$W_RUNTIME_ENV" || die "choose free WORKER_<NAME>_PORT values (see the script's header)"
}

cmd_add_worker() {
    ours "$HEAD_PID" "$RAY_TEMP_DIR" ||
        die "no local cluster runs (state $STATE): 'scripts/local_cluster.sh up' starts one"
    worker_settings
    "$PY" -c 'import ray' 2>/dev/null || die "$PY cannot import ray (it starts the worker node):" \
        "put the Python that has Ray first on PATH, or set VENV"
    setup_auth
    # the first free slot: ray-worker-1, ray-worker-2, ... (a stale PID file is reused)
    slot=1
    while ours "$STATE/ray-worker-$slot.pid" "$WORKER_MARK"; do slot=$((slot + 1)); done
    WORKER_PID=$STATE/ray-worker-$slot.pid
    log=$STATE/ray-worker-$slot.log
    rm -f "$WORKER_PID" "$STATE/ray-worker-$slot.node"
    worker_ports
    known=$(http nodes "$DASHBOARD_URL" | awk '{ print $2 }') ||
        die "the head at $DASHBOARD_URL does not answer"
    set -- --address "127.0.0.1:$RAY_PORT" --block --num-cpus "$WORKER_CPUS" \
        --resources "{\"$WORKER_LABEL\": 1}" --node-ip-address 127.0.0.1 \
        --temp-dir "$RAY_TEMP_DIR" \
        --node-manager-port "$W_NODE_MANAGER" --object-manager-port "$W_OBJECT_MANAGER" \
        --metrics-export-port "$W_METRICS" --dashboard-agent-listen-port "$W_AGENT" \
        --dashboard-agent-grpc-port "$W_AGENT_GRPC" --runtime-env-agent-port "$W_RUNTIME_ENV" \
        --min-worker-port 0 --max-worker-port 0 --disable-usage-stats
    [ -n "${WORKER_GPUS:-}" ] && set -- "$@" --num-gpus "$WORKER_GPUS"
    [ -n "${WORKER_OBJECT_STORE_MEMORY:-}" ] &&
        set -- "$@" --object-store-memory "$WORKER_OBJECT_STORE_MEMORY"
    say "starting Ray worker node $slot ($WORKER_CPUS CPU, resource $WORKER_LABEL;" \
        "node manager port $W_NODE_MANAGER, object manager $W_OBJECT_MANAGER, agent $W_AGENT;" \
        "log $log)"
    trap on_exit EXIT
    trap 'exit 130' INT TERM
    detached "$log" "$PY" -c "$WORKER_START" start "$@" >"$WORKER_PID"
    STARTED="worker"
    # shellcheck disable=SC2086
    if ! node=$(http newnode "$DASHBOARD_URL" "$WORKER_LABEL" "$START_TIMEOUT" \
        "$(cat "$WORKER_PID")" $known); then
        tail -n 30 "$log" >&2
        die "the Ray worker node did not join the head (log above: $log)"
    fi
    STARTED=""
    say "$node" >"$STATE/ray-worker-$slot.node"
    say "Ray worker node $slot joined: node id $node (PID $(cat "$WORKER_PID"))"
}

# Ports of the services to start must be free: another service there would answer the health
# check in their place (and take the job).
check_ports() {
    ports=""
    ours "$HEAD_PID" "$RAY_TEMP_DIR" ||
        ports="$RAY_PORT $DASHBOARD_PORT $RAY_CLIENT_PORT $DASHBOARD_AGENT_PORT"
    ours "$MLFLOW_PID" "$BACKEND_URI" || ports="$ports $MLFLOW_PORT"
    [ -z "$ports" ] && return 0
    # shellcheck disable=SC2086
    http free $ports || die "choose free ports (RAY_PORT, DASHBOARD_PORT, MLFLOW_PORT," \
        "RAY_CLIENT_PORT, DASHBOARD_AGENT_PORT) or stop what uses them"
}

cmd_up() {
    trap on_exit EXIT
    trap 'exit 130' INT TERM
    check_ports
    setup_auth
    start_head
    start_mlflow
    record_settings
    STARTED=""  # both are up: a failed submission leaves them running
}

cmd_start() {
    cmd_up
    submit "$@"
}

cmd_submit() {
    ours "$HEAD_PID" "$RAY_TEMP_DIR" || die "no local cluster runs (state $STATE): 'make local-cluster' starts one"
    ours "$MLFLOW_PID" "$BACKEND_URI" || die "the MLflow server of $STATE is not running: 'make local-cluster' starts it"
    setup_auth
    submit "$@"
}

cmd_status() {
    if ours "$HEAD_PID" "$RAY_TEMP_DIR"; then
        say "Ray head        PID $(cat "$HEAD_PID"), dashboard $DASHBOARD_URL"
        auth_mode
        for pidfile in "$STATE"/ray-worker-*.pid; do
            ours "$pidfile" "$WORKER_MARK" || continue
            nodefile=${pidfile%.pid}.node
            node=$(cat "$nodefile" 2>/dev/null || echo '?')
            say "Ray worker node PID $(cat "$pidfile"), node id $node"
        done
        http nodes "$DASHBOARD_URL" || true
        http jobs "$DASHBOARD_URL" || true
    else
        say "Ray head        not running"
    fi
    if ours "$MLFLOW_PID" "$BACKEND_URI"; then
        say "MLflow server   PID $(cat "$MLFLOW_PID"), $MLFLOW_URL"
    else
        say "MLflow server   not running"
    fi
}

cmd_stop() {
    if ours "$HEAD_PID" "$RAY_TEMP_DIR"; then
        # Ask running jobs to stop first: their drivers flush pending shards on SIGTERM.
        auth_mode
        http jobs "$DASHBOARD_URL" stop || say "(could not list the cluster's jobs; stopping anyway)"
    fi
    # worker nodes before the head: each drains while the head still answers
    for pidfile in "$STATE"/ray-worker-*.pid; do
        [ -f "$pidfile" ] || continue
        stop_pidfile "$pidfile" "$WORKER_MARK" "Ray worker node $(basename "$pidfile" .pid)"
        rm -f "${pidfile%.pid}.node"
    done
    stop_pidfile "$HEAD_PID" "$RAY_TEMP_DIR" "Ray head"
    stop_pidfile "$MLFLOW_PID" "$BACKEND_URI" "MLflow server"
    rm -f "$CLUSTER_ENV"
    say "stopped; kept $STATE (MLflow store, artifacts, run directories, logs)"
}

case $command in
    start) cmd_start "$@" ;;
    up) cmd_up ;;
    add-worker) cmd_add_worker ;;
    submit) cmd_submit "$@" ;;
    status) cmd_status ;;
    stop) cmd_stop ;;
esac
