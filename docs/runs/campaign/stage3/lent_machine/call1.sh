source .dev/setup.sh
T0=$(date +%s)
nproc; nvidia-smi -L; python3 -c "import torch, onnxruntime, azgo.engine; print(torch.__version__, torch.cuda.is_available(), onnxruntime.__version__, onnxruntime.get_available_providers(), azgo.engine.__file__)"
gnugo --version | head -1
python3 scripts/data_shards.py unpack-all data runs 2>&1 | tail -3
mkdir -p runs/gen
G="timeout 470 python3 scripts/gnugo_games.py"
$G runs/gnugo19l10 --games 200 --level 10 --size 19 --komi 7.5 --workers 3 --opening 3 --seed 41 > runs/gen/19l10.log 2>&1 &
$G runs/gnugo19l5 --games 200 --level 5 --size 19 --komi 7.5 --workers 2 --opening 3 --seed 42 > runs/gen/19l5.log 2>&1 &
$G runs/gnugo13l10 --games 2000 --level 10 --size 13 --komi 7.5 --workers 6 --opening 3 --seed 17 > runs/gen/13l10.log 2>&1 &
$G runs/gnugo9l10 --games 5000 --level 10 --size 9 --komi 7 --workers 4 --opening 3 --seed 43 > runs/gen/9l10.log 2>&1 &
timeout 440 azgo train runs/gnugo19 runs/gnugo19c runs/gnugo19d runs/gnugo13 runs/gnugo13l10 --out runs/st3a --init nets/default.pt --steps 6000 --lr-steps 4500 --batch-size 256 --loss-weights 1,0.5,0.5,0.2 --workers 1 --validate-every 1000 --seed 33 --no-progress --no-tensorboard --device cuda > runs/gen/train.log 2>&1
echo "train rc $? at $(( $(date +%s) - T0 )) s"; tail -5 runs/gen/train.log
wait
echo "gen done at $(( $(date +%s) - T0 )) s"
for f in runs/gen/*.log; do echo "== $f"; tail -2 $f; done
ls runs/gnugo19l10 runs/gnugo19l5 | grep -c sgf; ls runs/gnugo13l10 | grep -c sgf; ls runs/gnugo9l10 | grep -c sgf
tar cJf $OUT/games.tar.xz runs/gnugo19l10 runs/gnugo19l5 runs/gnugo13l10 runs/gnugo9l10 --exclude='*.tmp' --exclude='.azgo-cache'
tar cf $OUT/st3a.tar runs/st3a/checkpoint.pt runs/st3a/train_log.csv runs/gen
ls -la $OUT
