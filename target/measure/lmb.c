/* The study's lmbench figures, each by lmbench's method (METHODS.md says which, and where
 * ours differs), under lmbench's program names and arguments, so runs.sh runs either set.
 * Each prints integer counts and nanoseconds, one '@raw' line a figure:
 *   @raw lat NAME n=OPS ns=NS             a latency: NS / OPS per operation
 *   @raw bw NAME bytes=B ns=NS            a bandwidth: B bytes moved in NS
 *   @raw rate NAME n=OPS ns=NS            a rate: OPS in NS
 *   @raw ctx size=KB procs=P hops=H ns=NS ovr_hops=OH ovr_ns=ONS
 *                                         a context switch: NS / H less the overhead ONS / OH
 * NS is the median of BL_TRIES timed runs (11), each lasting about ENOUGH (rt.c: bl_enough_ns),
 * with OPS found by doubling, as lmbench's benchmp does. */
#include "rt.h"

typedef void (*op_fn)(void *ctx, u64 n);

/* lmbench's benchmp: n doubled until a run lasts half of ENOUGH, then the median of the
 * tries at that n */
static u64 timed(op_fn op, void *ctx, u64 *n_out)
{
    u64 enough = bl_enough_ns(), n = 1, t;
    for (;;) {
        u64 t0 = now_ns();
        op(ctx, n);
        t = now_ns() - t0;
        if (t >= (enough >> 1) || n >= (1ULL << 30))
            break;
        n <<= (t < (enough >> 4)) ? 2 : 1;   /* x4 while far below: never far beyond ENOUGH */
    }
    int tries = bl_tries();
    u64 v[101];
    for (int i = 0; i < tries; i++) {
        u64 t0 = now_ns();
        op(ctx, n);
        v[i] = now_ns() - t0;
    }
    bl_sort_u64(v, tries);
    *n_out = n;
    return v[tries / 2];
}

static void raw(const char *kind, const char *name, const char *count_key, u64 count, u64 ns)
{
    out_s("@raw ");
    out_s(kind);
    out_c(' ');
    out_s(name);
    out_c(' ');
    out_s(count_key);
    out_c('=');
    out_u(count);
    out_s(" ns=");
    out_u(ns);
    out_c('\n');
    out_flush();
}

static void lat(const char *name, op_fn op, void *ctx)
{
    u64 n, ns = timed(op, ctx, &n);
    raw("lat", name, "n", n, ns);
}

static void child_exit(int code)    /* a child leaves the parent's buffered output alone */
{
    for (;;)
        sys1(exit_group, code);
}

/* ---- lat_syscall null: getppid(), the cheapest system call ---------------------------- */
static void op_getppid(void *ctx, u64 n)
{
    (void)ctx;
    while (n--)
        sys0(getppid);
}

static int lat_syscall(int argc, char **argv)
{
    if (argc < 2 || !bl_streq(argv[1], "null"))
        die("lat_syscall", "usage: lat_syscall null", 0);
    lat("syscall_null", op_getppid, 0);
    return 0;
}

/* ---- lat_proc fork: fork, the child exits at once, the parent waits ------------------- */
/* lmbench's forking process is a C program's, and most of its figure is page faults: fork
 * copies no page table of the C library's text (a file mapping without anonymous pages),
 * so the child's exit path faults it in again; each data page either side writes after the
 * fork is copied; and the entries fork did copy are old in the child (on ARM each first
 * touch is a fault that marks it young). Counted of lmbench 3.0-a9's lat_proc on Debian
 * armhf, 6.1 (the kernel's function tracer, docs/notes/measurement-runs.md, 2026-12-07):
 * per fork its child takes 31 faults (12 mapping file pages around, 8 writes to a shared
 * page of which 6 copy it, 11 neither), the parent 7 (3 copies). This process's child does
 * the same beside the faults of its own (1 file, 1 copy, 2 neither): it reads a file mapping
 * one fault-around window apart, writes pages written before the fork, reads others written
 * before it; the parent writes pages after the fork. */
#define PAGE 4096
#define FAULT_AROUND (64 * 1024)    /* the kernel's default fault_around_bytes */
#define FORK_FILE_FAULTS 11
#define FORK_CHILD_COPIES 5
#define FORK_CHILD_READS 9
#define FORK_PARENT_COPIES 2

struct fork_shape { const volatile char *text; char *data, *parent_data; const volatile char *read; };

static void fork_shape_init(struct fork_shape *s)
{
    const char *name = "/tmp/bl-fork-text";
    long fd = sys3(open, name, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        die("lat_proc", "open /tmp/bl-fork-text", fd);
    char *zeros = bl_map(FAULT_AROUND);
    if (!zeros)
        die("lat_proc", "mmap", 0);
    for (int i = 0; i < FORK_FILE_FAULTS; i++)
        if (bl_write_all((int)fd, zeros, FAULT_AROUND) < 0)
            die("lat_proc", "write /tmp/bl-fork-text", 0);
    sys2(munmap, zeros, FAULT_AROUND);
    long m = sys6(mmap2, 0, FORK_FILE_FAULTS * FAULT_AROUND, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m < 0 && m > -4096)
        die("lat_proc", "mmap /tmp/bl-fork-text", m);
    sys1(close, fd);
    sys1(unlink, name);
    s->text = (const volatile char *)m;
    s->data = bl_map(FORK_CHILD_COPIES * PAGE);
    s->parent_data = bl_map(FORK_PARENT_COPIES * PAGE);
    char *read = bl_map(FORK_CHILD_READS * PAGE);
    if (!s->data || !s->parent_data || !read)
        die("lat_proc", "mmap", 0);
    memset(s->data, 1, FORK_CHILD_COPIES * PAGE);
    memset(s->parent_data, 1, FORK_PARENT_COPIES * PAGE);
    memset(read, 1, FORK_CHILD_READS * PAGE);
    s->read = read;
}

static void op_fork(void *ctx, u64 n)
{
    const struct fork_shape *s = ctx;
    while (n--) {
        long pid = bl_fork();
        if (pid == 0) {
            unsigned sum = 0;
            for (int i = 0; i < FORK_FILE_FAULTS; i++)
                sum += s->text[i * FAULT_AROUND];
            for (int i = 0; i < FORK_CHILD_READS; i++)
                sum += s->read[i * PAGE];
            for (int i = 0; i < FORK_CHILD_COPIES; i++)
                s->data[i * PAGE] = (char)sum;
            child_exit(0);
        }
        if (pid < 0)
            die("lat_proc", "fork", pid);
        for (int i = 0; i < FORK_PARENT_COPIES; i++)
            s->parent_data[i * PAGE]++;
        int st;
        while (sys4(wait4, pid, &st, 0, 0) == -EINTR)
            ;
    }
}

static int lat_proc(int argc, char **argv)
{
    if (argc < 2 || !bl_streq(argv[1], "fork"))
        die("lat_proc", "usage: lat_proc fork", 0);
    struct fork_shape shape;
    fork_shape_init(&shape);
    lat("proc_fork", op_fork, &shape);
    return 0;
}

/* ---- ping-pong of one byte between two processes: pipes (lat_pipe), AF_UNIX (lat_unix) */
struct pingpong { int out, in; };

static void op_pingpong(void *ctx, u64 n)
{
    struct pingpong *p = ctx;
    char c = 'x';
    while (n--) {
        if (sys3(write, p->out, &c, 1) != 1 || bl_read_all(p->in, &c, 1) != 1)
            die("ping-pong", "the echo process went away", 0);
    }
}

static void echo_loop(int in, int out, size_t size)
{
    char buf[64];
    for (;;) {
        if (bl_read_all(in, buf, size) != (long)size)
            child_exit(0);
        bl_write_all(out, buf, size);
    }
}

static int lat_pipe(int argc, char **argv)
{
    (void)argc, (void)argv;
    int to[2], from[2];
    long r;
    if ((r = sys1(pipe, to)) < 0 || (r = sys1(pipe, from)) < 0)
        die("lat_pipe", "pipe", r);
    long pid = bl_fork();
    if (pid == 0) {
        sys1(close, to[1]);
        sys1(close, from[0]);
        echo_loop(to[0], from[1], 1);
    }
    sys1(close, to[0]);
    sys1(close, from[1]);
    struct pingpong p = { to[1], from[0] };
    lat("pipe", op_pingpong, &p);
    sys1(close, to[1]);
    bl_wait_all();
    return 0;
}

static int lat_unix(int argc, char **argv)
{
    (void)argc, (void)argv;
    int sv[2];
    long r = sys4(socketpair, AF_UNIX, SOCK_STREAM, 0, sv);
    if (r < 0)
        die("lat_unix", "socketpair", r);
    long pid = bl_fork();
    if (pid == 0) {
        sys1(close, sv[0]);
        echo_loop(sv[1], sv[1], 1);
    }
    sys1(close, sv[1]);
    struct pingpong p = { sv[0], sv[0] };
    lat("unix", op_pingpong, &p);
    sys1(close, sv[0]);
    bl_wait_all();
    return 0;
}

/* ---- the network programs: a server started with -s, stopped with -S HOST ------------- */
#define PORT_TCP 31234
#define PORT_UDP 31235
#define PORT_CONNECT 31236
#define PORT_BW_TCP 31237

static void pidfile_name(char *buf, const char *prog)
{
    const char *pre = "/tmp/bl-";
    size_t i = 0;
    while (*pre)
        buf[i++] = *pre++;
    while (*prog && i < 50)
        buf[i++] = *prog++;
    buf[i++] = '.', buf[i++] = 'p', buf[i++] = 'i', buf[i++] = 'd', buf[i] = 0;
}

static void sockaddr(struct bl_sockaddr_in *a, const char *host, int port, const char *prog)
{
    memset(a, 0, sizeof *a);
    a->family = AF_INET;
    a->port = bl_htons((unsigned short)port);
    if (host && bl_inet_addr(host, &a->addr) < 0)
        die(prog, "the host is no dotted IPv4 address", 0);
}

static int stop_server(const char *prog)
{
    char name[64], buf[16];
    pidfile_name(name, prog);
    long fd = sys3(open, name, O_RDONLY, 0);
    if (fd < 0)
        die(prog, "no server of ours to stop (its pid file)", fd);
    long n = sys3(read, fd, buf, sizeof buf - 1);
    sys1(close, fd);
    buf[n > 0 ? n : 0] = 0;
    long pid = bl_atol(buf);
    if (pid > 1)
        sys2(kill, pid, SIGTERM);
    sys1(unlink, name);
    return 0;
}

/* bound and listening (or bound, for UDP) before -s returns: the client may start at once */
static int start_server(const char *prog, int type, int port, void (*serve)(int sock))
{
    long s = sys3(socket, AF_INET, type, 0), r;
    if (s < 0)
        die(prog, "socket", s);
    int one = 1;
    sys5(setsockopt, s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct bl_sockaddr_in a;
    sockaddr(&a, 0, port, prog);
    /* the last run's server may still be going away (-S signals it and returns, as
       lmbench's does): its port is free within a few milliseconds, waited for up to 2 s */
    for (int i = 0; (r = sys3(bind, s, &a, sizeof a)) == -EADDRINUSE && i < 200; i++) {
        struct bl_timespec pause = { 0, 10 * 1000 * 1000 };
        sys4(clock_nanosleep, CLOCK_MONOTONIC, 0, &pause, 0);
    }
    if (r < 0)
        die(prog, "bind", r);
    if (type == SOCK_STREAM && (r = sys2(listen, s, 64)) < 0)
        die(prog, "listen", r);
    long pid = bl_fork();
    if (pid == 0) {
        sys0(setsid);
        bl_ignore_signal(SIGCHLD);
        bl_ignore_signal(SIGPIPE);
        serve((int)s);
        child_exit(0);
    }
    char name[64];
    pidfile_name(name, prog);
    long fd = sys3(open, name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        die(prog, "pid file", fd);
    char d[12];
    int i = 0;
    do { d[i++] = (char)('0' + pid % 10); pid /= 10; } while (pid);
    while (i)
        sys3(write, fd, &d[--i], 1);
    sys1(close, fd);
    return 0;
}

/* lmbench's sock_optimize(): a 1 MB buffer asked for, halved until the kernel takes it
   (Linux takes any size and caps it at its rmem_max/wmem_max) */
static void lmbench_buffers(int s, int which)
{
    for (int size = 1024 * 1024; size > 0; size >>= 1)
        if (sys5(setsockopt, s, SOL_SOCKET, which, &size, sizeof size) == 0)
            return;
}

enum { PLAIN = 0, NODELAY = 1, BUFFERS = 2 };

/* a connected TCP socket; how: NODELAY (set after connecting), BUFFERS (lmbench's receive
   and send buffers, set before connecting, as bw_tcp's client does) or PLAIN */
static long connect_to(const char *prog, const char *host, int port, int how)
{
    long s = sys3(socket, AF_INET, SOCK_STREAM, 0), r;
    if (s < 0)
        die(prog, "socket", s);
    if (how & BUFFERS) {
        lmbench_buffers((int)s, SO_RCVBUF);
        lmbench_buffers((int)s, SO_SNDBUF);
    }
    struct bl_sockaddr_in a;
    sockaddr(&a, host, port, prog);
    if ((r = sys3(connect, s, &a, sizeof a)) < 0)
        die(prog, "connect", r);
    int one = 1;
    if (how & NODELAY)
        sys5(setsockopt, s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return s;
}

/* the server side: each connection served by a child of its own, as lmbench's are */
static void serve_echo(int s)
{
    for (;;) {
        long c = sys3(accept, s, 0, 0);
        if (c < 0)
            continue;
        if (bl_fork() == 0) {
            sys1(close, s);
            echo_loop((int)c, (int)c, 1);
        }
        sys1(close, c);
    }
}

/* lat_connect's server, as lmbench's: each connection read until the client closes it,
   then closed (the client closes first, so its side keeps the TIME_WAIT) */
static void serve_close(int s)
{
    for (;;) {
        long c = sys3(accept, s, 0, 0);
        if (c < 0)
            continue;
        char byte;
        while (sys3(read, c, &byte, 1) > 0)
            ;
        sys1(close, c);
    }
}

static void serve_udp(int s)
{
    char buf[64];
    struct bl_sockaddr_in from;
    for (;;) {
        int len = sizeof from;
        long n = sys6(recvfrom, s, buf, sizeof buf, 0, &from, &len);
        if (n > 0)
            sys6(sendto, s, buf, n, 0, &from, len);
    }
}

/* bw_tcp's server: the message size read once, then messages of it sent until the
   client closes (lmbench's source()); its socket's send buffer as lmbench's */
static void serve_bw(int s)
{
    for (;;) {
        long c = sys3(accept, s, 0, 0);
        if (c < 0)
            continue;
        if (bl_fork() == 0) {
            sys1(close, s);
            u32 size;
            char *buf;
            lmbench_buffers((int)c, SO_SNDBUF);
            if (bl_read_all((int)c, &size, sizeof size) != sizeof size || !(buf = bl_map(size)))
                child_exit(1);
            while (bl_write_all((int)c, buf, size) >= 0)
                ;
            child_exit(0);
        }
        sys1(close, c);
    }
}

static const char *host_arg(int argc, char **argv, const char *prog)
{
    if (argc < 2 || argv[argc - 1][0] == '-')
        die(prog, "usage: PROGRAM -s | PROGRAM [-m SIZE] HOST | PROGRAM -S HOST", 0);
    return argv[argc - 1];
}

static int lat_tcp(int argc, char **argv)
{
    if (argc > 1 && bl_streq(argv[1], "-s"))
        return start_server("lat_tcp", SOCK_STREAM, PORT_TCP, serve_echo);
    if (argc > 1 && bl_streq(argv[1], "-S"))
        return stop_server("lat_tcp");
    long s = connect_to("lat_tcp", host_arg(argc, argv, "lat_tcp"), PORT_TCP, NODELAY);
    struct pingpong p = { (int)s, (int)s };
    lat("tcp", op_pingpong, &p);
    sys1(close, s);
    return 0;
}

/* the client's socket is connected, as lmbench's udp_connect makes it: send and recv,
   no route looked up per datagram (an unconnected sendto measured 11 % slower) */
static void op_udp(void *ctx, u64 n)
{
    int s = *(int *)ctx;
    u32 seq = 0, got;
    while (n--) {
        seq++;
        sys6(sendto, s, &seq, sizeof seq, 0, 0, 0);
        if (sys6(recvfrom, s, &got, sizeof got, 0, 0, 0) != sizeof got)
            die("lat_udp", "no answer from the server", 0);
    }
}

static int lat_udp(int argc, char **argv)
{
    if (argc > 1 && bl_streq(argv[1], "-s"))
        return start_server("lat_udp", SOCK_DGRAM, PORT_UDP, serve_udp);
    if (argc > 1 && bl_streq(argv[1], "-S"))
        return stop_server("lat_udp");
    struct bl_sockaddr_in to;
    int s = (int)sys3(socket, AF_INET, SOCK_DGRAM, 0);
    if (s < 0)
        die("lat_udp", "socket", s);
    sockaddr(&to, host_arg(argc, argv, "lat_udp"), PORT_UDP, "lat_udp");
    long r = sys3(connect, s, &to, sizeof to);
    if (r < 0)
        die("lat_udp", "connect", r);
    lat("udp", op_udp, &s);
    return 0;
}

static const char *connect_host;

static void op_connect(void *ctx, u64 n)
{
    (void)ctx;
    while (n--)
        sys1(close, connect_to("lat_connect", connect_host, PORT_CONNECT, PLAIN));
}

static int lat_connect(int argc, char **argv)
{
    if (argc > 1 && bl_streq(argv[1], "-s"))
        return start_server("lat_connect", SOCK_STREAM, PORT_CONNECT, serve_close);
    if (argc > 1 && bl_streq(argv[1], "-S"))
        return stop_server("lat_connect");
    connect_host = host_arg(argc, argv, "lat_connect");
    lat("connect", op_connect, 0);
    return 0;
}

/* ---- bandwidths: 64 KB chunks from a writer that never waits for the reader ----------- */
#define CHUNK (64 * 1024)

struct reader { int fd; char *buf; size_t chunk; };

static void op_read_chunks(void *ctx, u64 n)
{
    struct reader *r = ctx;
    while (n--)
        if (bl_read_all(r->fd, r->buf, r->chunk) != (long)r->chunk)
            die("bw", "the writer went away", 0);
}

static void bw(const char *name, struct reader *r)
{
    u64 n, ns = timed(op_read_chunks, r, &n);
    raw("bw", name, "bytes", n * r->chunk, ns);
}

static void writer_loop(int fd, char *buf)
{
    for (;;)
        if (bl_write_all(fd, buf, CHUNK) < 0)
            child_exit(0);
}

static int bw_pipe(int argc, char **argv)
{
    (void)argc, (void)argv;
    int p[2];
    long r = sys1(pipe, p);
    char *buf = bl_map(CHUNK);
    if (r < 0 || !buf)
        die("bw_pipe", "pipe", r);
    if (bl_fork() == 0) {
        sys1(close, p[0]);
        bl_ignore_signal(SIGPIPE);
        writer_loop(p[1], buf);
    }
    sys1(close, p[1]);
    struct reader rd = { p[0], buf, CHUNK };
    bw("pipe", &rd);
    sys1(close, p[0]);
    bl_wait_all();
    return 0;
}

static int bw_unix(int argc, char **argv)
{
    (void)argc, (void)argv;
    int sv[2];
    long r = sys4(socketpair, AF_UNIX, SOCK_STREAM, 0, sv);
    char *buf = bl_map(CHUNK);
    if (r < 0 || !buf)
        die("bw_unix", "socketpair", r);
    if (bl_fork() == 0) {
        sys1(close, sv[0]);
        bl_ignore_signal(SIGPIPE);
        writer_loop(sv[1], buf);
    }
    sys1(close, sv[1]);
    struct reader rd = { sv[0], buf, CHUNK };
    bw("unix", &rd);
    sys1(close, sv[0]);
    bl_wait_all();
    return 0;
}

static int bw_tcp(int argc, char **argv)
{
    if (argc > 1 && bl_streq(argv[1], "-s"))
        return start_server("bw_tcp", SOCK_STREAM, PORT_BW_TCP, serve_bw);
    if (argc > 1 && bl_streq(argv[1], "-S"))
        return stop_server("bw_tcp");
    size_t msg = CHUNK;
    long warmup_us = 7500000;   /* lmbench's LONGER: its default -W for network transfers */
    for (int i = 1; i + 1 < argc; i++) {
        if (bl_streq(argv[i], "-m"))
            msg = (size_t)bl_atol(argv[i + 1]);
        if (bl_streq(argv[i], "-W"))
            warmup_us = bl_atol(argv[i + 1]);
    }
    struct reader rd = { 0, bl_map(msg), msg };
    if (!rd.buf || msg < 1)
        die("bw_tcp", "-m SIZE: a message buffer", 0);
    rd.fd = (int)connect_to("bw_tcp", host_arg(argc, argv, "bw_tcp"), PORT_BW_TCP, BUFFERS);
    u32 size = (u32)msg;
    if (bl_write_all(rd.fd, &size, sizeof size) < 0)
        die("bw_tcp", "the server went away", 0);
    /* streamed on the same connection before timing, as lmbench's benchmp warms up: in
       short tries the figure was the connection's first second (METHODS.md) */
    for (u64 end = now_ns() + (u64)(warmup_us > 0 ? warmup_us : 0) * 1000ULL; now_ns() < end; )
        op_read_chunks(&rd, 16);
    bw("tcp", &rd);
    sys1(close, rd.fd);
    return 0;
}

/* bw_file_rd SIZE io_only FILE: SIZE bytes of FILE read again and again (cached), each
 * chunk summed as it is read (lmbench's "reading and summing") */
struct file_read { int fd; size_t size; char *buf; };
static volatile u32 read_sink;

static void op_file_read(void *ctx, u64 n)
{
    struct file_read *f = ctx;
    while (n--) {
        sys3(lseek, f->fd, 0, 0);
        for (size_t done = 0; done < f->size;) {
            size_t want = f->size - done < CHUNK ? f->size - done : CHUNK;
            long r = sys3(read, f->fd, f->buf, want);
            if (r <= 0)
                die("bw_file_rd", "the file is shorter than SIZE", r);
            const u32 *w = (const u32 *)f->buf;
            u32 sum = 0;
            for (long i = 0; i < r / 4; i++)
                sum += w[i];
            read_sink = sum;
            done += (size_t)r;
        }
    }
}

static int bw_file_rd(int argc, char **argv)
{
    if (argc < 4 || !bl_streq(argv[2], "io_only"))
        die("bw_file_rd", "usage: bw_file_rd SIZE io_only FILE", 0);
    struct file_read f = { 0, (size_t)bl_atol(argv[1]), bl_map(CHUNK) };
    long fd = sys3(open, argv[3], O_RDONLY, 0);
    if (fd < 0 || !f.buf || !f.size)
        die("bw_file_rd", "open", fd);
    f.fd = (int)fd;
    u64 n, ns = timed(op_file_read, &f, &n);
    raw("bw", "file_reread", "bytes", n * f.size, ns);
    return 0;
}

/* ---- lat_select -n N file: select() on N descriptors of one file, none waiting -------- */
struct select_set { int nfds; u32 set[32]; };

static void op_select(void *ctx, u64 n)
{
    struct select_set *s = ctx;
    while (n--) {
        u32 rd[32];
        long tv[2] = { 0, 0 };
        memcpy(rd, s->set, sizeof rd);
        sys5(_newselect, s->nfds, rd, 0, 0, tv);
    }
}

static int lat_select(int argc, char **argv)
{
    int count = 100;
    for (int i = 1; i + 1 < argc; i++)
        if (bl_streq(argv[i], "-n"))
            count = (int)bl_atol(argv[i + 1]);
    if (argc < 2 || !bl_streq(argv[argc - 1], "file") || count < 1 || count > 1000)
        die("lat_select", "usage: lat_select [-n N] file (N up to 1000)", 0);
    const char *name = "/tmp/bl-select";
    long fd = sys3(open, name, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        die("lat_select", "open /tmp/bl-select", fd);
    struct select_set s;
    memset(&s, 0, sizeof s);
    int last = (int)fd;
    s.set[fd >> 5] |= 1u << (fd & 31);
    for (int i = 1; i < count; i++) {
        long d = sys1(dup, fd);
        if (d < 0 || d >= 1024)
            die("lat_select", "dup", d);
        s.set[d >> 5] |= 1u << (d & 31);
        last = (int)d;
    }
    s.nfds = last + 1;
    sys1(unlink, name);
    lat("select_file", op_select, &s);
    return 0;
}

/* ---- lat_pagefault FILE: the first touch of each page of a fresh mapping of FILE ------ */
static long file_size(long fd)
{
    long size = sys3(lseek, fd, 0, 2 /* SEEK_END */);
    sys3(lseek, fd, 0, 0);
    return size;
}

static int lat_pagefault(int argc, char **argv)
{
    if (argc < 2)
        die("lat_pagefault", "usage: lat_pagefault FILE", 0);
    long fd = sys3(open, argv[argc - 1], O_RDONLY, 0), size = fd < 0 ? fd : file_size(fd);
    if (fd < 0 || size < 4096)
        die("lat_pagefault", "open FILE (one page at least)", fd);
    u64 pages = (u64)size >> 12, enough = bl_enough_ns();
    int tries = bl_tries();
    u64 v[101], passes = 0, nsum;
    /* passes per try: as many whole-file passes as fit in ENOUGH, found on the first try */
    for (int t = -1; t < tries; t++) {
        u64 done = 0;
        nsum = 0;
        do {
            long m = sys6(mmap2, 0, size, PROT_READ, MAP_SHARED, fd, 0);
            if (m < 0 && m > -4096)
                die("lat_pagefault", "mmap", m);
            volatile char *p = (volatile char *)m;
            u64 t0 = now_ns();
            for (u64 i = 0; i < pages; i++)
                (void)p[i << 12];
            nsum += now_ns() - t0;
            sys2(munmap, m, size);
            done++;
        } while (t < 0 ? nsum < (enough >> 1) : done < passes);
        if (t < 0)
            passes = done;
        else
            v[t] = nsum;
    }
    bl_sort_u64(v, tries);
    raw("lat", "pagefault", "n", passes * pages, v[tries / 2]);
    return 0;
}

/* ---- lat_mmap SIZE FILE: map SIZE of FILE, write one byte every 16 KB of its first tenth
 * (lmbench's sparse mapping), unmap ------------------------------------------------------ */
struct mapping { long fd; size_t size; unsigned long at; };

/* Where lmbench's mapping lands: a dynamically linked lat_mmap's mapping falls in an address
 * range of its own (below the shared libraries), so each iteration allocates a page table
 * at its first fault and frees it at munmap. A static program's mapping lands beside the
 * vdso, whose page table stays (ours took 0.895 x lmbench's time on qemu-arm). So the
 * mapping is asked for (a hint, not MAP_FIXED) at a 4 MB boundary inside a range just
 * found free: no other mapping shares its page table (2 MB on ARM, 4 MB on 32-bit PowerPC). */
#define PT_SPAN (4UL << 20)
static unsigned long empty_range(size_t size)
{
    long a = sys6(mmap2, 0, size + 2 * PT_SPAN, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (a < 0 && a > -4096)
        return 0;        /* no hint: the kernel's choice */
    sys2(munmap, a, size + 2 * PT_SPAN);
    return ((unsigned long)a + PT_SPAN - 1) & ~(PT_SPAN - 1);
}

static void op_mmap(void *ctx, u64 n)
{
    struct mapping *m = ctx;
    char c = (char)(m->size & 0xff);
    while (n--) {
        long a = sys6(mmap2, m->at, m->size, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd, 0);
        if (a < 0 && a > -4096)
            die("lat_mmap", "mmap", a);
        volatile char *p = (volatile char *)a;
        for (size_t off = 0; off < m->size / 10; off += 16 * 1024)
            p[off] = c;
        sys2(munmap, a, m->size);
    }
}

static int lat_mmap(int argc, char **argv)
{
    if (argc < 3)
        die("lat_mmap", "usage: lat_mmap SIZE FILE", 0);
    struct mapping m = { sys3(open, argv[2], O_RDWR, 0), (size_t)bl_atol(argv[1]), 0 };
    if (m.fd < 0 || !m.size || file_size(m.fd) < (long)m.size)
        die("lat_mmap", "open FILE (SIZE bytes at least)", m.fd);
    m.at = empty_range(m.size);
    lat("mmap", op_mmap, &m);
    return 0;
}

/* ---- lat_fs -s 0 DIR: create then delete BL_FS_FILES empty files --------------------- */
static void fs_name(char *buf, const char *dir, int i)
{
    size_t n = 0;
    while (*dir && n < 200)
        buf[n++] = *dir++;
    const char *p = "/bl_fs_";
    while (*p)
        buf[n++] = *p++;
    char d[8];
    int k = 0;
    do { d[k++] = (char)('0' + i % 10); i /= 10; } while (i);
    while (k)
        buf[n++] = d[--k];
    buf[n] = 0;
}

static int lat_fs(int argc, char **argv)
{
    if (argc < 4 || !bl_streq(argv[1], "-s") || bl_atol(argv[2]) != 0)
        die("lat_fs", "usage: lat_fs -s 0 DIR (empty files only)", 0);
    const char *e = bl_getenv("BL_FS_FILES");
    int files = e ? (int)bl_atol(e) : 1000, tries = bl_tries();
    if (files < 1 || files > 100000)
        files = 1000;
    u64 create[101], removal[101];
    char name[256];
    for (int t = 0; t < tries; t++) {
        u64 t0 = now_ns();
        for (int i = 0; i < files; i++) {
            fs_name(name, argv[3], i);
            long fd = sys3(open, name, O_WRONLY | O_CREAT | O_TRUNC, 0600);
            if (fd < 0)
                die("lat_fs", "create", fd);
            sys1(close, fd);
        }
        u64 t1 = now_ns();
        for (int i = 0; i < files; i++) {
            fs_name(name, argv[3], i);
            sys1(unlink, name);
        }
        create[t] = t1 - t0;
        removal[t] = now_ns() - t1;
    }
    bl_sort_u64(create, tries);
    bl_sort_u64(removal, tries);
    raw("rate", "fs_create_0k", "n", (u64)files, create[tries / 2]);
    raw("rate", "fs_delete_0k", "n", (u64)files, removal[tries / 2]);
    return 0;
}

/* ---- lat_ctx -s KB P...: a token around a ring of P processes, each summing its own KB
 * of data when it holds it; the overhead (one process passing the token to itself through
 * a pipe and summing its data) is measured alike and subtracted by the host ------------ */
static volatile u32 ctx_sink;

static void sum_data(const u32 *data, size_t words)
{
    u32 s = 0;
    for (size_t i = 0; i < words; i++)
        s += data[i];
    ctx_sink = s;
}

struct ring { int to_next, from_prev; u32 *data; size_t words; };

static void op_ring(void *ctx, u64 n)
{
    struct ring *r = ctx;
    u32 token = 1;   /* an int, as lmbench's */
    while (n--) {
        if (sys3(write, r->to_next, &token, 4) != 4 || bl_read_all(r->from_prev, &token, 4) != 4)
            die("lat_ctx", "the ring broke", 0);
        sum_data(r->data, r->words);
    }
}

static int lat_ctx(int argc, char **argv)
{
    size_t kb = 0;
    int first = 1;
    if (argc > 2 && bl_streq(argv[1], "-s"))
        kb = (size_t)bl_atol(argv[2]), first = 3;
    if (first >= argc)
        die("lat_ctx", "usage: lat_ctx [-s KB] PROCESSES...", 0);
    size_t words = (kb << 10) / 4;
    u32 *data = bl_map(words ? words * 4 : 4);
    if (!data)
        die("lat_ctx", "its data", 0);
    for (size_t i = 0; i < words; i++)
        data[i] = (u32)i;

    int self[2];
    long r = sys1(pipe, self);
    if (r < 0)
        die("lat_ctx", "pipe", r);
    struct ring own = { self[1], self[0], data, words };
    u64 ovr_n, ovr_ns = timed(op_ring, &own, &ovr_n);
    sys1(close, self[0]);
    sys1(close, self[1]);

    for (int a = first; a < argc; a++) {
        int procs = (int)bl_atol(argv[a]);
        if (procs < 2 || procs > 64)
            die("lat_ctx", "a ring of 2 to 64 processes", 0);
        int p[64][2];
        for (int i = 0; i < procs; i++)
            if ((r = sys1(pipe, p[i])) < 0)
                die("lat_ctx", "pipe", r);
        long pids[64];
        /* process i reads p[i], writes p[(i + 1) % procs]; this one is process 0 */
        for (int i = 1; i < procs; i++) {
            pids[i] = bl_fork();
            if (pids[i] == 0) {
                u32 *mine = bl_map(words ? words * 4 : 4);
                for (size_t k = 0; k < words; k++)
                    mine[k] = (u32)k;
                u32 token;
                int in = p[i][0], out = p[(i + 1) % procs][1];
                for (;;) {
                    if (bl_read_all(in, &token, 4) != 4)
                        child_exit(0);
                    sum_data(mine, words);
                    sys3(write, out, &token, 4);
                }
            }
        }
        struct ring ring = { p[1][1], p[0][0], data, words };
        u64 rounds, ns = timed(op_ring, &ring, &rounds);
        for (int i = 1; i < procs; i++)
            sys2(kill, pids[i], SIGKILL);
        for (int i = 0; i < procs; i++)
            sys1(close, p[i][0]), sys1(close, p[i][1]);
        bl_wait_all();
        out_s("@raw ctx size=");
        out_u(kb);
        out_s(" procs=");
        out_u((u64)procs);
        out_s(" hops=");
        out_u(rounds * (u64)procs);
        out_s(" ns=");
        out_u(ns);
        out_s(" ovr_hops=");
        out_u(ovr_n);
        out_s(" ovr_ns=");
        out_u(ovr_ns);
        out_c('\n');
        out_flush();
    }
    return 0;
}

/* ---- bw_mem SIZE rd|wr|cp: lmbench's memory bandwidth over a working set of SIZE bytes:
 * rd sums every word, wr writes every word, cp copies every word into a second buffer of
 * SIZE; a pass moves SIZE bytes (lmbench counts the buffer's bytes once, for cp too).
 * Eight words a loop (lmbench's unrolls 128: the loop's own instructions differ, as
 * bw_file_rd's do). Integers only: the MPC8xx has no FPU. -------------------------------- */
struct membuf { u32 *src, *dst; size_t words; };
static volatile u32 mem_sink;

static void op_mem_rd(void *ctx, u64 n)
{
    struct membuf *m = ctx;
    while (n--) {
        u32 sum = 0;
        for (const u32 *p = m->src, *end = m->src + m->words; p < end; p += 8)
            sum += p[0] + p[1] + p[2] + p[3] + p[4] + p[5] + p[6] + p[7];
        mem_sink += sum;
    }
}

static void op_mem_wr(void *ctx, u64 n)
{
    struct membuf *m = ctx;
    while (n--) {
        u32 v = (u32)n;
        for (u32 *p = m->src, *end = m->src + m->words; p < end; p += 8)
            p[0] = p[1] = p[2] = p[3] = p[4] = p[5] = p[6] = p[7] = v;
    }
}

static void op_mem_cp(void *ctx, u64 n)
{
    struct membuf *m = ctx;
    while (n--) {
        const u32 *s = m->src;
        for (u32 *d = m->dst, *end = m->dst + m->words; d < end; d += 8, s += 8) {
            d[0] = s[0]; d[1] = s[1]; d[2] = s[2]; d[3] = s[3];
            d[4] = s[4]; d[5] = s[5]; d[6] = s[6]; d[7] = s[7];
        }
    }
}

static int bw_mem(int argc, char **argv)
{
    if (argc < 3)
        die("bw_mem", "usage: bw_mem SIZE rd|wr|cp", 0);
    long size = bl_atol(argv[1]);
    op_fn op = bl_streq(argv[2], "rd") ? op_mem_rd : bl_streq(argv[2], "wr") ? op_mem_wr
             : bl_streq(argv[2], "cp") ? op_mem_cp : 0;
    if (!op || size < 64)
        die("bw_mem", "usage: bw_mem SIZE rd|wr|cp (SIZE 64 bytes at least; k and m multiply)", 0);
    struct membuf m = { bl_map((size_t)size), op == op_mem_cp ? bl_map((size_t)size) : 0,
                        (size_t)size / 32 * 8 };
    if (!m.src || (op == op_mem_cp && !m.dst))
        die("bw_mem", "no memory for the working set", 0);
    for (size_t i = 0; i < m.words; i++)   /* every page touched before the clock starts */
        m.src[i] = (u32)i;
    if (op == op_mem_cp)
        op_mem_cp(&m, 1);   /* and the destination's */
    const char *name = op == op_mem_rd ? "mem_rd" : op == op_mem_wr ? "mem_wr" : "mem_cp";
    u64 n, ns = timed(op, &m, &n);
    raw("bw", name, "bytes", n * m.words * 4, ns);
    return 0;
}

/* ---- dispatch: the program is named by argv[0], as lmbench's programs are ------------- */
int jitter_main(int argc, char **argv);
int hackbench_main(int argc, char **argv);

struct applet { const char *name; int (*main)(int, char **); };
static const struct applet applets[] = {
    { "lat_syscall", lat_syscall }, { "lat_proc", lat_proc }, { "lat_pipe", lat_pipe },
    { "lat_unix", lat_unix }, { "lat_udp", lat_udp }, { "lat_tcp", lat_tcp },
    { "lat_connect", lat_connect }, { "lat_select", lat_select },
    { "lat_pagefault", lat_pagefault }, { "lat_mmap", lat_mmap }, { "lat_fs", lat_fs },
    { "lat_ctx", lat_ctx }, { "bw_pipe", bw_pipe }, { "bw_unix", bw_unix }, { "bw_tcp", bw_tcp },
    { "bw_file_rd", bw_file_rd }, { "bw_mem", bw_mem }, { "cyclictest", jitter_main }, { "hackbench", hackbench_main },
};

static const char *base_name(const char *p)
{
    const char *b = p;
    for (; *p; p++)
        if (*p == '/')
            b = p + 1;
    return b;
}

int main(int argc, char **argv)
{
    for (int shift = 0; shift < 2 && shift < argc; shift++) {   /* PROGRAM ARGS, or blmeasure PROGRAM ARGS */
        const char *me = base_name(argv[shift]);
        for (size_t i = 0; i < sizeof applets / sizeof applets[0]; i++)
            if (bl_streq(me, applets[i].name))
                return applets[i].main(argc - shift, argv + shift);
    }
    err_s("blmeasure: the programs are");
    for (size_t i = 0; i < sizeof applets / sizeof applets[0]; i++)
        err_s(" "), err_s(applets[i].name);
    err_s(" (named by argv[0], or blmeasure PROGRAM ARGS)\n");
    return 2;
}
