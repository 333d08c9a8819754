#!/usr/bin/env bash
# Install everything AutoEnvScaling needs on a fresh Debian/Ubuntu machine (idempotent):
# system packages, a running Docker engine, the Python venv, and the offline base images.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

need_apt=()
command -v debootstrap >/dev/null 2>&1 || need_apt+=(debootstrap)
command -v dockerd >/dev/null 2>&1 || need_apt+=(docker.io)
[ -x /usr/bin/chromium ] || need_apt+=(chromium)  # the viewer's browser tests (Playwright drives it)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "==> apt-get install ${need_apt[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

if ! docker info >/dev/null 2>&1; then
  echo "==> starting dockerd"
  $SUDO sh -c 'nohup dockerd >/var/log/autoenv-dockerd.log 2>&1 &'
  for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
  docker info >/dev/null 2>&1 || { echo "dockerd did not start; see /var/log/autoenv-dockerd.log" >&2; exit 1; }
fi

if [ ! -x "$VENV/bin/python" ]; then
  echo "==> creating $VENV"
  "$PYTHON" -m venv "$VENV"
fi
echo "==> installing autoenvscaling into $VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip
"$VENV/bin/python" -m pip install -q -e ".[dev,embedded,report,view,train,ray]"  # train: torch==2.13.0 (CPU here), TRL, PEFT; ray: the executor tests

echo "==> base images"
"$VENV/bin/autoenv" images bootstrap
