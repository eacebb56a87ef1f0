# call C: stop self-play, bring back its games, train stage-10 candidates on the GPU from stage 9
T0=$(date +%s)
source .dev/env.sh
pkill -f "azgo selfplay"; sleep 3; pkill -9 -f "azgo selfplay"
if [ ! -d /tmp/sp19j ]; then echo "fresh machine: games from the carried tarball"; tar -C /tmp -xzf .dev/sp19j_b.tar.gz; fi
[ -d /tmp/runs/sp19i ] || python3 scripts/data_shards.py unpack-all data /tmp/runs > /tmp/unpack.log 2>&1
rm -f /tmp/sp19j/.*.tmp
tar -C /tmp -czf $OUT/sp19j_c.tar.gz sp19j
echo "games: $(ls /tmp/sp19j/*.sgf | wc -l) at $(( $(date +%s) - T0 )) s"
R=/tmp/runs
SRC="/tmp/sp19j $R/sp19i $R/sp19h $R/sp19g $R/sp19f $R/sp19e $R/sp19d $R/sp19c $R/sp19b $R/sp19a $R/sp13f $R/sp13e $R/sp13d $R/sp13c $R/gnugo13l10 $R/gnugo9l10"
COMMON="--init docs/runs/campaign/stage9/checkpoint.pt --batch-size 256 --loss-weights 1,0.5,0.5,0.2 --validate-every 500 --threads 4 --surprise-weight 0.5 --max-final-margin 0.75 --device cuda --no-tensorboard --no-progress --checkpoint-every 500"
timeout ${TA:-400} azgo train $SRC --out /tmp/st10 --steps ${STEPS:-3000} --lr 0.005 --lr-steps 2000 --seed 101 --size-mix 19=0.6,13=0.3,9=0.1 --swa-from 2000 --swa-every 50 --workers 12 $COMMON > /tmp/st10.log 2>&1 &
PA=$!
sleep 45
timeout ${TB:-360} azgo train $SRC --out /tmp/st10b --steps ${STEPS:-3000} --lr 0.005 --lr-steps 2000 --seed 102 --size-mix 19=0.8,13=0.15,9=0.05 --swa-from 2000 --swa-every 50 --workers 4 $COMMON > /tmp/st10b.log 2>&1 &
PB=$!
wait $PA $PB
echo "trained at $(( $(date +%s) - T0 )) s"
for r in st10 st10b; do
  cp /tmp/$r/checkpoint.pt $OUT/${r}_checkpoint.pt; [ -f /tmp/$r/swa.pt ] && cp /tmp/$r/swa.pt $OUT/${r}_swa.pt
  cp /tmp/$r/train_log.csv $OUT/${r}_log.csv
  grep -v "^\s*$" /tmp/$r.log | tail -8
done
cat /tmp/st10.log /tmp/st10b.log > $OUT/train_out.log
ls -la $OUT
