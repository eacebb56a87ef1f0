#!/usr/bin/env bash
# The whole training chain on a tiny network and a handful of 7x7 games, end to end (< 2 minutes):
# random network -> self-play SGF archive -> training -> ONNX export -> a match new vs old.
# Usage: scripts/smoke_pipeline.sh OUTDIR     (leaves OUTDIR/games/*.sgf and OUTDIR/nets/*.onnx)
set -euo pipefail
out="${1:?usage: scripts/smoke_pipeline.sh OUTDIR}"
py="${PYTHON:-python3}"
azgo() { "$py" -m azgo.gtp.cli "$@"; }
mkdir -p "$out/nets" "$out/games" "$out/match"

echo "== 1. random tiny network"
"$py" -m azgo.training.export --random --net b2c16 --seed 1 --out "$out/nets/gen0.onnx"

echo "== 2. self-play: 8 games on 7x7, two workers"
azgo selfplay --net "$out/nets/gen0.onnx" --out "$out/games" --games 8 --workers 2 --size 7 \
  --full-visits 16 --cheap-visits 4 --concurrent-games 4 --seed 1 --no-progress

echo "== 3. training: 30 steps"
azgo train "$out/games" --out "$out/run" --net b2c16 --steps 30 --batch-size 64 --checkpoint-every 10 \
  --threads 2 --no-progress --no-tensorboard

echo "== 4. export"
azgo export "$out/run" --out "$out/nets/gen1.onnx"

echo "== 5. match: gen1 vs gen0, 2 games"
azgo match -a "$py -m azgo.gtp.cli gtp --net $out/nets/gen1.onnx --visits 8" \
  -b "$py -m azgo.gtp.cli gtp --net $out/nets/gen0.onnx --visits 8" \
  -n 2 --size 7 --komi 7 --sgf-dir "$out/match" --name-a gen1 --name-b gen0

echo "== done: $(ls "$out"/games/*.sgf | wc -l) self-play games, networks: $(ls "$out"/nets/*.onnx | xargs -n1 basename | tr '\n' ' ')"
