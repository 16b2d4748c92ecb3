/* The run-time of rt.h: the entry point, system calls, output. */
#include "rt.h"

int main(int argc, char **argv);
char **bl_environ;

#if defined(__arm__)
/* EABI: number in r7, arguments in r0-r5, result (or -errno) in r0 */
long sys_call(long n, long a, long b, long c, long d, long e, long f)
{
    register long r7 __asm__("r7") = n;
    register long r0 __asm__("r0") = a;
    register long r1 __asm__("r1") = b;
    register long r2 __asm__("r2") = c;
    register long r3 __asm__("r3") = d;
    register long r4 __asm__("r4") = e;
    register long r5 __asm__("r5") = f;
    __asm__ volatile("svc 0" : "+r"(r0) : "r"(r7), "r"(r1), "r"(r2), "r"(r3), "r"(r4), "r"(r5) : "memory");
    return r0;
}
/* libgcc's division by zero calls raise() */
int raise(int sig);
int raise(int sig)
{
    return (int)sys2(kill, sys0(getpid), sig);
}
__asm__(".text\n.global _start\n.type _start,%function\n_start:\n"
        "\tmov fp, #0\n\tmov lr, #0\n\tmov r0, sp\n\tbic sp, sp, #15\n\tbl bl_start\n");
#elif defined(__powerpc__) && !defined(__powerpc64__)
/* number in r0, arguments in r3-r8, result in r3; an error sets cr0.SO and r3 = errno */
long sys_call(long n, long a, long b, long c, long d, long e, long f)
{
    register long r0 __asm__("r0") = n;
    register long r3 __asm__("r3") = a;
    register long r4 __asm__("r4") = b;
    register long r5 __asm__("r5") = c;
    register long r6 __asm__("r6") = d;
    register long r7 __asm__("r7") = e;
    register long r8 __asm__("r8") = f;
    __asm__ volatile("sc\n\tbns+ 1f\n\tneg %1, %1\n1:"
                     : "+r"(r0), "+r"(r3), "+r"(r4), "+r"(r5), "+r"(r6), "+r"(r7), "+r"(r8)
                     : : "memory", "cr0", "ctr", "r9", "r10", "r11", "r12", "xer");
    return r3;
}
/* the kernel leaves argc at 0(r1): hand that address on, on an aligned frame */
__asm__(".text\n.global _start\n.type _start,@function\n_start:\n"
        "\tmr 3, 1\n\tclrrwi 1, 1, 4\n\tli 0, 0\n\tstwu 1, -16(1)\n\tmtlr 0\n\tstw 0, 0(1)\n\tbl bl_start\n");
#else
#error "the programs know 32-bit ARM and 32-bit PowerPC"
#endif

/* Restartable sequences, registered as glibc 2.35 and later registers them for each
 * thread at start (Debian bookworm's lmbench, cyclictest and hackbench run so): the kernel
 * then updates this area on the task's return to user space after a switch, work a kernel
 * change may make dearer (6.1 -> 6.12 on qemu-arm: lmbench's pipe round trip +9.1 us,
 * +3.6 us with glibc's rseq off, as this program's without it). Registered with the
 * original 32-byte length, as glibc 2.36 does.
 * A forked child keeps the registration, as with glibc. BL_RSEQ=0 leaves it out (glibc:
 * GLIBC_TUNABLES=glibc.pthread.rseq=0); a kernel without rseq (before 4.18, or
 * CONFIG_RSEQ off) answers ENOSYS, and the program runs on, as glibc's do. */
#ifndef __NR_rseq
#if defined(__arm__)
#define __NR_rseq 398
#else
#define __NR_rseq 387
#endif
#endif
#if defined(__arm__)
#define RSEQ_SIG 0xe7f5def3u   /* glibc's for ARM: an undefined instruction */
#else
#define RSEQ_SIG 0x0fe5000bu   /* glibc's for PowerPC: a trap */
#endif
static struct { u32 cpu_id_start, cpu_id; u64 rseq_cs; u32 flags, node_id, mm_cid, pad; }
    rseq_area __attribute__((aligned(32))) = { 0, (u32)-1, 0, 0, 0, 0, 0 };

static void register_rseq(void)
{
    const char *e = bl_getenv("BL_RSEQ");
    if (e && bl_streq(e, "0"))
        return;
    sys4(rseq, &rseq_area, 32, 0, RSEQ_SIG);   /* ENOSYS or EINVAL: run on without it */
}

void bl_start(long *sp) __attribute__((noreturn, used));
void bl_start(long *sp)
{
    int argc = (int)sp[0];
    char **argv = (char **)(sp + 1);
    bl_environ = argv + argc + 1;
    register_rseq();
    bl_exit(main(argc, argv));
}

/* ---- output ---------------------------------------------------------------------- */
static char obuf[4096];
static size_t olen;

void out_flush_to(int fd)
{
    if (olen)
        bl_write_all(fd, obuf, olen);
    olen = 0;
}

void out_flush(void)
{
    out_flush_to(1);
}

void out_c(char c)
{
    if (olen == sizeof obuf)
        out_flush();
    obuf[olen++] = c;
}

void out_s(const char *s)
{
    while (*s)
        out_c(*s++);
}

void out_u(u64 v)
{
    char d[24];
    int i = 0;
    do {
        u64 q = bl_udiv64(v, 10);
        d[i++] = (char)('0' + (int)(v - q * 10));
        v = q;
    } while (v);
    while (i)
        out_c(d[--i]);
}

void out_d(s64 v)
{
    if (v < 0) {
        out_c('-');
        v = -v;
    }
    out_u((u64)v);
}

void err_s(const char *s)
{
    sys3(write, 2, s, bl_strlen(s));
}

void bl_exit(int code)
{
    out_flush();
    for (;;)
        sys1(exit_group, code);
}

void die(const char *prog, const char *what, long rc)
{
    out_flush();
    err_s(prog);
    err_s(": ");
    err_s(what);
    if (rc < 0) {   /* the kernel's -errno */
        char d[12];
        int i = 0;
        long v = -rc;
        err_s(" failed, errno ");
        do { d[i++] = (char)('0' + v % 10); v /= 10; } while (v && i < 11);
        while (i) { char c = d[--i]; sys3(write, 2, &c, 1); }
    }
    err_s("\n");
    bl_exit(1);
}

/* ---- strings, numbers ------------------------------------------------------------- */
size_t bl_strlen(const char *s)
{
    size_t n = 0;
    while (s[n])
        n++;
    return n;
}

int bl_streq(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}

int bl_startswith(const char *s, const char *p)
{
    while (*p)
        if (*s++ != *p++)
            return 0;
    return 1;
}

const char *bl_getenv(const char *name)
{
    size_t n = bl_strlen(name);
    for (char **e = bl_environ; e && *e; e++)
        if (bl_startswith(*e, name) && (*e)[n] == '=')
            return *e + n + 1;
    return 0;
}

long bl_atol(const char *s)
{
    long v = 0;
    int neg = 0;
    if (*s == '-')
        neg = 1, s++;
    while (*s >= '0' && *s <= '9')
        v = v * 10 + (*s++ - '0');
    if (*s == 'k' || *s == 'K')
        v <<= 10;
    else if (*s == 'm' || *s == 'M')
        v <<= 20;
    return neg ? -v : v;
}

u64 bl_udiv64(u64 n, u64 d)
{
    u64 q = 0, r = 0;
    if (!d)
        return 0;
    if (!(n >> 32) && !(d >> 32))
        return (u32)n / (u32)d;
    for (int i = 63; i >= 0; i--) {
        r = (r << 1) | ((n >> i) & 1);
        if (r >= d) {
            r -= d;
            q |= 1ULL << i;
        }
    }
    return q;
}

void *memset(void *s, int c, size_t n)
{
    volatile unsigned char *p = s;   /* volatile: not turned back into a call of memset */
    while (n--)
        *p++ = (unsigned char)c;
    return s;
}

void *memcpy(void *d, const void *s, size_t n)
{
    volatile unsigned char *o = d;
    const unsigned char *i = s;
    while (n--)
        *o++ = *i++;
    return d;
}

/* ---- time, processes, files ------------------------------------------------------------ */
u64 now_ns(void)
{
    struct bl_timespec t;
    sys2(clock_gettime, CLOCK_MONOTONIC, &t);
    return (u64)t.tv_sec * 1000000000ULL + (u64)t.tv_nsec;
}

long bl_fork(void)
{
#ifdef __NR_fork
    return sys0(fork);
#else
    return sys5(clone, SIGCHLD, 0, 0, 0, 0);
#endif
}

void bl_wait_all(void)
{
    int status;
    for (;;) {
        long r = sys4(wait4, -1, &status, 0, 0);
        if (r != -EINTR && r <= 0)
            return;
    }
}

long bl_write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    size_t done = 0;
    while (done < n) {
        long r = sys3(write, fd, p + done, n - done);
        if (r == -EINTR)
            continue;
        if (r <= 0)
            return r ? r : -1;
        done += (size_t)r;
    }
    return (long)done;
}

long bl_read_all(int fd, void *buf, size_t n)
{
    char *p = buf;
    size_t done = 0;
    while (done < n) {
        long r = sys3(read, fd, p + done, n - done);
        if (r == -EINTR)
            continue;
        if (r <= 0)
            return r ? r : (long)done;
        done += (size_t)r;
    }
    return (long)done;
}

void *bl_map(size_t bytes)
{
    long p = sys6(mmap2, 0, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return (p < 0 && p > -4096) ? 0 : (void *)p;
}

struct bl_sigaction { long handler; unsigned long flags; long restorer; u32 mask[2]; };

void bl_ignore_signal(int sig)
{
    struct bl_sigaction sa = { 1 /* SIG_IGN */, 0, 0, { 0, 0 } };
    sys4(rt_sigaction, sig, &sa, 0, 8);
}

int bl_inet_addr(const char *s, u32 *addr)
{
    unsigned char b[4];
    for (int i = 0; i < 4; i++) {
        long v = 0;
        int digits = 0;
        while (*s >= '0' && *s <= '9')
            v = v * 10 + (*s++ - '0'), digits++;
        if (!digits || v > 255 || (i < 3 && *s++ != '.'))
            return -1;
        b[i] = (unsigned char)v;
    }
    memcpy(addr, b, 4);   /* as written: network order */
    return *s ? -1 : 0;
}

unsigned short bl_htons(unsigned short v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return v;
#else
    return (unsigned short)((v << 8) | (v >> 8));
#endif
}

/* ---- repetition ------------------------------------------------------------------------ */
/* lmbench's ENOUGH where the caller sets it (runs.sh's quick mode: 100000), else ours,
 * else half a second a timed run (lmbench's own calibration aims near that on a slow board) */
u64 bl_enough_ns(void)
{
    const char *e = bl_getenv("BL_ENOUGH_US");
    if (!e)
        e = bl_getenv("ENOUGH");
    long us = e ? bl_atol(e) : 500000;
    return (u64)(us > 0 ? us : 500000) * 1000ULL;
}

int bl_tries(void)
{
    const char *e = bl_getenv("BL_TRIES");
    long n = e ? bl_atol(e) : 11;
    return (int)(n >= 1 && n <= 101 ? n : 11);
}

void bl_sort_u64(u64 *v, int n)
{
    for (int i = 1; i < n; i++) {
        u64 x = v[i];
        int j = i;
        while (j > 0 && v[j - 1] > x) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
}
