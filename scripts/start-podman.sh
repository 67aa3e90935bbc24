#!/usr/bin/env bash
# Start Podman's Docker-compatible API socket if none answers, then wait until it does.
# Rootful, like start-dockerd.sh (no systemd on the project's machines; with systemd:
# `systemctl start podman.socket`, rootless `systemctl --user start podman.socket`).
#
# Host set-up the emulator never does itself (PODMAN-NOTES.md), done here once, idempotently:
# - /etc/containers/containers.conf default_ulimits at this machine's hard limits, only if the
#   file sets none: Podman's default RLIMIT_NOFILE/NPROC for root (1048576) is above them on
#   machines like these, and every container then fails with `error setting rlimit type 7`.
# - with Docker on the same host, Docker's FORWARD policy is DROP and it knows nothing of
#   Podman's bridges: `-I DOCKER-USER -i podman+ -o podman+ -j ACCEPT` lets containers on one
#   Podman network reach each other (they resolve each other either way; connections time out).
set -euo pipefail

SOCK="${TRAINSPEC_PODMAN_SOCK:-/run/podman/podman.sock}"
TIMEOUT="${TRAINSPEC_PODMAN_TIMEOUT:-30}"
LOG="${TRAINSPEC_PODMAN_LOG:-/tmp/podman-service.log}"

if ! command -v podman >/dev/null 2>&1; then
  echo "start-podman: podman is not installed (apt-get install podman)" >&2
  exit 1
fi
if [ "$(id -u)" != 0 ]; then
  echo "start-podman: the rootful socket needs root (rootless: systemctl --user start podman.socket)" >&2
  exit 1
fi

CONF=/etc/containers/containers.conf
if ! grep -qs '^[[:space:]]*default_ulimits' "$CONF"; then
  # Podman lowers its own RLIMIT_NPROC to kernel.pid_max (containers/common), so a container's
  # nproc must stay under both.
  nofile=$(ulimit -Hn); nproc=$(ulimit -Hu); pid_max=$(cat /proc/sys/kernel/pid_max)
  if [ "$nproc" = unlimited ] || [ "$nproc" -gt "$pid_max" ]; then nproc=$pid_max; fi
  if [ "$nofile" = unlimited ]; then nofile=1048576; fi
  mkdir -p /etc/containers
  if grep -qs '^\[containers\]' "$CONF"; then
    sed -i "/^\[containers\]/a default_ulimits = [\"nofile=${nofile}:${nofile}\", \"nproc=${nproc}:${nproc}\"]" "$CONF"
  else
    printf '[containers]\ndefault_ulimits = ["nofile=%s:%s", "nproc=%s:%s"]\n' \
      "$nofile" "$nofile" "$nproc" "$nproc" >>"$CONF"
  fi
fi

if command -v iptables >/dev/null 2>&1 && iptables -S DOCKER-USER >/dev/null 2>&1; then
  iptables -C DOCKER-USER -i podman+ -o podman+ -j ACCEPT 2>/dev/null \
    || iptables -I DOCKER-USER -i podman+ -o podman+ -j ACCEPT
fi

answers() { podman --remote --url "unix://$SOCK" version >/dev/null 2>&1; }
if answers; then
  exit 0
fi
mkdir -p "$(dirname "$SOCK")"
rm -f "$SOCK"
# setsid: the service must outlive this shell and not get its signals; --time=0: never idle out.
(setsid podman system service --time=0 "unix://$SOCK" >"$LOG" 2>&1 &)
deadline=$(( $(date +%s) + TIMEOUT ))
until answers; do
  if [ "$(date +%s)" -ge "$deadline" ]; then
    echo "start-podman: podman system service did not answer on $SOCK within ${TIMEOUT}s; last lines of $LOG:" >&2
    tail -n 20 "$LOG" >&2 || true
    exit 1
  fi
  sleep 0.2
done
