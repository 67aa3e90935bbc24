#!/usr/bin/env bash
# Start a Docker daemon if none answers, then wait until it does.
# There is no systemd on the project's machines (see DOCKER-NOTES.md), so the
# daemon is started by hand. Idempotent: a running daemon is left alone.
#
# /var/run is on disk on these machines, so a machine made from an image of another one finds
# the old daemon's pid files. dockerd adopts the containerd named by
# /var/run/docker/containerd/containerd.pid when a process of that pid is alive, whatever that
# process is now, and then waits for a socket nobody serves ("timeout waiting for containerd to
# start"). So a pid file is kept only while its pid is still the program that wrote it.
set -euo pipefail

TIMEOUT="${TRAINSPEC_DOCKERD_TIMEOUT:-90}"
ATTEMPTS="${TRAINSPEC_DOCKERD_ATTEMPTS:-3}"
LOG="${TRAINSPEC_DOCKERD_LOG:-/tmp/dockerd.log}"
RUN=/var/run/docker

if docker info >/dev/null 2>&1; then
  exit 0
fi
if ! command -v dockerd >/dev/null 2>&1; then
  echo "start-dockerd: dockerd is not installed (apt-get install docker.io)" >&2
  exit 1
fi
if [ "$(id -u)" != 0 ]; then
  echo "start-dockerd: no Docker daemon answers and starting one needs root" >&2
  exit 1
fi

# is_running PIDFILE NAME: the pid file names a live process whose program is NAME.
is_running() {
  local pid comm
  [ -s "$1" ] || return 1
  pid=$(tr -dc 0-9 <"$1")
  [ -n "$pid" ] && [ -r "/proc/$pid/comm" ] || return 1
  comm=$(cat "/proc/$pid/comm" 2>/dev/null || true)
  [ "$comm" = "$2" ]
}

clear_stale() {
  if ! is_running /var/run/docker.pid dockerd; then
    rm -f /var/run/docker.pid
  fi
  if ! is_running "$RUN/containerd/containerd.pid" containerd; then
    rm -f "$RUN/containerd/containerd.pid" "$RUN/containerd/containerd.sock" \
      "$RUN/containerd/containerd.sock.ttrpc" "$RUN/containerd/containerd-debug.sock"
  fi
}

# stop_ours: a daemon this script started that never answered is stopped before the next try.
stop_ours() {
  local f pid
  for f in /var/run/docker.pid "$RUN/containerd/containerd.pid"; do
    [ -s "$f" ] || continue
    pid=$(tr -dc 0-9 <"$f")
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  done
  for _ in $(seq 50); do
    is_running /var/run/docker.pid dockerd || is_running "$RUN/containerd/containerd.pid" containerd || break
    sleep 0.2
  done
  clear_stale
}

# A dockerd already starting (pid file alive, not yet answering) is waited for, not duplicated.
attempt=1
while :; do
  if ! is_running /var/run/docker.pid dockerd; then
    clear_stale
    # setsid: the daemon must outlive this shell and not get its signals.
    (setsid dockerd >>"$LOG" 2>&1 &)
  fi
  deadline=$(( $(date +%s) + TIMEOUT ))
  until docker info >/dev/null 2>&1; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
      break
    fi
    sleep 0.2
  done
  if docker info >/dev/null 2>&1; then
    exit 0
  fi
  if [ "$attempt" -ge "$ATTEMPTS" ]; then
    echo "start-dockerd: dockerd did not answer within ${TIMEOUT}s, $ATTEMPTS times; last lines of $LOG:" >&2
    tail -n 20 "$LOG" >&2 || true
    exit 1
  fi
  echo "start-dockerd: dockerd did not answer within ${TIMEOUT}s (try $attempt of $ATTEMPTS); starting it again" >&2
  stop_ours
  attempt=$(( attempt + 1 ))
done
