#!/bin/sh
# cyclictest under load: the same metric names as testsuites/test_jitter.py
. ../lib/gate.sh
. ../lib/load.sh
. ../lib/cycles.sh
loops=$((DURATION * 1000000 / INTERVAL))

load_start
# -v: every cycle's latency written, as the suite and compare run it; the histogram is made
# from those lines below, once the load has stopped (boardlab.measure.workloads: cyclictest's
# own -h prints all its buckets at exit, under the load)
cyclictest -m -v -p 80 -i "$INTERVAL" -l "$loops" > /tmp/cyc.v 2>/dev/null
rc=$?
load_stop
[ $rc = 0 ] || echo "boardlab: cyclictest exited with $rc"

# the per-cycle lines reduced as the suite reduces them (../lib/cycles.sh): 'H us count'
# bins, then 'N cycles overflows min max sum'
cycles_reduce /tmp/cyc.v "$HISTOGRAM" > /tmp/cyc.red
rm -f /tmp/cyc.v
grep '^H ' /tmp/cyc.red | sort -n -k 2 > /tmp/cyc.hist
grep '^N ' /tmp/cyc.red > /tmp/cyc.tot
read -r _ cycles overflows min max sum < /tmp/cyc.tot
rm -f /tmp/cyc.red /tmp/cyc.tot
[ "${cycles:-0}" = "$loops" ] || echo "boardlab: cyclictest printed ${cycles:-0} of its $loops cycles' latencies"
echo "# cycles ${cycles:-0} overflows ${overflows:-0} min $min max $max sum $sum"
percentile() {
    # n from 0: an unset variable is the subscript "", and the first bin was never read
    awk -v over="${overflows:-0}" -v q="$1" '
    BEGIN { n = 0 }
    $1 == "H" { lat[n] = $2 + 0; cnt[n] = $3 + 0; total += $3; n++ }
    END { total += over; need = q / 100 * total; seen = 0
          for (i = 0; i < n; i++) { seen += cnt[i]; if (cnt[i] && seen >= need) { print lat[i]; exit } }
          if (n) print lat[n - 1] }' /tmp/cyc.hist
}
report min_us "$min" us
report avg_us "$(awk -v n="${cycles:-0}" -v sum="${sum:-0}" 'BEGIN { if (n) printf "%.2f", sum / n }')" us
report max_us "$max" us
report p99_us "$(percentile 99)" us
report p0_1_us "$(percentile 0.1)" us
rm -f /tmp/cyc.hist
