#!/bin/sh
# lmbench: the metrics of testsuites/test_lmbench.py, same names and units (lmbench
# prints its results on stderr). SMALL=true (a board under 32 MB) skips the context
# switch and bandwidth runs, which ran out of memory there in the study.
. ../lib/gate.sh
[ "$QUICK" = true ] && export ENOUGH=100000 TIMING_O=0 LOOP_O=0

run() { "$@" 2>&1 | tee /tmp/lm.out; }
# the number before WORD ("microseconds", "MB/sec") in the last output
before() { sed -n "s|.* \([0-9.][0-9.]*\) $1.*|\1|p" /tmp/lm.out | tail -n 1; }
# the second number of the last "size value" line (lat_mmap, bw_tcp, bw_file_rd)
second() { awk 'NF >= 2 && $1 ~ /^[0-9.]+$/ && $2 ~ /^[0-9.]+$/ { v = $2 } END { print v }' /tmp/lm.out; }
served() {  # PROGRAM [ARGS]: its server, one measurement against it, stop it
    prog=$1; shift
    "$prog" -s; sleep 0.2; "$prog" "$@" 127.0.0.1; "$prog" -S 127.0.0.1
}
runs5() {  # "EXTRACT [ARG]" CMD...: 5 runs of CMD, each one's figure (read by EXTRACT) in /tmp/lm.runs
    extract=$1; shift
    : > /tmp/lm.runs
    for i in 1 2 3 4 5; do run "$@" > /dev/null; cat /tmp/lm.out; $extract >> /tmp/lm.runs; done
}
middle() { sort -n /tmp/lm.runs | sed -n 3p; }   # the median of runs5's figures
latency() {  # NAME CMD...
    name=$1; shift
    run "$@" > /dev/null; cat /tmp/lm.out
    report "$name" "$(before microseconds)" us
}

latency lat_syscall_null_us lat_syscall null
latency lat_proc_fork_us lat_proc fork
latency lat_pipe_us lat_pipe
latency lat_unix_us lat_unix
latency lat_udp_us served lat_udp
latency lat_tcp_us served lat_tcp
# loopback TCP: the median of 5 runs, as boardlab.measure.sample.TCP_RUNS
runs5 "before microseconds" served lat_connect; report lat_connect_us "$(middle)" us
latency lat_select_100fd_us lat_select -n 100 file
dd if=/dev/zero of=/tmp/lmfile bs=1024 count=1024 2>/dev/null
latency lat_pagefault_us lat_pagefault /tmp/lmfile
run lat_mmap 1m /tmp/lmfile
report lat_mmap_1m_us "$(second)" us

run lat_fs -s 0 /tmp
report lat_fs_create_0k_per_s "$(awk '$1 == "0k" { print $3 }' /tmp/lm.out)" 1/s
report lat_fs_delete_0k_per_s "$(awk '$1 == "0k" { print $4 }' /tmp/lm.out)" 1/s

if [ "$SMALL" = true ]; then
    echo "boardlab: a board under 32 MB: no context switch and bandwidth runs"
    for n in bw_pipe_mb_s bw_unix_mb_s bw_tcp_mb_s bw_file_reread_mb_s; do
        lava-test-case "$n" --result skip
    done
else
    # the 16k ring: the median of 3 invocations, as boardlab.measure.sample.CTX_INVOCATIONS
    for size in 0 1 16; do
        invocations=1; [ $size = 16 ] && invocations=3
        : > /tmp/lm.ctx
        i=0; while [ $i -lt $invocations ]; do
            run lat_ctx -s $size 2 4 8 16 > /dev/null; cat /tmp/lm.out; cat /tmp/lm.out >> /tmp/lm.ctx
            i=$((i + 1))
        done
        for n in 2 4 8 16; do
            report "lat_ctx_${size}k_${n}p_us" "$(awk -v n=$n '$1 == n && NF == 2 { print $2 }' /tmp/lm.ctx |
                sort -n | sed -n "$(( (invocations + 1) / 2 ))p")" us
        done
    done
    run bw_pipe; report bw_pipe_mb_s "$(before MB/sec)" MB/s
    run bw_unix; report bw_unix_mb_s "$(before MB/sec)" MB/s
    runs5 second served bw_tcp -m 65536; report bw_tcp_mb_s "$(middle)" MB/s
    run bw_file_rd 1m io_only /tmp/lmfile; report bw_file_reread_mb_s "$(second)" MB/s
fi
rm -f /tmp/lmfile /tmp/lm.out /tmp/lm.runs /tmp/lm.ctx
