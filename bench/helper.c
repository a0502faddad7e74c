/*
 * vigil benchmark helper (compiled by bench/run.py with the system C compiler).
 *
 * One binary, several roles (argv[1]):
 *
 *   idle                 inside the namespace: print "R", then pause() forever.
 *   sigrecv              inside: block SIGUSR1 and the realtime signal 40, print "R",
 *                        then for every signal that arrives write "SIG SEC.NSEC" with
 *                        the CLOCK_MONOTONIC time it was taken (sigwaitinfo).
 *   send PID FD ...      outside: send signals to PID (the init), read the arrival
 *                        records from FD, print one JSON object with the latencies.
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
__attribute__((noreturn)) static int cmd_sigrecv(void) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIG_B2B);
    if (sigprocmask(SIG_BLOCK, &set, NULL) < 0) die("sigprocmask");
    ready();
    for (;;) {
        siginfo_t si;
        int sig = sigwaitinfo(&set, &si);
        int64_t t = now_ns();
        if (sig < 0) {
            if (errno == EINTR) continue;
            die("sigwaitinfo");
        }
        char buf[64];
        int len = snprintf(buf, sizeof buf, "%d %lld\n", sig, (long long)t);
        write_all(1, buf, (size_t)len);
    }
}

/* ---------------------------------------------------------------- send */
/* Arrival records come from a pipe as text lines "SIG NS\n". */
static char rbuf[1 << 16];
static size_t rlen;

/* Wait up to timeout_ns for one record; returns 1 and fills sig/t, 0 on timeout. */
static int next_arrival(int fd, int64_t deadline, int *sig, int64_t *t) {
    for (;;) {
        char *nl = memchr(rbuf, '\n', rlen);
        if (nl) {
            *nl = 0;
            long long ts = 0;
            if (sscanf(rbuf, "%d %lld", sig, &ts) != 2) *sig = -1;
            *t = ts;
            size_t used = (size_t)(nl - rbuf) + 1;
            memmove(rbuf, nl + 1, rlen - used);
            rlen -= used;
            return 1;
        }
        int64_t left = deadline - now_ns();
        if (left <= 0) return 0;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int ms = (int)((left + 999999) / 1000000);
        int r = poll(&p, 1, ms);
        if (r < 0) {
            if (errno == EINTR) continue;
            die("poll");
        }
        if (r == 0) return 0;
        ssize_t n = read(fd, rbuf + rlen, sizeof rbuf - rlen);
        if (n < 0) {
            if (errno == EINTR) continue;
            die("read");
        }
        if (n == 0) return 0; /* writer gone */
        rlen += (size_t)n;
    }
}

static void sleep_ns(int64_t ns) {
    struct timespec ts = {.tv_sec = ns / 1000000000LL, .tv_nsec = ns % 1000000000LL};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
    }
}

/* send PID FD N_IDLE GAP_US N_BURSTS BURST_LEN */
static int cmd_send(int argc, char **argv) {
    if (argc < 8) {
        fprintf(stderr, "usage: send PID FD N_IDLE GAP_US N_BURSTS BURST_LEN\n");
        return 2;
    }
    pid_t pid = (pid_t)atoi(argv[2]);
    int fd = atoi(argv[3]);
    int n_idle = atoi(argv[4]);
    int64_t gap = (int64_t)atoll(argv[5]) * 1000;
    int n_bursts = atoi(argv[6]);
    int blen = atoi(argv[7]);
    const int64_t timeout = 1000000000LL; /* a signal later than 1 s counts as lost */

    int64_t *idle_lat = calloc((size_t)n_idle + 1, sizeof *idle_lat);
    int64_t *b2b_lat = calloc((size_t)(n_bursts * blen) + 1, sizeof *b2b_lat);
    int64_t *sent = calloc((size_t)blen + 1, sizeof *sent);
    if (!idle_lat || !b2b_lat || !sent) die("calloc");
    int n_idle_ok = 0, n_b2b_ok = 0;
    long lost_idle = 0, dup_idle = 0, lost_b2b = 0, dup_b2b = 0, stray = 0;
    int sig;
    int64_t t;

    /* From idle: one SIGUSR1, wait for it, let everything go back to sleep. */
    for (int i = 0; i < n_idle; i++) {
        sleep_ns(gap);
        int64_t ts = now_ns();
        if (kill(pid, SIGUSR1) < 0) die("kill");
        int got = 0;
        int64_t deadline = ts + timeout;
        while (next_arrival(fd, deadline, &sig, &t)) {
            if (sig != SIGUSR1) {
                stray++;
                continue;
            }
            if (!got) {
                idle_lat[n_idle_ok++] = t - ts;
                got = 1;
                /* keep listening for the gap: a second copy is a duplicate */
                deadline = now_ns() + gap;
            } else {
                dup_idle++;
            }
        }
        if (!got) lost_idle++;
    }

    /* Back to back: BURST_LEN realtime signals in a row, then collect. */
    for (int b = 0; b < n_bursts; b++) {
        sleep_ns(gap);
        for (int j = 0; j < blen; j++) {
            sent[j] = now_ns();
            if (kill(pid, SIG_B2B) < 0) die("kill");
        }
        int got = 0;
        int64_t deadline = sent[blen - 1] + timeout;
        while (next_arrival(fd, deadline, &sig, &t)) {
            if (sig != SIG_B2B) {
                stray++;
                continue;
            }
            if (got < blen) {
                b2b_lat[n_b2b_ok++] = t - sent[got];
                got++;
                if (got == blen) deadline = now_ns() + gap; /* watch for extras */
            } else {
                dup_b2b++;
            }
        }
        if (got < blen) lost_b2b += blen - got;
    }

    printf("{\"idle_ns\":[");
    for (int i = 0; i < n_idle_ok; i++) printf("%s%lld", i ? "," : "", (long long)idle_lat[i]);
    printf("],\"b2b_ns\":[");
    for (int i = 0; i < n_b2b_ok; i++) printf("%s%lld", i ? "," : "", (long long)b2b_lat[i]);
    printf("],\"idle_sent\":%d,\"b2b_sent\":%d,\"lost_idle\":%ld,\"dup_idle\":%ld,"
           "\"lost_b2b\":%ld,\"dup_b2b\":%ld,\"stray\":%ld}\n",
           n_idle, n_bursts * blen, lost_idle, dup_idle, lost_b2b, dup_b2b, stray);
    return 0;
}

/* --------------------------------------------------------------- burst */
/*
 * Fork an intermediate process I; I forks N children that exit at once, waits
 * until every one of them is a zombie (without reaping), notes the time and
 * exits: the kernel hands all N zombies to PID 1 in one go. We then poll
 * kill(pid, 0) (which succeeds on a zombie and fails with ESRCH once it is
 * reaped) until all are gone. Inits reap in fork order (waitpid(-1) walks the
 * children list), so we follow a cursor and then verify the whole set.
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
    }
    int64_t t_last = now_ns();
    long left = 0;
    for (long i = lo; i < k; i++)
        if (!(kill(pids[i], 0) < 0 && errno == ESRCH)) left++;
    printf("{\"n\":%ld,\"fork_ns\":%lld,\"reap_ns\":%lld,\"left\":%ld}\n", k, (long long)fork_ns,
           (long long)(t_last - handed), left);
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
    printf("{\"n\":%ld,\"stream_ns\":%lld,\"drain_ns\":%lld,\"peak\":%ld,\"mean\":%.3f,"
           "\"samples\":%ld,\"left\":%ld}\n",
           n, (long long)(end - start), (long long)(drained - end), peak,
           samples ? sum / (double)samples : 0.0, samples, left);
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: helper idle|sigrecv|send|burst|stream ...\n");
        return 2;
    }
    if (!strcmp(argv[1], "idle")) return cmd_idle();
    if (!strcmp(argv[1], "sigrecv")) return cmd_sigrecv();
    if (!strcmp(argv[1], "send")) return cmd_send(argc, argv);
    if (!strcmp(argv[1], "burst")) return cmd_burst(argc, argv);
    if (!strcmp(argv[1], "stream")) return cmd_stream(argc, argv);
    fprintf(stderr, "bench-helper: unknown role %s\n", argv[1]);
    return 2;
}
