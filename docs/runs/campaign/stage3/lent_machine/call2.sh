source .dev/setup.sh
T0=$(date +%s); t() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
python3 scripts/data_shards.py unpack-all data runs > /dev/null 2>&1
mkdir -p runs/gen runs/calib
timeout 185 python3 scripts/gnugo_games.py runs/gnugo13l10_dev2 --games 2000 --level 10 --size 13 --komi 7.5 --workers 15 --opening 3 --seed 19 > runs/gen/13l10.log 2>&1 &
python3 scripts/calibration_positions.py runs/calib/c19.npy runs/gnugo19c --positions 500 --seed 1 >/dev/null 2>&1
python3 scripts/calibration_positions.py runs/calib/c13.npy runs/gnugo13 --positions 400 --seed 1 >/dev/null 2>&1
python3 scripts/calibration_positions.py runs/calib/c9.npy runs/gnugo9l10 --positions 300 --seed 1 >/dev/null 2>&1
t calib done
bash .dev/train_export.sh st3b 1500 1100 35 runs/gnugo13l10 runs/gnugo13l10_local runs/gnugo9l10
t st3b done
wait; t gen done; ls runs/gnugo13l10_dev2 | grep -c sgf
for i in $(seq 1 13); do
  timeout 320 azgo match -a "azgo gtp --threads 1 --seconds 0.5 --net runs/st3b/st3b.onnx" -b "azgo gtp --threads 1 --seconds 0.5" -n 2 --size 13 --komi 7.5 --sgf-dir runs/m3b/m$i --name-a st3b --name-b default > runs/gen/m$i.log 2>&1 &
done
bash .dev/train_export.sh st3c 2500 1800 36 runs/gnugo13l10 runs/gnugo13l10_local runs/gnugo13l10_dev2 runs/gnugo9l10
t st3c done
wait; t matches done
cat runs/gen/m*.log | grep "^game"
tar cf $OUT/nets.tar runs/st3b/checkpoint.pt runs/st3b/train_log.csv runs/st3c/checkpoint.pt runs/st3c/train_log.csv runs/gen
tar cJf $OUT/games.tar.xz --exclude='*.tmp' --exclude='.azgo-cache' runs/gnugo13l10_dev2 runs/m3b
ls -la $OUT; t end
