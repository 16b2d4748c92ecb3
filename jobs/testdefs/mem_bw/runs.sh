# Memory bandwidth, as the mem_bw suite runs it: the one definition. LAVA's mem_bw.sh
# sources this file; the pytest side writes it to the board (boardlab.measure.target_load)
# and runs mb_run (its family's record).
#   mb_run   the project's bw_mem (target/measure/, lmbench's method) reading, writing
#            and copying a working set of MB_SIZE bytes: '@raw bw mem_rd|mem_wr|mem_cp
#            bytes=B ns=NS' each, integers (the figures are computed off the board);
#            QUICK=true: lmbench's quick timing (ENOUGH), each run about 0.1 s, not 0.5
# The working set is sized from the board's own RAM (its MemTotal): a sixteenth of it, at
# least 256 kB and at most 8 MB (a copy takes two): 1 MB on the TQM860L's 16 MB, whose
# lmbench runs of the study failed for lack of memory; beyond any of the boards' caches.
MB_MIN_KB=256
MB_MAX_KB=8192
mb_size_kb() {
    kb=0
    while read -r key value _; do [ "$key" = MemTotal: ] && kb=$((value / 16)); done < "${MB_MEMINFO:-/proc/meminfo}"
    [ "$kb" -lt "$MB_MIN_KB" ] && kb=$MB_MIN_KB
    [ "$kb" -gt "$MB_MAX_KB" ] && kb=$MB_MAX_KB
    echo "$kb"
}
mb_run() {
    size="$(mb_size_kb)k"
    echo "mem_bw: working set $size"
    (
        [ "$QUICK" = true ] && export ENOUGH=100000
        for op in rd wr cp; do bw_mem "$size" "$op" 2>&1 || exit $?; done
    )
}
