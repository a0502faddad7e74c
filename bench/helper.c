/*
 * vigil benchmark helper (compiled by bench/run.py with the system C compiler).
 *
 * One binary, several roles (argv[1]):
 *
 *   idle                 inside the namespace: print "R", then pause() forever.
 *   exit, exitnow        inside: exit 0 at once (a baseline with the same argv shape;
 *                        `exitnow` is as long as `sigrecv`, so that a baseline's
 *                        command line costs an init exactly what sigrecv's does).
 *   sigrecv              inside: block SIGUSR1 and the realtime signal 40, print "R",
 *                        then for every signal that arrives write "SIG SEC.NSEC" with
 *                        the CLOCK_MONOTONIC time it was taken (sigwaitinfo).
 *   send ... PID FD ...  outside: send signals to each init PID, interleaved, read
 *                        the arrival records from FD, print JSON with the latencies.
 *   termrecv             inside: block SIGTERM, print "R", wait for one SIGTERM, write
 *                        "15 SEC.NSEC" (the time it was taken), then die of it.
 *   first DELAY_US PID FD
 *                        outside: wait DELAY_US, send one SIGTERM to the init PID,
 *                        wait for the init to exit (pidfd), read the arrival record
 *                        from FD, print JSON with both latencies.
 *   burst N              inside: hand N zombies to PID 1 at once, time until all are
 *                        reaped, print JSON.
 *   stream N             inside: let N orphans stream in (double fork), sample the
 *                        number of unreaped children of PID 1 every millisecond,
 *                        print JSON.
 *
 * Everything is plain POSIX/Linux; no allocation on hot paths.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SIG_B2B 40 /* a realtime signal: the kernel queues every instance */

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* CPU time (user + system) PID 1 has used so far: robust to a busy machine,
 * unlike wall-clock time. */
static int64_t init_cpu_ns(void) {
    clockid_t c;
    struct timespec ts;
    if (clock_getcpuclockid(1, &c) != 0 || clock_gettime(c, &ts) != 0) return -1;
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void die(const char *what) {
    fprintf(stderr, "bench-helper: %s: %s\n", what, strerror(errno));
    exit(3);
}

static void write_all(int fd, const char *buf, size_t len) {
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0) {
            if (errno == EINTR) continue;
            die("write");
        }
        buf += n;
        len -= (size_t)n;
    }
}

static void ready(void) { write_all(1, "R\n", 2); }

/* ---------------------------------------------------------------- idle */
__attribute__((noreturn)) static int cmd_idle(void) {
    ready();
    for (;;) pause();
}

/* ------------------------------------------------------------- sigrecv */
/* Waits for the next signal of `set` (blocked by the caller) and writes
 * "SIG NS\n" to stdout with the time it arrived. Returns the signal. */
static int await_and_stamp(const sigset_t *set) {
    for (;;) {
        int sig = sigwaitinfo(set, NULL);
        int64_t t = now_ns();
        if (sig < 0) {
            if (errno == EINTR) continue;
            die("sigwaitinfo");
        }
        char buf[64];
        int len = snprintf(buf, sizeof buf, "%d %lld\n", sig, (long long)t);
        write_all(1, buf, (size_t)len);
        return sig;
    }
}

__attribute__((noreturn)) static int cmd_sigrecv(void) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIG_B2B);
    if (sigprocmask(SIG_BLOCK, &set, NULL) < 0) die("sigprocmask");
    ready();
    for (;;) await_and_stamp(&set);
}

/* ---------------------------------------------------------------- send */
/*
 * send N_IDLE GAP_US N_BURSTS BURST_LEN PID FD [PID FD ...]
 *
 * Several inits are measured side by side, interleaved signal by signal
 * (A B C A B C ...), so that a disturbance of the machine hits them alike.
 * Each PID is an init (host pid); FD is the read end of the pipe that its
 * sigrecv child writes arrival records to.
 */
struct target {
    pid_t pid;
    int fd;
    char buf[1 << 16];
    size_t len;
    int64_t *idle, *b2b;
    int n_idle_ok, n_b2b_ok;
    long lost_idle, dup_idle, lost_b2b, dup_b2b, stray;
};

/* Wait until deadline for one record; returns 1 and fills sig/t, 0 on timeout. */
static int next_arrival(struct target *tg, int64_t deadline, int *sig, int64_t *t) {
    for (;;) {
        char *nl = memchr(tg->buf, '\n', tg->len);
        if (nl) {
            *nl = 0;
            long long ts = 0;
            if (sscanf(tg->buf, "%d %lld", sig, &ts) != 2) *sig = -1;
            *t = ts;
            size_t used = (size_t)(nl - tg->buf) + 1;
            memmove(tg->buf, nl + 1, tg->len - used);
            tg->len -= used;
            return 1;
        }
        int64_t left = deadline - now_ns();
        if (left <= 0) return 0;
        struct pollfd p = {.fd = tg->fd, .events = POLLIN};
        struct timespec to = {.tv_sec = left / 1000000000LL, .tv_nsec = left % 1000000000LL};
        int r = ppoll(&p, 1, &to, NULL);
        if (r < 0) {
            if (errno == EINTR) continue;
            die("poll");
        }
        if (r == 0) return 0;
        ssize_t n = read(tg->fd, tg->buf + tg->len, sizeof tg->buf - tg->len);
        if (n < 0) {
            if (errno == EINTR) continue;
            die("read");
        }
        if (n == 0) return 0; /* writer gone */
        tg->len += (size_t)n;
    }
}

static void sleep_ns(int64_t ns) {
    struct timespec ts = {.tv_sec = ns / 1000000000LL, .tv_nsec = ns % 1000000000LL};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
    }
}

static int cmd_send(int argc, char **argv) {
    if (argc < 8 || (argc - 6) % 2) {
        fprintf(stderr, "usage: send N_IDLE GAP_US N_BURSTS BURST_LEN PID FD [PID FD ...]\n");
        return 2;
    }
    int n_idle = atoi(argv[2]);
    int64_t gap = (int64_t)atoll(argv[3]) * 1000;
    int n_bursts = atoi(argv[4]);
    int blen = atoi(argv[5]);
    int nt = (argc - 6) / 2;
    const int64_t timeout = 1000000000LL; /* a signal later than 1 s counts as lost */
    struct target *tg = calloc((size_t)nt, sizeof *tg);
    int64_t *sent = calloc((size_t)blen + 1, sizeof *sent);
    if (!tg || !sent) die("calloc");
    for (int k = 0; k < nt; k++) {
        tg[k].pid = (pid_t)atoi(argv[6 + 2 * k]);
        tg[k].fd = atoi(argv[7 + 2 * k]);
        tg[k].idle = calloc((size_t)n_idle + 1, sizeof(int64_t));
        tg[k].b2b = calloc((size_t)(n_bursts * blen) + 1, sizeof(int64_t));
        if (!tg[k].idle || !tg[k].b2b) die("calloc");
    }
    int sig;
    int64_t t;

    /* From idle: one SIGUSR1, wait for it, then listen for GAP (a second copy
     * is a duplicate) while everything goes back to sleep. */
    sleep_ns(gap);
    for (int i = 0; i < n_idle; i++) {
        for (int k = 0; k < nt; k++) {
            struct target *g = &tg[k];
            int64_t ts = now_ns();
            if (kill(g->pid, SIGUSR1) < 0) die("kill");
            int got = 0;
            int64_t deadline = ts + timeout;
            while (next_arrival(g, deadline, &sig, &t)) {
                if (sig != SIGUSR1) {
                    g->stray++;
                    continue;
                }
                if (!got) {
                    g->idle[g->n_idle_ok++] = t - ts;
                    got = 1;
                    deadline = now_ns() + gap;
                } else {
                    g->dup_idle++;
                }
            }
            if (!got) g->lost_idle++;
        }
    }

    /* Back to back: BURST_LEN realtime signals in a row, then collect. */
    for (int b = 0; b < n_bursts; b++) {
        for (int k = 0; k < nt; k++) {
            struct target *g = &tg[k];
            for (int j = 0; j < blen; j++) {
                sent[j] = now_ns();
                if (kill(g->pid, SIG_B2B) < 0) die("kill");
            }
            int got = 0;
            int64_t deadline = sent[blen - 1] + timeout;
            while (next_arrival(g, deadline, &sig, &t)) {
                if (sig != SIG_B2B) {
                    g->stray++;
                    continue;
                }
                if (got < blen) {
                    g->b2b[g->n_b2b_ok++] = t - sent[got];
                    got++;
                    if (got == blen) deadline = now_ns() + gap; /* watch for extras */
                } else {
                    g->dup_b2b++;
                }
            }
            if (got < blen) g->lost_b2b += blen - got;
        }
    }

    printf("[");
    for (int k = 0; k < nt; k++) {
        struct target *g = &tg[k];
        printf("%s{\"pid\":%d,\"idle_ns\":[", k ? "," : "", (int)g->pid);
        for (int i = 0; i < g->n_idle_ok; i++) printf("%s%lld", i ? "," : "", (long long)g->idle[i]);
        printf("],\"b2b_ns\":[");
        for (int i = 0; i < g->n_b2b_ok; i++) printf("%s%lld", i ? "," : "", (long long)g->b2b[i]);
        printf("],\"idle_sent\":%d,\"b2b_sent\":%d,\"lost_idle\":%ld,\"dup_idle\":%ld,"
               "\"lost_b2b\":%ld,\"dup_b2b\":%ld,\"stray\":%ld}",
               n_idle, n_bursts * blen, g->lost_idle, g->dup_idle, g->lost_b2b, g->dup_b2b, g->stray);
    }
    printf("]\n");
    return 0;
}

/* ------------------------------------------------------------ termrecv */
/* The child of a "first signal" run: idle until one SIGTERM comes, note when,
 * then die of it, as a program without a handler would (the init then sees
 * "killed by SIGTERM" and exits 143). */
__attribute__((noreturn)) static int cmd_termrecv(void) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    if (sigprocmask(SIG_BLOCK, &set, NULL) < 0) die("sigprocmask");
    ready();
    await_and_stamp(&set);
    signal(SIGTERM, SIG_DFL);
    if (sigprocmask(SIG_UNBLOCK, &set, NULL) < 0) die("sigprocmask");
    raise(SIGTERM);
    _exit(3); /* not reached */
}

/* --------------------------------------------------------------- first */
/*
 * first DELAY_US PID FD [ERRFD]
 *
 * The "first signal" of a fresh init, as `docker stop` sends it: wait
 * DELAY_US (the child is ready and idle, the init asleep), send one SIGTERM
 * to the init, wait on a pidfd until the init has exited, reading the
 * child's arrival records from FD meanwhile, and after the exit until EOF
 * (everything in the namespace is gone). Prints {"fwd_ns":..., "exit_ns":..., "arrivals":..., "hang":0|1}.
 * fwd_ns is -1 when no SIGTERM arrived.
 */
static int cmd_first(int argc, char **argv) {
    if (argc != 5 && argc != 6) {
        fprintf(stderr, "usage: first DELAY_US PID FD [ERRFD]\n");
        return 2;
    }
    int64_t delay = (int64_t)atoll(argv[2]) * 1000;
    struct target tg = {.pid = (pid_t)atoi(argv[3]), .fd = atoi(argv[4])};
    int pidfd = (int)syscall(SYS_pidfd_open, tg.pid, 0);
    if (pidfd < 0) die("pidfd_open");
    /* A real-time sender, as an engine on a CPU of its own would be: the
     * init's wake-up cannot preempt it between its kill and its poll, so it
     * sees the init's exit when it happens. (A preempted sender would wait,
     * runnable, until the init, its child and unshare had all run, and
     * whether the scheduler preempts depends on how much CPU each init used
     * before, not on its stop path.) Not fatal without the privilege. */
    struct sched_param rt = {.sched_priority = 1};
    (void)sched_setscheduler(0, SCHED_FIFO, &rt);
    sleep_ns(delay);
    int64_t ts = now_ns();
    if (kill(tg.pid, SIGTERM) < 0) die("kill");
    /* FD is also the init's own stdout: read it as it fills, as a container
     * engine reads a container's output. (An init may wait at exit until
     * its output pipe is read, as vigil does; read only after the exit, it
     * would wait for a reader that never comes.) */
    /* ERRFD, when given, is the init's stderr, a pipe of its own as under a
     * container engine (which drains both): drained the same way, and
     * copied to this program's stderr at the end, for the error messages. */
    static char err[1 << 16];
    size_t err_len = 0;
    struct pollfd p[3] = {{.fd = pidfd, .events = POLLIN},
                          {.fd = tg.fd, .events = POLLIN},
                          {.fd = argc == 6 ? atoi(argv[5]) : -1, .events = POLLIN}};
    int64_t end = ts + 10000000000LL, te = 0;
    int hang = 0;
    for (;;) {
        int64_t left = end - now_ns();
        if (left <= 0) {
            hang = 1;
            break;
        }
        int r = poll(p, 3, (int)(left / 1000000) + 1);
        if (r < 0) {
            if (errno == EINTR) continue;
            die("poll");
        }
        if (p[0].revents) {
            te = now_ns();
            break;
        }
        if (p[1].revents) {
            ssize_t n = read(tg.fd, tg.buf + tg.len, sizeof tg.buf - tg.len);
            if (n < 0 && errno != EINTR) die("read");
            if (n > 0) tg.len += (size_t)n;
            if (n == 0 || tg.len == sizeof tg.buf) p[1].fd = -1; /* EOF (or full): only the pidfd now */
        }
        if (p[2].fd >= 0 && p[2].revents) {
            ssize_t n = read(p[2].fd, err + err_len, sizeof err - err_len);
            if (n < 0 && errno != EINTR) die("read");
            if (n > 0) err_len += (size_t)n;
            if (n == 0 || err_len == sizeof err) p[2].fd = -1;
        }
    }
    int sig;
    int64_t t, fwd = -1;
    long arrivals = 0, stray = 0;
    /* After the init's exit, EOF follows at once (unshare exits with it). */
    while (next_arrival(&tg, now_ns() + (hang ? 100000000LL : 1000000000LL), &sig, &t)) {
        if (sig != SIGTERM) {
            stray++;
            continue;
        }
        if (arrivals++ == 0) fwd = t - ts;
    }
    if (p[2].fd >= 0) { /* the rest of the init's stderr, after its exit */
        ssize_t n;
        while (err_len < sizeof err && (n = read(p[2].fd, err + err_len, sizeof err - err_len)) > 0)
            err_len += (size_t)n;
    }
    if (err_len) fwrite(err, 1, err_len, stderr);
    printf("{\"fwd_ns\":%lld,\"exit_ns\":%lld,\"arrivals\":%ld,\"stray\":%ld,\"hang\":%d}\n",
           (long long)fwd, (long long)(hang ? -1 : te - ts), arrivals, stray, hang);
    return 0;
}

/* --------------------------------------------------------------- burst */
/*
 * Fork an intermediate process I; I forks N children that exit at once, waits
 * until every one of them is a zombie (without reaping), notes the time and
 * exits: the kernel hands all N zombies to PID 1 in one go. We then poll
 * kill(pid, 0) (which succeeds on a zombie and fails with ESRCH once it is
 * reaped) until all are gone. Inits reap in fork order (waitpid(-1) walks the
 * children list), so we follow a cursor: each pid is confirmed gone before the
 * cursor passes it, and a pid out of order is simply waited for.
 */
static int cmd_burst(int argc, char **argv) {
    long n = argc > 2 ? atol(argv[2]) : 10000;
    double timeout_s = argc > 3 ? atof(argv[3]) : 20.0;
    size_t sz = sizeof(int64_t) * 2 + sizeof(pid_t) * (size_t)n;
    void *shm = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shm == MAP_FAILED) die("mmap");
    int64_t *t0 = shm;            /* [0] = handover time, [1] = number forked */
    pid_t *pids = (pid_t *)(t0 + 2);

    int64_t tf = now_ns();
    int64_t cpu0 = init_cpu_ns();
    pid_t inter = fork();
    if (inter < 0) die("fork");
    if (inter == 0) {
        long k = 0;
        for (; k < n; k++) {
            pid_t c = fork();
            if (c < 0) break; /* out of pids: hand over what we have */
            if (c == 0) _exit(0);
            pids[k] = c;
        }
        for (long i = 0; i < k; i++) {
            siginfo_t si;
            while (waitid(P_PID, (id_t)pids[i], &si, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
            }
        }
        t0[1] = k;
        t0[0] = now_ns();
        _exit(0);
    }
    int st;
    while (waitpid(inter, &st, 0) < 0 && errno == EINTR) {
    }
    int64_t handed = t0[0];
    long k = (long)t0[1];
    int64_t fork_ns = handed - tf;
    int64_t deadline = handed + (int64_t)(timeout_s * 1e9);

    /* Each pid is confirmed gone before the cursor moves on, so when the
     * cursor reaches the end every zombie has been reaped. */
    long lo = 0;
    while (lo < k) {
        if (kill(pids[lo], 0) < 0 && errno == ESRCH) {
            lo++;
            continue;
        }
        if (now_ns() > deadline) break;
        /* do not spin: on 2 CPUs a spinning poller may share PID 1's CPU and
         * halve its reaping rate. The pause is short next to a whole burst
         * (docs/benchmarks.md), so the end is still seen promptly. */
        sleep_ns(50000);
    }
    int64_t t_last = now_ns();
    int64_t cpu1 = init_cpu_ns();
    long left = 0;
    for (long i = lo; i < k; i++)
        if (!(kill(pids[i], 0) < 0 && errno == ESRCH)) left++;
    printf("{\"n\":%ld,\"fork_ns\":%lld,\"reap_ns\":%lld,\"left\":%ld,\"init_cpu_ns\":%lld}\n", k,
           (long long)fork_ns, (long long)(t_last - handed), left, (long long)(cpu1 - cpu0));
    fflush(stdout);
    return 0;
}

/* -------------------------------------------------------------- stream */
/* Count the children of PID 1 (live and zombie) via /proc/1/task/1/children. */
static int children_fd = -1;
static long count_children(void) {
    static char buf[1 << 20];
    if (children_fd < 0) {
        children_fd = open("/proc/1/task/1/children", O_RDONLY | O_CLOEXEC);
        if (children_fd < 0) die("open /proc/1/task/1/children");
    }
    long count = 0;
    int inword = 0;
    if (lseek(children_fd, 0, SEEK_SET) < 0) die("lseek");
    for (;;) {
        ssize_t r = read(children_fd, buf, sizeof buf);
        if (r < 0) {
            if (errno == EINTR) continue;
            die("read children");
        }
        if (r == 0) break;
        for (ssize_t i = 0; i < r; i++) {
            int sp = buf[i] == ' ' || buf[i] == '\n';
            if (!sp && !inword) count++;
            inword = !sp;
        }
    }
    return count;
}

static char stack_c[64 * 1024] __attribute__((aligned(16)));
static char stack_g[64 * 1024] __attribute__((aligned(16)));

static int orphan_exit(void *arg) {
    (void)arg;
    syscall(SYS_exit, 0);
    return 0;
}

/* Runs in C: make G, wait until G is a zombie (not reaped), then exit, so the
 * kernel hands zombie G to PID 1. */
static int orphan_parent(void *arg) {
    (void)arg;
    pid_t g = clone(orphan_exit, stack_g + sizeof stack_g, CLONE_VM | SIGCHLD, NULL);
    if (g > 0) {
        siginfo_t si;
        while (waitid(P_PID, (id_t)g, &si, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
        }
    }
    syscall(SYS_exit, 0);
    return 0;
}

static int cmd_stream(int argc, char **argv) {
    long n = argc > 2 ? atol(argv[2]) : 100000;
    double settle_s = argc > 3 ? atof(argv[3]) : 5.0;
    long base = count_children(); /* ourselves (and anything else PID 1 started) */
    int64_t cpu0 = init_cpu_ns();
    int64_t start = now_ns();
    pid_t prod = fork();
    if (prod < 0) die("fork");
    if (prod == 0) {
        /* CLONE_VM children (no page-table copy): the orphans are ordinary
         * processes to PID 1, they are just cheaper to make. */
        for (long i = 0; i < n; i++) {
            pid_t c = clone(orphan_parent, stack_c + sizeof stack_c, CLONE_VM | SIGCHLD, NULL);
            if (c < 0) {
                if (errno == EAGAIN) {
                    sleep_ns(1000000);
                    i--;
                    continue;
                }
                _exit(4);
            }
            int st;
            while (waitpid(c, &st, 0) < 0 && errno == EINTR) {
            }
        }
        _exit(0);
    }
    long peak = 0, samples = 0;
    double sum = 0;
    int64_t end = 0;
    for (;;) {
        long u = count_children() - base;
        if (u < 0) u = 0;
        if (u > peak) peak = u;
        sum += (double)u;
        samples++;
        int st;
        pid_t r = waitpid(prod, &st, WNOHANG);
        if (r == prod) {
            end = now_ns();
            break;
        }
        sleep_ns(1000000);
    }
    /* settle: give PID 1 time to reap what is left */
    int64_t deadline = end + (int64_t)(settle_s * 1e9);
    long left = 0;
    int64_t drained = end;
    for (;;) {
        left = count_children() - base;
        if (left < 0) left = 0;
        if (left > peak) peak = left;
        if (left == 0 || now_ns() > deadline) break;
        sleep_ns(1000000);
    }
    drained = now_ns();
    int64_t cpu1 = init_cpu_ns();
    printf("{\"n\":%ld,\"stream_ns\":%lld,\"drain_ns\":%lld,\"peak\":%ld,\"mean\":%.3f,"
           "\"samples\":%ld,\"left\":%ld,\"init_cpu_ns\":%lld}\n",
           n, (long long)(end - start), (long long)(drained - end), peak,
           samples ? sum / (double)samples : 0.0, samples, left, (long long)(cpu1 - cpu0));
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: helper idle|exit|exitnow|sigrecv|send|termrecv|first|burst|stream ...\n");
        return 2;
    }
    if (!strcmp(argv[1], "idle")) return cmd_idle();
    if (!strcmp(argv[1], "exit") || !strcmp(argv[1], "exitnow")) return 0;
    if (!strcmp(argv[1], "sigrecv")) return cmd_sigrecv();
    if (!strcmp(argv[1], "send")) return cmd_send(argc, argv);
    if (!strcmp(argv[1], "termrecv")) return cmd_termrecv();
    if (!strcmp(argv[1], "first")) return cmd_first(argc, argv);
    if (!strcmp(argv[1], "burst")) return cmd_burst(argc, argv);
    if (!strcmp(argv[1], "stream")) return cmd_stream(argc, argv);
    fprintf(stderr, "bench-helper: unknown role %s\n", argv[1]);
    return 2;
}
