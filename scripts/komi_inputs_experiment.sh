#!/bin/bash
# Komi inputs on and off: the same fine-tune of campaign19's best checkpoint (docs/runs/campaign19/best.pt) on the
# committed self-play shards, each exported with 19x19 batch-norm statistics, then benchmarks/komi_handicap.py on
# both and on nets/large19.onnx. Usage: scripts/komi_inputs_experiment.sh OUT [STEPS=400]
# (2026-11-27 on 2 cores: ~24 minutes of training per arm; the figures are in docs/TRAINING.md, "Komi inputs".)
set -euo pipefail
OUT=${1:?usage: $0 OUT [STEPS]}
STEPS=${2:-400}
cd "$(dirname "$0")/.."
mkdir -p "$OUT/src"
python3 - "$OUT/src" <<'PY'
import os, sys
from azgo.training.shards import unpack
for name in ["campaign19-g0001-19", "campaign19-g0002-19", "campaign19-g0003-19", "campaign13-g0001-13",
             "campaign13-g0002-13", "campaign9-g0001-9"]:
    out = os.path.join(sys.argv[1], name)
    if not os.path.isdir(out):
        print(name, unpack(os.path.join("data", name), out), "games", flush=True)
PY
S=$OUT/src
COMMON=("$S/campaign19-g0001-19" "$S/campaign19-g0002-19" "$S/campaign19-g0003-19" "$S/campaign13-g0001-13"
        "$S/campaign13-g0002-13" "$S/campaign9-g0001-9" --init docs/runs/campaign19/best.pt --steps "$STEPS"
        --batch-size 256 --lr 0.002 --momentum 0.9 --weight-decay 0.0001 --loss-weights 1,0.5,0.5,0.2
        --val-fraction 0.05 --seed 7 --surprise-weight 0.5 --max-final-margin 0.75 --komi-augment 0.5 --threads 2
        --size-mix 9=0.25,13=0.15,19=0.6 --no-tensorboard --no-progress --checkpoint-every 100 --validate-every 200)
for arm in on off; do
  flag=(); [ $arm = on ] && flag=(--komi-inputs)
  if [ ! -f "$OUT/$arm/net19.onnx" ]; then
    resume=(); [ -f "$OUT/$arm/checkpoint.pt" ] && resume=(--resume)
    azgo train "${COMMON[@]}" "${flag[@]}" "${resume[@]}" --out "$OUT/$arm" > "$OUT/$arm.train.log" 2>&1
    azgo export "$OUT/$arm" --bn-data "$S/campaign19-g0003-19" --bn-size 19 -o "$OUT/$arm/net19.onnx" > "$OUT/$arm.export.log" 2>&1
  fi
  python3 benchmarks/komi_handicap.py --net "$OUT/$arm/net19.onnx" --precision fp32 --sizes 9,13,19 --midgame 100 > "$OUT/$arm.komi.log" 2>&1
done
python3 benchmarks/komi_handicap.py --net nets/large19.onnx --precision fp32 --sizes 9,13,19 --midgame 100 > "$OUT/base.komi.log" 2>&1
grep -H RESULT "$OUT"/*.komi.log
