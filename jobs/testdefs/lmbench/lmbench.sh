#!/bin/sh
# lmbench: the same metric names as testsuites/test_lmbench.py (lmbench prints its
# results on stderr)
. ../lib/gate.sh
[ "$QUICK" = true ] && export ENOUGH=100000 TIMING_O=0 LOOP_O=0

# measure NAME UNITS WORD CMD...: the number before WORD ("microseconds", "MB/sec")
measure() {
    name=$1 units=$2 word=$3; shift 3
    out=$("$@" 2>&1)
    echo "$out"
    report "$name" "$(echo "$out" | sed -n "s|.* \([0-9.][0-9.]*\) $word.*|\1|p" | tail -n 1)" "$units"
}
served() {  # PROGRAM: its server, one measurement against it, stop it
    "$1" -s; sleep 0.2; "$1" 127.0.0.1; "$1" -S 127.0.0.1
}

measure lat_syscall_null_us us microseconds lat_syscall null
measure lat_proc_fork_us us microseconds lat_proc fork
measure lat_pipe_us us microseconds lat_pipe
measure lat_unix_us us microseconds lat_unix
measure lat_udp_us us microseconds served lat_udp
measure lat_tcp_us us microseconds served lat_tcp
measure lat_select_100fd_us us microseconds lat_select -n 100 file
measure bw_pipe_mb_s MB/s MB/sec bw_pipe
measure bw_unix_mb_s MB/s MB/sec bw_unix
