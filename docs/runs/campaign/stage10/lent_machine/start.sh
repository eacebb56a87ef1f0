# Record of the lent-machine session of 2026-11-24 (campaign stage 10), run through the device tool of this
# workplace: the repository copy with .dev/ carried (the azgo and sgfmill wheels, st9_19.onnx and its 7-bit int8
# copy); $OUT is the folder whose files came back. Kept as provenance and as a recipe, not as a tool.
# call A: start 19x19 self-play of stage 9 on every core (setsid: it outlives the call while the machine is warm)
T0=$(date +%s)
source .dev/env.sh
nproc; free -g | head -2; nvidia-smi --query-gpu=name,memory.total --format=csv; lscpu | grep "Model name"; grep -o -E "avx512_vnni|avx_vnni|amx_int8" /proc/cpuinfo | sort | uniq -c
python3 -c "import onnxruntime, numpy, azgo.engine.board, sgfmill; print('ort', onnxruntime.__version__, 'numpy', numpy.__version__)"
mkdir -p /tmp/nets /tmp/sp19j && cp .dev/st9_19.onnx .dev/st9_19.int8.onnx /tmp/nets/
W=${W:-16}
setsid nohup azgo selfplay --out /tmp/sp19j --net /tmp/nets/st9_19.onnx --precision int8 --workers $W --concurrent-games 8 --size 19 --komi 7.5 --games 0 --seed 181 --no-progress > /tmp/sp.log 2>&1 < /dev/null &
# the training window, for call C
(python3 scripts/data_shards.py unpack-all data /tmp/runs > /tmp/unpack.log 2>&1) 
echo "unpacked: $(ls /tmp/runs | wc -l) folders at $(( $(date +%s) - T0 )) s"
END=$((T0 + ${SECS:-560}))
while [ $(date +%s) -lt $END ]; do sleep 30; echo "t=$(( $(date +%s) - T0 )) games=$(ls /tmp/sp19j/*.sgf 2>/dev/null | wc -l) load=$(cut -d' ' -f1 /proc/loadavg)"; done
tar -C /tmp -czf $OUT/sp19j_a.tar.gz --exclude='.*.tmp' sp19j
cat /tmp/sp.log | tail -5
ls -la $OUT
