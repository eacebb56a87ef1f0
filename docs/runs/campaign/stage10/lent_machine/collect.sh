# call B: let self-play run on, then bring back every finished game
T0=$(date +%s)
END=$((T0 + ${SECS:-540}))
pgrep -f "azgo selfplay" >/dev/null || echo "SELFPLAY NOT RUNNING"
while [ $(date +%s) -lt $END ]; do sleep 30; echo "t=$(( $(date +%s) - T0 )) games=$(ls /tmp/sp19j/*.sgf 2>/dev/null | wc -l) load=$(cut -d' ' -f1 /proc/loadavg)"; done
tar -C /tmp -czf $OUT/sp19j_b.tar.gz --exclude='.*.tmp' sp19j
tail -3 /tmp/sp.log; ls -la $OUT
