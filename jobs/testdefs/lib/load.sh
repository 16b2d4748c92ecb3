# The jitter suite's load, as in the 2005 article: ls/find over / and hackbench, in loops.
# The same file for LAVA (sourced by jitter.sh) and for the pytest suite (written to the
# board by boardlab.measure.target_load).
#   load_start   start both loops (their pids in /tmp/load.pids)
#   load_stop    stop the loops and every command they started; returns only when none
#                is left, so a leftover hackbench never loads the next test
load_start() {
    (while true; do ls -lR / >/dev/null 2>&1; find / -name core >/dev/null 2>&1; done) >/dev/null 2>&1 &
    echo $! > /tmp/load.pids
    (while true; do hackbench -g 2 -l 50 >/dev/null 2>&1; done) >/dev/null 2>&1 &
    echo $! >> /tmp/load.pids
}

load_stop() {
    [ -f /tmp/load.pids ] && kill $(cat /tmp/load.pids) 2>/dev/null
    rm -f /tmp/load.pids
    n=0
    while pidof hackbench ls find >/dev/null 2>&1; do
        killall -q hackbench ls find 2>/dev/null
        n=$((n + 1))
        if [ $n -gt 100 ]; then echo "boardlab: the load did not stop"; return 1; fi
        sleep 0.1
    done
}
