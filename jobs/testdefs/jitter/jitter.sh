#!/bin/sh
# cyclictest under load: the same metric names as testsuites/test_jitter.py
. ../lib/gate.sh
. ../lib/load.sh
loops=$((DURATION * 1000000 / INTERVAL))

load_start
# -v: every cycle's latency written, as the suite and compare run it (the histogram
# lines below have no colons, the per-cycle ones do)
cyclictest -m -v -p 80 -i "$INTERVAL" -l "$loops" -h "$HISTOGRAM" > /tmp/cyc.hist 2>/dev/null
rc=$?
load_stop
[ $rc = 0 ] || echo "boardlab: cyclictest exited with $rc"

# the -h summary: '# Min Latencies: 00010' ...; histogram lines 'us count'
field() { awk -v k="# $1 Latencies:" 'index($0, k) == 1 { print $4 + 0 }' /tmp/cyc.hist; }
overflows=$(awk '/^# Histogram Overflows:/ { print $4 + 0 }' /tmp/cyc.hist)
# the q-th percentile of the histogram (overflows counted above its last bin), as
# boardlab.measure.parsers.percentile_from_histogram
percentile() {
    awk -v over="${overflows:-0}" -v q="$1" '
    /^[0-9]+[ \t]+[0-9]+$/ { lat[n] = $1 + 0; cnt[n] = $2 + 0; total += $2; n++ }
    END { total += over; need = q / 100 * total; seen = 0
          for (i = 0; i < n; i++) { seen += cnt[i]; if (cnt[i] && seen >= need) { print lat[i]; exit } }
          if (n) print lat[n - 1] }' /tmp/cyc.hist
}
grep '^#' /tmp/cyc.hist | grep -v '^# Histogram$'
report min_us "$(field Min)" us
report avg_us "$(field Avg)" us
report max_us "$(field Max)" us
report p99_us "$(percentile 99)" us
report p0_1_us "$(percentile 0.1)" us
rm -f /tmp/cyc.hist
