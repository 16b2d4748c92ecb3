/* A periodic wake-up's lateness, in the manner of cyclictest (and of realfeel before it):
 * a SCHED_FIFO thread sleeps to absolute times one interval apart on CLOCK_MONOTONIC
 * (clock_nanosleep, TIMER_ABSTIME) and counts how late each wake-up is, in whole
 * microseconds, truncated as cyclictest counts them. The options the lab uses, as
 * cyclictest spells them:
 *   -p PRIO  SCHED_FIFO priority        -i US    interval          -l N   cycles
 *   -m       mlockall                   -v       every cycle's 'thread:cycle:us' at the end
 *   -q       quiet                      --json=FILE   thread 0's cycles, min, max, sum
 *   -b US    break trace: at the first wake-up later than US, stop ftrace (tracing_on
 *            = 0, a trace_marker line saying why) and end the run; the trace is kept for
 *            reading (TRACEDIR/trace). --tracedir=DIR: tracefs (/sys/kernel/tracing, else
 *            /sys/kernel/debug/tracing).
 * The latencies are kept in memory and printed after the run (cyclictest prints them from
 * another thread during it): nothing but the measured thread runs while it measures. */
#include "rt.h"

struct sched_param_ { int prio; };

static void ts_of(struct bl_timespec *t, u64 ns)
{
    u64 s = bl_udiv64(ns, 1000000000ULL);
    t->tv_sec = (long)s;
    t->tv_nsec = (long)(ns - s * 1000000000ULL);
}

static long write_file(const char *dir, const char *name, const char *text)
{
    char path[256];
    size_t n = 0;
    while (*dir && n < 200)
        path[n++] = *dir++;
    path[n++] = '/';
    while (*name && n < 250)
        path[n++] = *name++;
    path[n] = 0;
    long fd = sys3(open, path, O_WRONLY, 0);
    if (fd < 0)
        return fd;
    long r = sys3(write, fd, text, bl_strlen(text));
    sys1(close, fd);
    return r;
}

static void out_json_u(const char *key, u64 v, int comma)
{
    out_c('"');
    out_s(key);
    out_s("\": ");
    out_u(v);
    if (comma)
        out_s(", ");
}

int jitter_main(int argc, char **argv)
{
    long prio = 0, interval_us = 1000, loops = 1000, brk_us = 0;
    int lock = 0, verbose = 0, quiet = 0;
    const char *json = 0, *tracedir = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : 0;
        if (bl_streq(a, "-p") && v) prio = bl_atol(v), i++;
        else if (bl_streq(a, "-i") && v) interval_us = bl_atol(v), i++;
        else if (bl_streq(a, "-l") && v) loops = bl_atol(v), i++;
        else if (bl_streq(a, "-b") && v) brk_us = bl_atol(v), i++;
        else if (bl_streq(a, "-m")) lock = 1;
        else if (bl_streq(a, "-v")) verbose = 1;
        else if (bl_streq(a, "-q")) quiet = 1;
        else if (bl_startswith(a, "--json=")) json = a + 7;
        else if (bl_startswith(a, "--tracedir=")) tracedir = a + 11;
        else
            die("cyclictest (boardlab)", "options: -p PRIO -i US -l N -m -v -q -b US --json=FILE --tracedir=DIR", 0);
    }
    if (interval_us < 1 || loops < 1 || loops > 10000000)
        die("cyclictest (boardlab)", "-i at least 1 us, -l 1 to 10000000 cycles", 0);
    u32 *lat = 0;
    if (verbose && !(lat = bl_map((size_t)loops * 4)))
        die("cyclictest (boardlab)", "no memory for -l cycles' latencies", 0);
    if (lock)
        sys1(mlockall, MCL_CURRENT | MCL_FUTURE);
    if (prio > 0) {
        struct sched_param_ sp = { (int)prio };
        long r = sys3(sched_setscheduler, 0, SCHED_FIFO, &sp);
        if (r < 0)
            die("cyclictest (boardlab)", "sched_setscheduler SCHED_FIFO", r);
    }
    if (brk_us && !tracedir)
        tracedir = write_file("/sys/kernel/tracing", "tracing_on", "1") >= 0 ? "/sys/kernel/tracing"
                                                                              : "/sys/kernel/debug/tracing";
    if (brk_us && write_file(tracedir, "tracing_on", "1") < 0)
        die("cyclictest (boardlab)", "-b: tracefs's tracing_on cannot be written", 0);

    u64 interval = (u64)interval_us * 1000ULL, next = now_ns() + interval, sum = 0;
    u32 min = ~0u, max = 0;
    long cycles = 0, broke_at = -1;
    struct bl_timespec t;
    while (cycles < loops) {
        ts_of(&t, next);
        long r;
        while ((r = sys4(clock_nanosleep, CLOCK_MONOTONIC, TIMER_ABSTIME, &t, 0)) == -EINTR)
            ;
        u64 now = now_ns();
        u64 late = now > next ? now - next : 0;
        u32 us = late >= 4000000000ULL ? 4000000u : (u32)late / 1000u;
        if (lat)
            lat[cycles] = us;
        sum += us;
        if (us < min) min = us;
        if (us > max) max = us;
        cycles++;
        if (brk_us && us > (u32)brk_us) {
            write_file(tracedir, "tracing_on", "0");
            write_file(tracedir, "trace_marker", "boardlab cyclictest -b: wake-up late beyond the bound\n");
            broke_at = cycles - 1;
            break;
        }
        next += interval;
        while (now > next)   /* overran: the next wake-up still ahead, as cyclictest's */
            next += interval;
    }
    if (verbose)
        for (long i = 0; i < cycles; i++) {
            out_s("0:");
            out_u((u64)i);
            out_c(':');
            out_u(lat[i]);
            out_c('\n');
        }
    if (broke_at >= 0) {
        out_s("# Break thread 0 at cycle ");
        out_u((u64)broke_at);
        out_s(": latency ");
        out_u(max);
        out_s(" us > ");
        out_u((u64)brk_us);
        out_s(" us; ftrace stopped, its trace kept in ");
        out_s(tracedir);
        out_s("/trace\n");
    }
    if (!quiet) {
        out_s("@raw wakeups cycles=");
        out_u((u64)cycles);
        out_s(" min=");
        out_u(cycles ? min : 0);
        out_s(" max=");
        out_u(max);
        out_s(" sum=");
        out_u(sum);
        out_c('\n');
    }
    out_flush();
    if (json) {
        long fd = sys3(open, json, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0)
            die("cyclictest (boardlab)", "--json FILE", fd);
        /* the figures in integers: the host divides sum by cycles for the average */
        out_s("{\"tool\": \"boardlab\", \"thread\": {\"0\": {");
        out_json_u("cycles", (u64)cycles, 1);
        out_json_u("min", cycles ? min : 0, 1);
        out_json_u("max", max, 1);
        out_json_u("sum", sum, 0);
        out_s("}}}\n");
        out_flush_to((int)fd);   /* the file, not stdout */
        sys1(close, fd);
    }
    return 0;
}
