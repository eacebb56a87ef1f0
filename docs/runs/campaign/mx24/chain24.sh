#!/bin/bash
# After mx24 trains: export, quantize (rule: keep mx23's three fp32 nodes if all-7-bit value MAE > 0.05), gate.
set -e
cd /work/main
while pgrep -f "azgo train .*--out runs/mx24" >/dev/null; do sleep 15; done
grep -q "step 1000: checkpoint" runs/mx24.log
mkdir -p runs/mx24x
date -u +"export %H:%M:%S"
azgo export runs/mx24/checkpoint.pt --out runs/mx24x/mx24_19.onnx --bn-data runs/sp19v --bn-data runs/sp19w --bn-size 19
python3 -m azgo.nets.quantize runs/mx24x/mx24_19.onnx --calibration runs/calib/c19.npy | tee runs/mx24x/quant_all7.txt
mae=$(sed -n 's/.*value MAE \([0-9.]*\).*/\1/p' runs/mx24x/quant_all7.txt)
if python3 -c "import sys; sys.exit(0 if float('$mae') > 0.05 else 1)"; then
  cp runs/mx24x/mx24_19.int8.onnx runs/mx24x/mx24_19.all7.int8.onnx
  python3 -m azgo.nets.quantize runs/mx24x/mx24_19.onnx --calibration runs/calib/c19.npy --keep-fp32 /stem/conv/Conv --keep-fp32 /blocks.2/gpool_fc/MatMul --keep-fp32 /value_fc/Gemm --note "mx24: stem, blocks.2 gpool_fc and value_fc kept fp32" | tee runs/mx24x/quant_keep3.txt
fi
date -u +"gate %H:%M:%S"
python3 scripts/strength_table.py runs/g24a --lines gnugo19 --games19 6 --parallel 1 --threads 1 --net runs/mx24x/mx24_19.onnx > runs/g24a.out 2>&1 &
python3 scripts/strength_table.py runs/g24b --lines gnugo19 --games19 6 --parallel 1 --threads 1 --net runs/mx24x/mx24_19.onnx > runs/g24b.out 2>&1 &
wait
date -u +"gate done %H:%M:%S"
