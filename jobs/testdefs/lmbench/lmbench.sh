#!/bin/sh
# lmbench: the metrics of testsuites/test_lmbench.py, same names and units, from the same
# runs (./runs.sh: the pytest suite runs it too). SMALL=true (a board under 32 MB) skips the
# context switch and bandwidth runs, which ran out of memory there in the study.
. ../lib/gate.sh
. ./runs.sh
lm_groups | tee /tmp/lm.all

figure() {  # LABEL HOW [ARG]: the figure of each of LABEL's runs, their median (1, 3, 5 runs)
    # HOW: before WORD (the number before "microseconds", "MB/sec"), second (of the last
    # "size value" line: lat_mmap, bw_tcp, bw_file_rd), field N (lat_fs's 0k line),
    # ctx N (lat_ctx's line of N processes)
    awk -v label="$1" -v how="$2" -v arg="$3" '
    $1 == "@lm" { on = ($2 == label); if (on) run++; next }
    /^@lm-/ { on = 0; next }
    # the project'"'"'s programs: "@raw KIND [NAME] key=N ..." integers (target/measure/METHODS.md)
    on && $1 == "@raw" { v = ""; delete kv
         for (i = 3; i <= NF; i++) { split($i, p, "="); kv[p[1]] = p[2] }
         if ($2 == "lat" && how != "field" && how != "ctx") v = kv["ns"] / kv["n"] / 1000
         else if ($2 == "bw") v = kv["bytes"] / 1e6 / (kv["ns"] / 1e9)
         else if ($2 == "rate" && how == "field" && $3 == (arg == 3 ? "fs_create_0k" : "fs_delete_0k")) v = kv["n"] * 1e9 / kv["ns"]
         else if ($2 == "ctx" && how == "ctx" && kv["procs"] == arg) {
             v = (kv["ns"] / kv["hops"] - kv["ovr_ns"] / kv["ovr_hops"]) / 1000; if (v <= 0) v = "" }
         if (v != "") got[run] = sprintf("%.4f", v)
         next }
    on { v = ""
         if (how == "before") { for (i = 2; i <= NF; i++) if ($i == arg && $(i - 1) ~ /^[0-9.]+$/) v = $(i - 1) }
         else if (how == "second") { if (NF >= 2 && $1 ~ /^[0-9.]+$/ && $2 ~ /^[0-9.]+$/) v = $2 }
         else if (how == "field") { if ($1 == "0k") v = $(arg + 0) }
         else if (how == "ctx") { if ($1 == arg && NF == 2) v = $2 }
         if (v != "") got[run] = v }
    END { m = 0   # sorted as numbers, printed as lmbench wrote them
          for (r = 1; r <= run; r++) if (r in got) { j = m
              while (j > 0 && s[j] + 0 > got[r] + 0) { s[j + 1] = s[j]; j-- }
              s[j + 1] = got[r]; m++ }
          if (m) print s[int((m + 1) / 2)] }
    ' /tmp/lm.all
}

for n in lat_syscall_null_us lat_proc_fork_us lat_pipe_us lat_unix_us lat_udp_us lat_tcp_us \
         lat_connect_us lat_select_100fd_us lat_pagefault_us; do
    report "$n" "$(figure "$n" before microseconds)" us
done
report lat_mmap_1m_us "$(figure lat_mmap_1m_us second)" us
report lat_fs_create_0k_per_s "$(figure lat_fs_0k field 3)" 1/s
report lat_fs_delete_0k_per_s "$(figure lat_fs_0k field 4)" 1/s

if [ "$SMALL" = true ]; then
    echo "boardlab: a board under 32 MB: no context switch and bandwidth runs"
    for n in bw_pipe_mb_s bw_unix_mb_s bw_tcp_mb_s bw_file_reread_mb_s; do
        lava-test-case "$n" --result skip
    done
else
    for size in 0 1 16; do
        for n in 2 4 8 16; do
            report "lat_ctx_${size}k_${n}p_us" "$(figure "lat_ctx_${size}k" ctx $n)" us
        done
    done
    report bw_pipe_mb_s "$(figure bw_pipe_mb_s before MB/sec)" MB/s
    report bw_unix_mb_s "$(figure bw_unix_mb_s before MB/sec)" MB/s
    report bw_tcp_mb_s "$(figure bw_tcp_mb_s second)" MB/s
    report bw_file_reread_mb_s "$(figure bw_file_reread_mb_s second)" MB/s
fi
rm -f /tmp/lm.all
