# lmbench's runs, group by group: the one sequence of the lmbench suite. LAVA's lmbench.sh
# sources this file; the pytest side writes it to the board (boardlab.measure.target_load)
# and runs the same functions. A group starts with '@lm-group NAME'; each run's output
# (lmbench writes its results on stderr: both kept) follows '@lm LABEL', the figure it
# gives; parsed by boardlab.measure.sample (pytest) and lmbench.sh (LAVA).
#   lm_groups [GROUP...]  those groups (none: every one), in lmbench's quick timing when
#                         QUICK=true; with SMALL=true the large ones are left out; a group
#                         latency:LABEL is that one latency's run alone (a bisect of it)
LM_GROUPS="latencies connect file_create_delete"
# not on a board under 32 MB (SMALL=true): they ran out of memory there in the study
LM_LARGE="context_switch bandwidth tcp_bandwidth"
lm_run() {  # LABEL CMD...: one run, its output after '@lm LABEL'
    echo "@lm $1"; shift
    "$@" > /tmp/lm.out 2>&1; rc=$?
    cat /tmp/lm.out
    [ $rc = 0 ] || echo "@lm-failed $rc: $*"
}
lm_times() {  # N LABEL CMD...: N runs (the figure: their median)
    n=$1; shift
    i=0; while [ $i -lt "$n" ]; do lm_run "$@"; i=$((i + 1)); done
}
lm_served() {  # PROGRAM [ARGS]: its server, one measurement against it, stop it
    prog=$1; shift
    "$prog" -s; sleep 0.2; "$prog" "$@" 127.0.0.1; rc=$?; "$prog" -S 127.0.0.1; return $rc
}
lm_file() { dd if=/dev/zero of=/tmp/lmfile bs=1024 count=1024 2>/dev/null; }
# the latencies, each its own run (lm_latency LABEL); lm_latencies runs them in this order
LM_LATENCIES="lat_syscall_null_us lat_proc_fork_us lat_pipe_us lat_unix_us lat_udp_us lat_tcp_us
lat_select_100fd_us lat_pagefault_us lat_mmap_1m_us"
lm_latency() {  # LABEL: the run that gives it (page fault and mmap share one 1 MB file)
    case $1 in
    lat_syscall_null_us) lm_run "$1" lat_syscall null ;;
    lat_proc_fork_us) lm_run "$1" lat_proc fork ;;
    lat_pipe_us) lm_run "$1" lat_pipe ;;
    lat_unix_us) lm_run "$1" lat_unix ;;
    lat_udp_us) lm_run "$1" lm_served lat_udp ;;
    lat_tcp_us) lm_run "$1" lm_served lat_tcp ;;
    lat_select_100fd_us) lm_run "$1" lat_select -n 100 file ;;
    lat_pagefault_us) lm_file; lm_run "$1" lat_pagefault /tmp/lmfile ;;
    lat_mmap_1m_us) [ -f /tmp/lmfile ] || lm_file; lm_run "$1" lat_mmap 1m /tmp/lmfile; rm -f /tmp/lmfile ;;
    *) echo "@lm-failed 2: no latency $1" ;;
    esac
}
lm_latencies() { for l in $LM_LATENCIES; do lm_latency "$l"; done; }
# loopback TCP: the median of 5 runs (one in about 10 lands in a second mode: 59 against
# 42 MB/s on armmp, each run its own connection), connect alike
lm_connect() { lm_times 5 lat_connect_us lm_served lat_connect; }
lm_file_create_delete() { lm_run lat_fs_0k lat_fs -s 0 /tmp; }
# the 16k ring: the median of 3 invocations (one in about 5 draws a second value of
# lat_ctx_16k_2p, 70 against 68 us on armmp, and its repetitions share it)
lm_context_switch() {
    lm_run lat_ctx_0k lat_ctx -s 0 2 4 8 16
    lm_run lat_ctx_1k lat_ctx -s 1 2 4 8 16
    lm_times 3 lat_ctx_16k lat_ctx -s 16 2 4 8 16
}
lm_bandwidth() {
    lm_run bw_pipe_mb_s bw_pipe
    lm_run bw_unix_mb_s bw_unix
    lm_file
    lm_run bw_file_reread_mb_s bw_file_rd 1m io_only /tmp/lmfile
    rm -f /tmp/lmfile
}
lm_tcp_bandwidth() { lm_times 5 bw_tcp_mb_s lm_served bw_tcp -m 65536; }
lm_groups() {
    (
    [ "$QUICK" = true ] && export ENOUGH=100000 TIMING_O=0 LOOP_O=0
    for g in ${*:-$LM_GROUPS $LM_LARGE}; do
        case " $LM_LARGE " in *" $g "*) [ "$SMALL" = true ] && continue ;; esac
        echo "@lm-group $g"
        case $g in latency:*) lm_latency "${g#latency:}" ;; *) "lm_$g" ;; esac
    done
    rm -f /tmp/lm.out /tmp/lmfile
    )
}
