# usage: train_export.sh NAME STEPS LRSTEP SEED DATA...
N=$1; S=$2; L=$3; SEED=$4; shift 4
azgo train "$@" --out runs/$N --init nets/default.pt --steps $S --lr-steps $L --batch-size 256 --loss-weights 1,0.5,0.5,0.2 --workers 1 --validate-every 500 --seed $SEED --no-progress --no-tensorboard --device cuda > runs/gen/train_$N.log 2>&1
azgo export runs/$N/checkpoint.pt --out runs/$N/$N.onnx >> runs/gen/train_$N.log 2>&1
python3 -m azgo.nets.quantize runs/$N/$N.onnx --calibration runs/calib/c19.npy runs/calib/c13.npy runs/calib/c9.npy >> runs/gen/train_$N.log 2>&1
grep -E "validation|wrote" runs/gen/train_$N.log | tail -4
