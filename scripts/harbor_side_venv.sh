#!/usr/bin/env bash
# The Harbor side of benchmarks/train_env.py (HarborSpec) and of benchmarks/validate_throughput.py --harbor,
# made OUTSIDE this checkout (never a dependency of the package):
#   <parent of the checkout>/harbor-venv                    Python >= 3.12 venv: harbor, datasets, loguru, trl
#   <parent of the checkout>/harbor-tools/docker-config     DOCKER_CONFIG holding the Docker Compose v2 plugin
# trl is installed without its dependencies: `trl[harbor]` would pull torch through accelerate, which from PyPI
# is a multi-GB CUDA build, and trl.experimental.harbor imports neither torch nor transformers.
# Debian 12 packages only compose v1; Debian 13's docker-compose .deb holds a static v2 plugin that runs here.
#   bash scripts/harbor_side_venv.sh        (PYTHON312=/path/to/python3.12 to pick the interpreter)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DEST=${HARBOR_SIDE_DIR:-$(dirname "$ROOT")}
PY=${PYTHON312:-$(command -v python3.12 || echo /root/.pyenv/versions/3.12.1/bin/python)}
TRL_VERSION=${TRL_VERSION:-1.16.0}
HARBOR_VERSION=${HARBOR_VERSION:-0.26.0}

if [ ! -x "$DEST/harbor-venv/bin/python" ]; then
  "$PY" -m venv "$DEST/harbor-venv"
fi
"$DEST/harbor-venv/bin/pip" install -q "harbor==$HARBOR_VERSION" datasets loguru
"$DEST/harbor-venv/bin/pip" install -q --no-deps "trl==$TRL_VERSION"
"$DEST/harbor-venv/bin/python" -c "import harbor, trl.experimental.harbor; print('harbor side venv ok')"

CONFIG="$DEST/harbor-tools/docker-config"
if DOCKER_CONFIG="$CONFIG" docker compose version >/dev/null 2>&1; then
  echo "compose v2 plugin ok: $CONFIG"
  exit 0
fi
APT="$DEST/harbor-tools/apt"
mkdir -p "$APT/lists/partial" "$APT/cache/archives/partial" "$APT/etc" "$CONFIG/cli-plugins"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" \
  > "$APT/etc/sources.list"
OPTS=(-o "Dir::Etc::sourcelist=$APT/etc/sources.list" -o "Dir::Etc::sourceparts=-" -o "Dir::State::Lists=$APT/lists"
      -o "Dir::Cache=$APT/cache" -o "APT::Get::List-Cleanup=0")
apt-get "${OPTS[@]}" update >/dev/null
(cd "$DEST/harbor-tools" && apt-get "${OPTS[@]}" download docker-compose)
rm -rf "$DEST/harbor-tools/x"
dpkg -x "$(ls "$DEST"/harbor-tools/docker-compose_*.deb | tail -1)" "$DEST/harbor-tools/x"
cp "$DEST/harbor-tools/x/usr/libexec/docker/cli-plugins/docker-compose" "$CONFIG/cli-plugins/"
DOCKER_CONFIG="$CONFIG" docker compose version
