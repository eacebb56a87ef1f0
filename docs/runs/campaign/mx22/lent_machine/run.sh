# Record of the lent-machine call of 2026-11-26 (mx22), run through the device tool of this workplace as `bash
# .dev/run.sh` with `.dev/` carried (the sgfmill wheel, the 20 opening folders as .dev/open/f1..f20, runs/lost19, the
# mx21 checkpoint) and the tracked tree cut to the code, nets/large19.* and the training window (64 MiB limit). The first
# call (SP=360) played nothing: the azgo wrapper lacked the __main__ guard that spawned workers need; the second ran
# with SP=230 END=350. Kept as provenance and as a recipe, not as a tool.
# One call on the lent machine: 19x19 self-play of mx21 on 16 cores, then mx22 trained on the GPU (rule:
# docs/strength/campaign22/mx22_rule.txt). $OUT is the folder whose files come back.
T0=$(date +%s); R=$PWD; export PYTHONUNBUFFERED=1
el() { echo $(( $(date +%s) - T0 )); }
mkdir -p /tmp/site/azgo /tmp/site/bin
for d in engine nets gtp training; do ln -s $R/$d /tmp/site/azgo/$d; done
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .dev/whl/*.whl || exit 1
printf '#!/usr/bin/env python3\nfrom azgo.gtp.cli import main\nif __name__ == "__main__":\n    main()\n' > /tmp/site/bin/azgo; chmod +x /tmp/site/bin/azgo
export PYTHONPATH=/tmp/site PATH=/tmp/site/bin:$PATH
nproc; lscpu | grep "Model name"; grep -o -E "avx512_vnni|amx_int8" /proc/cpuinfo | sort | uniq -c; nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
python3 -c "import onnxruntime, torch, numpy, sgfmill, azgo.engine.board; print('ort', onnxruntime.__version__, 'torch', torch.__version__, 'numpy', numpy.__version__, 'cuda', torch.cuda.is_available())" || exit 1
OPEN=""; for f in .dev/open/f*; do OPEN="$OPEN --openings $f"; done
C="--net nets/large19.onnx --precision int8 --workers 8 --concurrent-games 8 --size 19 --komi 7.5 --games 0 --no-progress --opening-moves 200"
azgo selfplay --out /tmp/sp19r $C --seed 301 $OPEN --opening-fraction 0.75 > /tmp/sp19r.log 2>&1 < /dev/null &
azgo selfplay --out /tmp/sp19s $C --seed 303 --openings .dev/lost19 --opening-fraction 0.9 > /tmp/sp19s.log 2>&1 < /dev/null &
python3 scripts/data_shards.py unpack-all data /tmp/runs > /tmp/unpack.log 2>&1; echo "unpacked $(ls /tmp/runs | wc -l) folders at $(el) s"
SP=${SP:-360}
while [ $(el) -lt $SP ]; do sleep 30; echo "t=$(el) r=$(ls /tmp/sp19r/*.sgf 2>/dev/null | wc -l) s=$(ls /tmp/sp19s/*.sgf 2>/dev/null | wc -l) load=$(cut -d' ' -f1 /proc/loadavg)"; done
pkill -f "azgo selfplay"; sleep 4; pkill -9 -f "azgo selfplay"; pkill -9 -f "multiprocessing.spawn"; sleep 1
rm -f /tmp/sp19r/.*.tmp /tmp/sp19s/.*.tmp
tar -C /tmp -czf $OUT/sp19rs.tar.gz sp19r sp19s; tail -n 2 /tmp/sp19r.log /tmp/sp19s.log
echo "games r=$(ls /tmp/sp19r/*.sgf | wc -l) s=$(ls /tmp/sp19s/*.sgf | wc -l) at $(el) s"
Q=/tmp/runs
SRC="$Q/sp19a $Q/sp19b $Q/sp19c $Q/sp19d $Q/sp19e $Q/sp19f $Q/sp19g $Q/sp19h $Q/sp19i $Q/sp19j $Q/sp19k $Q/sp19l $Q/sp19m $Q/sp19n $Q/sp19o $Q/sp19p $Q/sp19q /tmp/sp19r /tmp/sp19s $Q/sp13c $Q/sp13d $Q/sp13e $Q/sp13f $Q/gnugo13l10 $Q/sp9g $Q/sp9h $Q/sp9i $Q/sp9j $Q/sp9k $Q/sp9l $Q/sp9m $Q/sp9n"
SW="--source-weight $Q/gnugo13l10=0.5:0.5 --source-weight $Q/sp19n=5 --source-weight $Q/sp19o=5 --source-weight $Q/sp19p=5 --source-weight $Q/sp19q=5 --source-weight /tmp/sp19r=20 --source-weight /tmp/sp19s=20"
for s in h i j k l m; do SW="$SW --source-weight $Q/sp19$s=2"; done
for s in i j k l; do SW="$SW --source-weight $Q/sp9$s=2"; done
SW="$SW --source-weight $Q/sp9m=3 --source-weight $Q/sp9n=3"
TT=$(( ${END:-565} - $(el) - 30 ))
echo "training for at most $TT s"
timeout $TT azgo train $SRC --out /tmp/mx22 --init .dev/mx21_checkpoint.pt --steps 1000 --lr 0.005 --lr-steps 700 --batch-size 256 --loss-weights 1,0.5,0.5,0.2 --workers 12 --validate-every 500 --checkpoint-every 250 --seed 221 --threads 8 --size-mix 19=0.6,13=0.15,9=0.25 --surprise-weight 0.5 --max-final-margin 0.75 $SW --no-progress --no-tensorboard --device cuda > /tmp/train.log 2>&1
echo "train rc=$? at $(el) s"; cp /tmp/train.log $OUT/train_stdout.log; grep -v "^\s*$" /tmp/train.log | tail -n 6
cp /tmp/mx22/checkpoint.pt /tmp/mx22/train_log.csv $OUT/ 2>/dev/null
timeout 40 azgo export /tmp/mx22/checkpoint.pt --out $OUT/mx22_19.onnx --bn-data $Q/sp19p --bn-data $Q/sp19q --bn-data /tmp/sp19r --bn-data /tmp/sp19s --bn-size 19 > $OUT/export.log 2>&1; echo "export rc=$? at $(el) s"
ls -la $OUT
