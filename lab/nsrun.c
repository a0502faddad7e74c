/*
 * nsrun: starts a command the way a container runtime starts a container's
 * first process, for the lab's guest script (lab/guest.sh). busybox's
 * unshare cannot make a cgroup namespace or join a cgroup first, and the
 * lab needs both to show vigil a cgroup as a container sees it.
 *
 *   nsrun [-p] [-m] [-c] [-g CGROUP_DIR] [-w PIDFILE] -- COMMAND [ARG...]
 *
 *   -p  new PID namespace: nsrun forks, COMMAND is its PID 1, and nsrun
 *       waits outside it, as a runtime's shim does
 *   -m  new mount namespace, every mount in it private
 *   -c  new cgroup namespace (after -g: that cgroup becomes its root)
 *   -g  COMMAND joins this cgroup first; with -p only COMMAND does, so
 *       nsrun itself survives an OOM kill of the whole group and can say so
 *   -w  write COMMAND's pid, as seen from here, to PIDFILE
 *
 * Exits with COMMAND's status, or 128+N when signal N killed it; in that
 * case it also says so on stderr, so that a test can tell "vigil was
 * killed" from "vigil exited with 128+N".
 *
 * Built by lab/run.py with each architecture's cross compiler, statically.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

static void die(const char *what)
{
    fprintf(stderr, "nsrun: %s: %s\n", what, strerror(errno));
    exit(125);
}

static void write_text(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || write(fd, text, strlen(text)) < 0 || close(fd) < 0)
        die(path);
}

/* What the started process does for itself: join the cgroup, then the
 * namespaces that must be made from inside it, then exec. */
static void become(char **argv, const char *cgroup, int flags)
{
    if (cgroup) {
        char procs[4096];
        snprintf(procs, sizeof procs, "%s/cgroup.procs", cgroup);
        write_text(procs, "0\n");
    }
    if (flags && unshare(flags) < 0)
        die("unshare");
    if ((flags & CLONE_NEWNS) && mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        die("mount --make-rprivate /");
    execvp(argv[0], argv);
    die(argv[0]);
}

int main(int argc, char **argv)
{
    int pidns = 0, flags = 0, opt;
    const char *cgroup = NULL, *pidfile = NULL;
    while ((opt = getopt(argc, argv, "+pmcg:w:")) != -1) {
        switch (opt) {
        case 'p': pidns = 1; break;
        case 'm': flags |= CLONE_NEWNS; break;
        case 'c': flags |= CLONE_NEWCGROUP; break;
        case 'g': cgroup = optarg; break;
        case 'w': pidfile = optarg; break;
        default:
            fprintf(stderr, "usage: nsrun [-p] [-m] [-c] [-g CGROUP_DIR] [-w PIDFILE] -- COMMAND [ARG...]\n");
            return 125;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "nsrun: no command\n");
        return 125;
    }
    char **command = argv + optind;
    if (!pidns) {
        if (pidfile) {
            char text[32];
            snprintf(text, sizeof text, "%d\n", (int)getpid());
            write_text(pidfile, text);
        }
        become(command, cgroup, flags);
    }
    if (unshare(CLONE_NEWPID) < 0)
        die("unshare(CLONE_NEWPID)");
    pid_t child = fork();
    if (child < 0)
        die("fork");
    if (child == 0)
        become(command, cgroup, flags);
    if (pidfile) {
        char text[32];
        snprintf(text, sizeof text, "%d\n", (int)child);
        write_text(pidfile, text);
    }
    int status;
    while (waitpid(child, &status, 0) < 0) {
        if (errno != EINTR)
            die("waitpid");
    }
    if (WIFSIGNALED(status)) {
        fprintf(stderr, "nsrun: %s was killed by signal %d\n", command[0], WTERMSIG(status));
        return 128 + WTERMSIG(status);
    }
    return WEXITSTATUS(status);
}
