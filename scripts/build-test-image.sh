#!/usr/bin/env bash
# Build the emulator's local test image from Debian packages, with no registry
# and no `docker pull` (nothing can be pulled on the project's machines).
# Cached by tag: the image carries a label with a hash of this script, and is
# rebuilt only when the script (the recipe) changes.
#   usage: scripts/build-test-image.sh [--torch] [TAG]   (default trainspec-test:py3)
# --torch also builds TAG's sibling trainspec-test:torch: the same image plus
# the CPU wheel of torch (pip install --target on this host; Debian's Python
# 3.11 runs it), for the real gloo all-reduce test.
set -euo pipefail

TORCH=0
if [ "${1:-}" = "--torch" ]; then TORCH=1; shift; fi
TAG="${1:-${TRAINSPEC_TEST_IMAGE:-trainspec-test:py3}}"
TORCH_TAG="${TRAINSPEC_TORCH_IMAGE:-trainspec-test:torch}"
TORCH_VERSION="${TRAINSPEC_TORCH_VERSION:-2.13.0}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
RECIPE_HASH="$(sha256sum "${BASH_SOURCE[0]}" | cut -c1-16)"
PACKAGES="python3,python-is-python3,openssh-server,openssh-client,openmpi-bin,iproute2,procps"

# One build at a time (parallel test workers share the tag).
exec 9>"${TMPDIR:-/tmp}/trainspec-build-test-image.lock"
flock 9

recipe_of() { docker image inspect -f '{{ index .Config.Labels "trainspec.dev/recipe" }}' "$1" 2>/dev/null || true; }

build_torch() {
  [ "$TORCH" = 1 ] || return 0
  if [ "$(recipe_of "$TORCH_TAG")" = "$RECIPE_HASH" ]; then
    echo "build-test-image: $TORCH_TAG is up to date (recipe $RECIPE_HASH)"
    return 0
  fi
  echo "build-test-image: building $TORCH_TAG (torch $TORCH_VERSION) ..."
  local dir cid
  dir="$(mktemp -d)"
  python3 -m pip install --quiet --no-warn-script-location --target "$dir/torch" "torch==$TORCH_VERSION"
  cid="$(docker create "$TAG" true)"
  docker cp "$dir/torch" "$cid:/opt/torch" >/dev/null
  docker commit -c 'ENV PYTHONPATH=/opt/torch' -c "LABEL trainspec.dev/recipe=$RECIPE_HASH" \
    "$cid" "$TORCH_TAG" >/dev/null
  docker rm -f "$cid" >/dev/null
  rm -rf "$dir"
  echo "build-test-image: built $TORCH_TAG"
}

if [ "$(recipe_of "$TAG")" = "$RECIPE_HASH" ]; then
  echo "build-test-image: $TAG is up to date (recipe $RECIPE_HASH)"
  build_torch
  exit 0
fi

command -v mmdebstrap >/dev/null || { echo "build-test-image: mmdebstrap is not installed (apt-get install mmdebstrap)" >&2; exit 1; }
echo "build-test-image: building $TAG (recipe $RECIPE_HASH) ..."
# Host keys for sshd are made in the image (ssh-keygen -A) so MPI workers can
# start sshd at once; /run/sshd is sshd's privilege-separation dir.
# Peers' host keys are made per image, so the ssh client must not insist on
# knowing them (mpi-operator's images do the same).
# openmpi refuses to run as root unless these two are set; the emulator runs
# replicas as root like most training images do.
mmdebstrap --variant=apt \
  --include="$PACKAGES" \
  --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
  --dpkgopt='path-exclude=/usr/share/doc/*' \
  --dpkgopt='path-exclude=/usr/share/man/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' \
  --customize-hook='chroot "$1" ssh-keygen -A' \
  --customize-hook='mkdir -p "$1/run/sshd"' \
  --customize-hook='printf "Host *\\n  StrictHostKeyChecking no\\n  UserKnownHostsFile /dev/null\\n  LogLevel ERROR\\n" > "$1/etc/ssh/ssh_config.d/trainspec.conf"' \
  --skip=cleanup/run \
  --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*' \
  bookworm - \
| docker import \
  -c 'CMD ["python3"]' \
  -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  -c 'ENV OMPI_ALLOW_RUN_AS_ROOT=1' \
  -c 'ENV OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1' \
  -c "LABEL trainspec.dev/recipe=$RECIPE_HASH" \
  - "$TAG" >/dev/null
echo "build-test-image: built $TAG"
build_torch
