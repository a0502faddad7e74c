/*
 * A yardstick, not an init: the least a signalfd init can do, for
 * `bench/run.py --reference`, which builds it twice, against glibc and
 * against the musl that vigil's x86_64 and aarch64 builds link, and measures
 * both beside the real inits (docs/benchmarks.md, "The reference
 * inits"). Beside vigil it shows how much of a latency is the C library's and
 * the kernel's, which no init can take out, and how much is the init's own
 * work.
 *
 * It blocks every signal, reads them from a signalfd one at a time, passes
 * each to the child and, on SIGCHLD, reaps until the child is gone and exits
 * with its status. No options, no report, no hooks, no drain: the targets
 * never compare vigil with it.
 *
 * Built with -DSTART_CPU_US=N (`ref-musl-warm`), it first keeps the CPU busy
 * for N microseconds, as glibc's own start does on some CPUs. CPU burned
 * before the fork makes a fresh init's first forwarded signal faster with no
 * change to its signal path: the init goes to sleep after its child's
 * start-up instead of before it, and the scheduler then lets its wake-up
 * preempt the signal's sender (docs/benchmarks.md, "The reference
 * inits"). The pair ref-musl / ref-musl-warm shows how much of a first
 * SIGTERM's gap that is in each run.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef START_CPU_US
#include <time.h>

static void keep_busy(long us) {
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do clock_gettime(CLOCK_MONOTONIC, &b);
    while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}
#endif

int main(int argc, char **argv) {
    int first = argc > 1 && strcmp(argv[1], "--") == 0 ? 2 : 1;
    if (first >= argc) return 2;
#ifdef START_CPU_US
    keep_busy(START_CPU_US);
#endif
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, NULL);
    int fd = signalfd(-1, &all, SFD_CLOEXEC);
    if (fd < 0) return 1;
    pid_t child = fork();
    if (child < 0) return 1;
    if (child == 0) {
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        execvp(argv[first], argv + first);
        _exit(127);
    }
    for (;;) {
        struct signalfd_siginfo si;
        if (read(fd, &si, sizeof si) != sizeof si) continue;
        if (si.ssi_signo != SIGCHLD) {
            kill(child, (int)si.ssi_signo);
            continue;
        }
        int status;
        pid_t pid;
        while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
            if (pid == child) _exit(WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status));
    }
}
