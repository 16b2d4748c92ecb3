# A cyclictest run's per-cycle lines ('thread:cycle:us', its -v output) reduced on the
# board in one pass, once the load has stopped. The same file for LAVA (sourced by
# jitter.sh) and for the pytest suite (written to the board by boardlab.measure.target_load).
#   cycles_reduce FILE RANGE [SLICE]
#     'H us count'  the histogram, one line a bin below RANGE us (longer: overflows)
#     'S n max'     the max of every SLICE cycles, n cycles so far (SLICE 0 or none: no S)
#     'N cycles overflows min max sum'  last, over every cycle
cycles_reduce() {
    awk -F: -v range="$2" -v slice="${3:-0}" '
    NF == 3 && $2 ~ /^ *[0-9]+$/ { v = $3 + 0; n++; sum += v
    if (n == 1 || v < lo) lo = v; if (v > hi) hi = v
    if (v < range) h[v]++; else over++
    if (slice) { if (v > m) m = v; if (n % slice == 0) { printf "S %d %d\n", n, m; m = 0 } } }
    END { for (k in h) printf "H %d %d\n", k, h[k]; printf "N %d %d %d %d %.0f\n", n, over, lo, hi, sum }
    ' "$1"
}
