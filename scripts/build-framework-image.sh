#!/usr/bin/env bash
# Build the emulator's framework test images: the local test image (see
# build-test-image.sh) plus a framework's CPU wheels, installed with
# `pip install --target` on this host (Debian's Python 3.11 runs them) into
# /opt/<name> on PYTHONPATH.  No registry and no `docker pull`.
#   usage: scripts/build-framework-image.sh [--xgboost] [--jax] [--paddle] [BASE_TAG]   (default trainspec-test:py3)
# --xgboost: trainspec-test:xgboost (xgboost-cpu: XGBoost's collective tracker test)
# --jax:     trainspec-test:jax     (jax[cpu]: jax.distributed across 2 processes)
# --paddle:  trainspec-test:paddle  (paddlepaddle + setuptools, and Debian's libgomp1 unpacked
#            from `apt-get download`: a collective all-reduce through paddle.distributed.launch).
#            About 850 MB installed, so CI does not build it; its test skips without the image.
# Cached by tag: an image is rebuilt only when this script or the base image changes.
# Kept apart from build-test-image.sh so that adding a framework does not rebuild the base images.
set -euo pipefail

WHEELS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --xgboost) WHEELS+=("xgboost|${TRAINSPEC_XGBOOST_IMAGE:-trainspec-test:xgboost}|xgboost-cpu==${TRAINSPEC_XGBOOST_VERSION:-3.2.0}|") ;;
    --jax) WHEELS+=("jax|${TRAINSPEC_JAX_IMAGE:-trainspec-test:jax}|jax[cpu]==${TRAINSPEC_JAX_VERSION:-0.10.2}|") ;;
    --paddle) WHEELS+=("paddle|${TRAINSPEC_PADDLE_IMAGE:-trainspec-test:paddle}|paddlepaddle==${TRAINSPEC_PADDLE_VERSION:-3.3.1} setuptools|libgomp1") ;;
    *) break ;;
  esac
  shift
done
BASE="${1:-${TRAINSPEC_TEST_IMAGE:-trainspec-test:py3}}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

bash "$HERE/build-test-image.sh" "$BASE"
BASE_ID="$(docker image inspect -f '{{ .Id }}' "$BASE")"
RECIPE_HASH="$( (sha256sum "${BASH_SOURCE[0]}"; echo "$BASE_ID") | sha256sum | cut -c1-16)"

exec 9>"${TMPDIR:-/tmp}/trainspec-build-framework-image.lock"
flock 9

recipe_of() { docker image inspect -f '{{ index .Config.Labels "trainspec.dev/recipe" }}' "$1" 2>/dev/null || true; }

for entry in ${WHEELS[@]+"${WHEELS[@]}"}; do
  IFS='|' read -r name tag req debs <<<"$entry"
  if [ "$(recipe_of "$tag")" = "$RECIPE_HASH" ]; then
    echo "build-framework-image: $tag is up to date (recipe $RECIPE_HASH)"
    continue
  fi
  echo "build-framework-image: building $tag ($req) ..."
  dir="$(mktemp -d)"
  # shellcheck disable=SC2086  # $req is a list of requirements
  prlimit --as=8000000000 python3 -m pip install --quiet --no-warn-script-location --target "$dir/$name" $req
  cid="$(docker create "$BASE" true)"
  docker cp "$dir/$name" "$cid:/opt/$name" >/dev/null
  if [ -n "$debs" ]; then  # shared libraries a wheel expects from the system
    # shellcheck disable=SC2086
    (cd "$dir" && apt-get download -q $debs >/dev/null && for deb in ./*.deb; do dpkg -x "$deb" root; done)
    docker cp "$dir/root/." "$cid:/" >/dev/null
  fi
  docker commit -c "ENV PYTHONPATH=/opt/$name" -c "LABEL trainspec.dev/recipe=$RECIPE_HASH" "$cid" "$tag" >/dev/null
  docker rm -f "$cid" >/dev/null
  rm -rf "$dir"
  echo "build-framework-image: built $tag"
done
