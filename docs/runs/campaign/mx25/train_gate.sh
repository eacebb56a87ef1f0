#!/bin/bash
# mx25 by its rule (docs/strength/campaign24/mx25_rule.txt): W, training, export, quantize, gate; run from the checkout's root
# with the data unpacked (python3 scripts/data_shards.py unpack-all data runs) and runs/calib/c19.npy made
# (python3 scripts/calibration_positions.py runs/calib/c19.npy runs/gnugo19c --positions 500 --seed 1).
# Nothing else running. `train_gate.sh train` stops after the training (azgo train resumes runs/mx25 if it was cut off);
# `train_gate.sh gate` skips the training and exports the committed docs/runs/campaign/mx25/checkpoint.pt. Writes runs/mx25 (checkpoint, log), runs/mx25x (networks), runs/g25a, runs/g25b (gate games).
set -e
export PATH=$PATH:/usr/games
CKPT=runs/mx25/checkpoint.pt
if [ "$1" = gate ]; then CKPT=docs/runs/campaign/mx25/checkpoint.pt; else
W=$(python3 - <<'PY'
from azgo.training.dataset import load_dataset
tr, va, _ = load_dataset(["runs/sp19v", "runs/sp19w", "runs/sp19x", "runs/sp19y"], workers=2)
n = len(tr) + len(va)
print(round(2 * (415796 + 2 * 41513) / n))
import sys; print(f"positions of sp19v-y: {n}", file=sys.stderr)
PY
)
echo "W = $W"
SW=""; for f in sp19n sp19o sp19p sp19q sp19h sp19i sp19j sp19k sp19l sp19m sp19r sp19s sp19t sp19u; do SW="$SW --source-weight runs/$f=2"; done
for f in sp19v sp19w sp19x sp19y; do SW="$SW --source-weight runs/$f=$W"; done
SRC=""; for f in a b c d e f g h i j k l m n o p q r s t u v w x y; do SRC="$SRC runs/sp19$f"; done
CMD="azgo train $SRC runs/sp13c runs/sp13d runs/sp13e runs/sp13f runs/gnugo13l10 runs/sp9g runs/sp9h runs/sp9i runs/sp9j runs/sp9k runs/sp9l runs/sp9m runs/sp9n --out runs/mx25 --init docs/runs/campaign/mx24/checkpoint.pt --steps 1000 --lr 0.005 --lr-steps 700 --batch-size 256 --loss-weights 1,0.5,0.5,0.2 --workers 2 --validate-every 500 --seed 251 --threads 2 --size-mix 19=0.6,13=0.15,9=0.25 --surprise-weight 0.5 --max-final-margin 0.75 --source-weight runs/gnugo13l10=0.5:0.5$SW --source-weight runs/sp9i=2 --source-weight runs/sp9j=2 --source-weight runs/sp9k=2 --source-weight runs/sp9l=2 --source-weight runs/sp9m=3 --source-weight runs/sp9n=3 --no-progress --no-tensorboard ${DEVICE:+--device $DEVICE}"
echo "$CMD" > runs/mx25.cmd
date -u +"train %H:%M:%S"
$CMD >> runs/mx25.log 2>&1
grep -q "step 1000: checkpoint" runs/mx25.log
date -u +"trained %H:%M:%S"
[ "$1" = train ] && exit 0
fi
mkdir -p runs/mx25x
date -u +"export %H:%M:%S"
azgo export $CKPT --out runs/mx25x/mx25_19.onnx --bn-data runs/sp19x --bn-data runs/sp19y --bn-size 19
python3 -m azgo.nets.quantize runs/mx25x/mx25_19.onnx --calibration runs/calib/c19.npy | tee runs/mx25x/quant_all7.txt
mae=$(sed -n 's/.*value MAE \([0-9.]*\).*/\1/p' runs/mx25x/quant_all7.txt)
if python3 -c "import sys; sys.exit(0 if float('$mae') > 0.05 else 1)"; then
  cp runs/mx25x/mx25_19.int8.onnx runs/mx25x/mx25_19.all7.int8.onnx
  python3 -m azgo.nets.quantize runs/mx25x/mx25_19.onnx --calibration runs/calib/c19.npy --keep-fp32 /stem/conv/Conv --keep-fp32 /blocks.2/gpool_fc/MatMul --keep-fp32 /value_fc/Gemm --note "mx25: stem, blocks.2 gpool_fc and value_fc kept fp32" | tee runs/mx25x/quant_keep3.txt
fi
date -u +"gate %H:%M:%S"
python3 scripts/strength_table.py runs/g25a --lines gnugo19 --games19 6 --parallel 1 --threads 1 --net runs/mx25x/mx25_19.onnx > runs/g25a.out 2>&1 &
python3 scripts/strength_table.py runs/g25b --lines gnugo19 --games19 6 --parallel 1 --threads 1 --net runs/mx25x/mx25_19.onnx > runs/g25b.out 2>&1 &
wait
date -u +"gate done %H:%M:%S"
tail -n 3 runs/g25a.out runs/g25b.out
