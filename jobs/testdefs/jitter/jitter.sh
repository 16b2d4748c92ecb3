#!/bin/sh
# cyclictest under load, as testsuites/test_jitter.py runs it; its per-cycle lines reduced
# on the board (../lib/cycles.sh, the suite's reduction too) and printed raw: `boardlab
# lava results` reads the figures with the suite's parser
. ../lib/raw.sh
. ../lib/load.sh
. ../lib/cycles.sh
loops=$((DURATION * 1000000 / INTERVAL))

load_start
# -v: every cycle's latency written, as the suite and compare run it; reduced below, once
# the load has stopped (cyclictest's own -h prints all its buckets at exit, under the load)
cyclictest -m -v -p 80 -i "$INTERVAL" -l "$loops" > /tmp/cyc.v 2>/dev/null
rc=$?
load_stop

raw_begin jitter
echo "# cycles wanted $loops"
# 'H us count' bins, then 'N cycles overflows min max sum'
cycles_reduce /tmp/cyc.v "$HISTOGRAM"
rm -f /tmp/cyc.v
raw_end jitter $rc
