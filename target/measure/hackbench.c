/* hackbench's method (rt-tests' hackbench, Rusty Russell's original): GROUPS groups of 20
 * senders and 20 receivers, each a process; each receiver reads from a socket pair of its
 * own (AF_UNIX, stream), each sender writes LOOPS messages of 100 bytes to every receiver
 * of its group. Every task first says it is ready on a pipe and waits on a second one;
 * the clock starts when the second one is written to (all start together) and stops when
 * the last task has exited. Prints its settings and 'Time: S.mmm' (hackbench's line),
 * from integer nanoseconds, and '@raw messaging tasks=N ns=NS'.
 *   hackbench [-g GROUPS] [-l LOOPS] [-f FDS] [-s SIZE]   (defaults 10, 100, 20, 100) */
#include "rt.h"

static void child_exit(int code)
{
    for (;;)
        sys1(exit_group, code);
}

static int ready_pipe[2], wakeup_pipe[2];

/* a task: ready on `ready`, then waits for the end of `wakeup` (the parent closes it: a
 * task holding its write end too would wait for ever) */
static void ready_and_wait(int ready, int wakeup)
{
    char c = 'r';
    sys1(close, ready_pipe[0]);
    sys1(close, wakeup_pipe[1]);
    bl_write_all(ready, &c, 1);
    sys3(read, wakeup, &c, 1);
}

/* one message a read, as rt-tests' receiver reads (its hackbench.c: read(fd, data + done,
 * datasize - done)): reading what is queued at once (up to 512 bytes) let receivers drain
 * several messages and sleep far more often, 1.20 x Debian's time on qemu-arm */
static void receiver(int in, u64 messages, size_t size, int ready, int wakeup)
{
    char buf[512];
    ready_and_wait(ready, wakeup);
    while (messages--) {
        size_t done = 0;
        while (done < size) {
            long r = sys3(read, in, buf + done, size - done);
            if (r == -EINTR)
                continue;
            if (r <= 0)
                child_exit(1);
            done += (size_t)r;
        }
    }
    child_exit(0);
}

static void sender(const int *outs, int fds, long loops, size_t size, int ready, int wakeup)
{
    char msg[512];
    memset(msg, 'h', size);
    ready_and_wait(ready, wakeup);
    for (long l = 0; l < loops; l++)
        for (int j = 0; j < fds; j++)
            if (bl_write_all(outs[j], msg, size) != (long)size)
                child_exit(1);
    child_exit(0);
}

int hackbench_main(int argc, char **argv)
{
    long groups = 10, loops = 100, fds = 20, size = 100;
    for (int i = 1; i + 1 < argc; i += 2) {
        long v = bl_atol(argv[i + 1]);
        if (bl_streq(argv[i], "-g")) groups = v;
        else if (bl_streq(argv[i], "-l")) loops = v;
        else if (bl_streq(argv[i], "-f")) fds = v;
        else if (bl_streq(argv[i], "-s")) size = v;
        else
            die("hackbench (boardlab)", "options: -g GROUPS -l LOOPS -f FDS -s SIZE", 0);
    }
    if (groups < 1 || groups > 100 || loops < 1 || fds < 1 || fds > 64 || size < 1 || size > 512)
        die("hackbench (boardlab)", "-g 1..100 -l >=1 -f 1..64 -s 1..512", 0);
    long tasks = groups * fds * 2;
    out_s("Running in process mode with ");
    out_u((u64)groups);
    out_s(" groups using ");
    out_u((u64)(fds * 2));
    out_s(" file descriptors each (== ");
    out_u((u64)tasks);
    out_s(" tasks)\nEach sender will pass ");
    out_u((u64)loops);
    out_s(" messages of ");
    out_u((u64)size);
    out_s(" bytes\n");
    out_flush();

    int *ready = ready_pipe, *wakeup = wakeup_pipe;
    long r;
    if ((r = sys1(pipe, ready)) < 0 || (r = sys1(pipe, wakeup)) < 0)
        die("hackbench (boardlab)", "pipe", r);
    for (long g = 0; g < groups; g++) {
        int outs[64];
        for (long j = 0; j < fds; j++) {
            int sv[2];
            if ((r = sys4(socketpair, AF_UNIX, SOCK_STREAM, 0, sv)) < 0)
                die("hackbench (boardlab)", "socketpair", r);
            long pid = bl_fork();
            if (pid == 0) {
                sys1(close, sv[1]);
                receiver(sv[0], (u64)fds * (u64)loops, (size_t)size, ready[1], wakeup[0]);
            }
            if (pid < 0)
                die("hackbench (boardlab)", "fork", pid);
            sys1(close, sv[0]);
            outs[j] = sv[1];
        }
        for (long j = 0; j < fds; j++) {
            long pid = bl_fork();
            if (pid == 0)
                sender(outs, (int)fds, loops, (size_t)size, ready[1], wakeup[0]);
            if (pid < 0)
                die("hackbench (boardlab)", "fork", pid);
        }
        for (long j = 0; j < fds; j++)
            sys1(close, outs[j]);
    }
    for (long t = 0; t < tasks; t++) {   /* every task ready */
        char c;
        if (sys3(read, ready[0], &c, 1) != 1)
            die("hackbench (boardlab)", "a task did not start", 0);
    }
    u64 t0 = now_ns();
    sys1(close, wakeup[1]);      /* every waiting read returns: all start together */
    int failed = 0;
    for (long t = 0; t < tasks; t++) {
        int st = 0;
        long w;
        while ((w = sys4(wait4, -1, &st, 0, 0)) == -EINTR)
            ;
        if (w < 0)
            break;
        if (st != 0)
            failed = 1;
    }
    u64 ns = now_ns() - t0;
    if (failed)
        die("hackbench (boardlab)", "a task failed", 0);
    u64 ms = bl_udiv64(ns, 1000000ULL), s = bl_udiv64(ms, 1000ULL), frac = ms - s * 1000;
    out_s("Time: ");
    out_u(s);
    out_c('.');
    u32 f = (u32)frac;
    out_c((char)('0' + f / 100));
    out_c((char)('0' + f / 10 % 10));
    out_c((char)('0' + f % 10));
    out_s("\n@raw messaging tasks=");
    out_u((u64)tasks);
    out_s(" ns=");
    out_u(ns);
    out_c('\n');
    return 0;
}
