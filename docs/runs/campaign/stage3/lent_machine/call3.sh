source .dev/setup.sh
T0=$(date +%s); t() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
python3 scripts/data_shards.py unpack-all data runs > /dev/null 2>&1
mkdir -p runs/gen runs/calib
timeout 450 azgo selfplay --out runs/sp13a --net nets/default.onnx --games 3000 --workers 15 --concurrent-games 8 --size 13 --komi 7.5 --seed 51 --no-progress > runs/gen/sp.log 2>&1
t selfplay done; ls runs/sp13a | grep -c sgf
tar cJf $OUT/sp13a.tar.xz --exclude='*.tmp' --exclude='.azgo-cache' runs/sp13a
python3 scripts/calibration_positions.py runs/calib/c19.npy runs/gnugo19c --positions 500 --seed 1 >/dev/null 2>&1
python3 scripts/calibration_positions.py runs/calib/c13.npy runs/gnugo13 --positions 400 --seed 1 >/dev/null 2>&1
python3 scripts/calibration_positions.py runs/calib/c9.npy runs/gnugo9l10 --positions 300 --seed 1 >/dev/null 2>&1
timeout 100 bash .dev/train_export.sh st3d 1500 1100 37 runs/sp13a runs/gnugo13l10 runs/gnugo13l10_local runs/gnugo13l10_dev2 runs/gnugo9l10
t st3d done
tar cf $OUT/st3d.tar runs/st3d/checkpoint.pt runs/st3d/train_log.csv runs/gen
ls -la $OUT; t end
