#!/bin/sh
# cyclictest under load: the same metric names as testsuites/test_jitter.py
. ../lib/gate.sh
. ../lib/load.sh
loops=$((DURATION * 1000000 / INTERVAL))

load_start
# -v: every cycle's latency written, as the suite and compare run it; the histogram is made
# from those lines below, once the load has stopped (boardlab.measure.workloads: cyclictest's
# own -h prints all its buckets at exit, under the load)
cyclictest -m -v -p 80 -i "$INTERVAL" -l "$loops" > /tmp/cyc.v 2>/dev/null
rc=$?
load_stop
[ $rc = 0 ] || echo "boardlab: cyclictest exited with $rc"

# the per-cycle lines 'thread:cycle:us' -> the histogram below HISTOGRAM us ('us count'),
# its overflows, and min, avg, max over every cycle (boardlab.measure.workloads.CYCLES_AWK)
awk -F: -v range="$HISTOGRAM" '
    NF == 3 && $2 ~ /^ *[0-9]+$/ { v = $3 + 0; n++; sum += v
        if (n == 1 || v < lo) lo = v; if (v > hi) hi = v
        if (v < range) h[v]++; else over++ }
    END { for (k in h) printf "%d %d\n", k, h[k]
          if (n) printf "# cycles %d overflows %d min %d max %d avg %.2f\n", n, over, lo, hi, sum / n }
' /tmp/cyc.v | sort -n > /tmp/cyc.hist
rm -f /tmp/cyc.v
summary() { awk -v k="$1" '$1 == "#" { for (i = 2; i < NF; i += 2) if ($i == k) print $(i + 1) }' /tmp/cyc.hist; }
cycles=$(summary cycles)
[ "${cycles:-0}" = "$loops" ] || echo "boardlab: cyclictest printed ${cycles:-0} of its $loops cycles' latencies"
overflows=$(summary overflows)
# the q-th percentile of the histogram (overflows counted above its last bin), as
# boardlab.measure.parsers.percentile_from_histogram
percentile() {
    # n from 0: an unset variable is the subscript "", and the first bin was never read
    awk -v over="${overflows:-0}" -v q="$1" '
    BEGIN { n = 0 }
    /^[0-9]+ [0-9]+$/ { lat[n] = $1 + 0; cnt[n] = $2 + 0; total += $2; n++ }
    END { total += over; need = q / 100 * total; seen = 0
          for (i = 0; i < n; i++) { seen += cnt[i]; if (cnt[i] && seen >= need) { print lat[i]; exit } }
          if (n) print lat[n - 1] }' /tmp/cyc.hist
}
grep '^#' /tmp/cyc.hist
report min_us "$(summary min)" us
report avg_us "$(summary avg)" us
report max_us "$(summary max)" us
report p99_us "$(percentile 99)" us
report p0_1_us "$(percentile 0.1)" us
rm -f /tmp/cyc.hist
