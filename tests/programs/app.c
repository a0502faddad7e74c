/* The docs' `/app`, for the tests that run the docs' examples
 * (tests/it/e2e/docs.rs): one static file, so that it runs in a `FROM
 * scratch` image, built there with `gcc -static`.
 *
 *   app [--listen [HOST]:PORT] [--status CODE] [--silent]
 *       an HTTP server on [HOST]:PORT (:8080): every request gets CODE
 *       (200) and an empty body;
 *       with --silent, a connection is taken and never answered. It says
 *       `app: listening on [HOST]:PORT` once it listens, and dies of
 *       SIGTERM as a program without a handler does.
 *   app --drain [ARGS...]
 *       a pre-stop hook: says `app: draining` and exits 0.
 *
 * Other arguments (`--timeout 10s`) are taken and ignored, as the docs'
 * examples give them.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const char *reason(int code) {
    switch (code) {
    case 200: return "OK";
    case 503: return "Service Unavailable";
    default: return "Status";
    }
}

static int listen_on(const char *addr) {
    const char *colon = strrchr(addr, ':');
    if (!colon) {
        fprintf(stderr, "app: --listen wants [HOST]:PORT, not %s\n", addr);
        exit(2);
    }
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(atoi(colon + 1))};
    char host[64] = "0.0.0.0";
    if (colon > addr && (size_t)(colon - addr) < sizeof host) {
        memcpy(host, addr, colon - addr);
        host[colon - addr] = 0;
    }
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
        fprintf(stderr, "app: bad host %s\n", host);
        exit(2);
    }
    int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) || listen(fd, 64)) {
        perror("app: listen");
        exit(1);
    }
    return fd;
}

int main(int argc, char **argv) {
    const char *addr = ":8080";
    int status = 200, silent = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--drain")) {
            printf("app: draining\n");
            return 0;
        } else if (!strcmp(argv[i], "--listen") && i + 1 < argc) {
            addr = argv[++i];
        } else if (!strcmp(argv[i], "--status") && i + 1 < argc) {
            status = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--silent")) {
            silent = 1;
        }
    }
    int fd = listen_on(addr);
    printf("app: listening on %s\n", addr);
    fflush(stdout);
    for (;;) {
        int c = accept(fd, NULL, NULL);
        if (c < 0 || silent)
            continue; /* a silent server keeps the connection open */
        char buf[4096];
        (void)!read(c, buf, sizeof buf);
        dprintf(c, "HTTP/1.1 %d %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", status,
                reason(status));
        close(c);
    }
}
