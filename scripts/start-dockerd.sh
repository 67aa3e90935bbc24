#!/usr/bin/env bash
# Start a Docker daemon if none answers, then wait until it does.
# There is no systemd on the project's machines (see DOCKER-NOTES.md), so the
# daemon is started by hand. Idempotent: a running daemon is left alone.
set -euo pipefail

TIMEOUT="${TRAINSPEC_DOCKERD_TIMEOUT:-30}"
LOG="${TRAINSPEC_DOCKERD_LOG:-/tmp/dockerd.log}"

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
# setsid: the daemon must outlive this shell and not get its signals.
(setsid dockerd >"$LOG" 2>&1 &)
deadline=$(( $(date +%s) + TIMEOUT ))
until docker info >/dev/null 2>&1; do
  if [ "$(date +%s)" -ge "$deadline" ]; then
    echo "start-dockerd: dockerd did not answer within ${TIMEOUT}s; last lines of $LOG:" >&2
    tail -n 20 "$LOG" >&2 || true
    exit 1
  fi
  sleep 0.2
done
