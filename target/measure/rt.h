/* The programs' run-time: a freestanding start, Linux system calls and integer output,
 * for 32-bit ARM (EABI) and 32-bit PowerPC, and nothing else. No C library: Debian's
 * powerpc C library is built for a hardware FPU (its variadic functions save the FP
 * registers, its setjmp stores them), and an MPC8xx kernel without FPU emulation kills a
 * program at the first FP instruction. Here no function, of ours or a library's, holds
 * one (tests/test_own_programs.py scans the binaries). No floating point: every figure is
 * printed as integer counts and nanoseconds, and the host computes. */
#ifndef BL_RT_H
#define BL_RT_H

#include <asm/unistd.h>

typedef unsigned long long u64;
typedef long long s64;
typedef unsigned int u32;
typedef unsigned long size_t;

long sys_call(long n, long a, long b, long c, long d, long e, long f);
#define sys0(n) sys_call(__NR_##n, 0, 0, 0, 0, 0, 0)
#define sys1(n, a) sys_call(__NR_##n, (long)(a), 0, 0, 0, 0, 0)
#define sys2(n, a, b) sys_call(__NR_##n, (long)(a), (long)(b), 0, 0, 0, 0)
#define sys3(n, a, b, c) sys_call(__NR_##n, (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define sys4(n, a, b, c, d) sys_call(__NR_##n, (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)
#define sys5(n, a, b, c, d, e) sys_call(__NR_##n, (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), 0)
#define sys6(n, a, b, c, d, e, f) sys_call(__NR_##n, (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), (long)(f))

/* the kernel's constants these programs use (asm-generic values; ARM and PowerPC agree) */
#define O_RDONLY 0
#define O_WRONLY 1
#define O_RDWR 2
#define O_CREAT 0100
#define O_TRUNC 01000
#define PROT_READ 1
#define PROT_WRITE 2
#define MAP_SHARED 1
#define MAP_PRIVATE 2
#define MAP_ANONYMOUS 0x20
#define MCL_CURRENT 1
#define MCL_FUTURE 2
#define AF_UNIX 1
#define AF_INET 2
#define SOCK_STREAM 1
#define SOCK_DGRAM 2
#define SOL_SOCKET 1
#define SO_REUSEADDR 2
#define SO_SNDBUF 7
#define SO_RCVBUF 8
#define IPPROTO_TCP 6
#define TCP_NODELAY 1
#define CLOCK_MONOTONIC 1
#define TIMER_ABSTIME 1
#define SCHED_FIFO 1
#define SIGKILL 9
#define SIGTERM 15
#define SIGCHLD 17
#define SIGPIPE 13
#define EINTR 4
#define EADDRINUSE 98

struct bl_timespec { long tv_sec; long tv_nsec; };      /* the 32-bit time syscalls' */
struct bl_sockaddr_in { unsigned short family; unsigned short port; u32 addr; char zero[8]; };

extern char **bl_environ;

/* output: a buffer written to fd 1 on flush (and at exit); errors to fd 2 at once */
void out_s(const char *s);
void out_u(u64 v);
void out_d(s64 v);
void out_c(char c);
void out_flush(void);
void out_flush_to(int fd);
void err_s(const char *s);
void die(const char *prog, const char *what, long rc) __attribute__((noreturn));
void bl_exit(int code) __attribute__((noreturn));

/* strings and numbers */
size_t bl_strlen(const char *s);
int bl_streq(const char *a, const char *b);
int bl_startswith(const char *s, const char *prefix);
const char *bl_getenv(const char *name);
long bl_atol(const char *s);            /* decimal; a trailing k or m multiplies (lmbench's sizes) */
u64 bl_udiv64(u64 n, u64 d);            /* no libgcc: the compiler's own would pull it in */
void *memset(void *s, int c, size_t n);
void *memcpy(void *d, const void *s, size_t n);

/* time: CLOCK_MONOTONIC in nanoseconds */
u64 now_ns(void);

/* processes and files */
long bl_fork(void);
void bl_wait_all(void);
long bl_write_all(int fd, const void *buf, size_t n);
long bl_read_all(int fd, void *buf, size_t n);
void *bl_map(size_t bytes);             /* anonymous, zeroed, or 0 */
void bl_ignore_signal(int sig);         /* SIG_IGN: a server's children reap themselves */
int bl_inet_addr(const char *dotted, u32 *addr);   /* network order */
unsigned short bl_htons(unsigned short v);

/* lmbench's repetition: how long one timed run should last, and how many runs */
u64 bl_enough_ns(void);                 /* BL_ENOUGH_US, else lmbench's ENOUGH, else 500000 */
int bl_tries(void);                     /* BL_TRIES, default 11 */
void bl_sort_u64(u64 *v, int n);

#endif
