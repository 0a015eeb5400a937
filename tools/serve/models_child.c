// models_child.c - router mode's processes: a free loopback port, starting a child mint-serve,
// and asking it whether it is up. A child is tied to the thread that started it
// (PR_SET_PDEATHSIG): the registry starts each child from the thread that watches it for its
// whole life, so a router that dies any way at all (even SIGKILL) leaves no child behind.
#include "models.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

int child_free_port(void) {
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0) return 0;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
    inet_pton(AF_INET, MODELS_CHILD_HOST, &a.sin_addr);
    socklen_t len = sizeof a;
    int port = 0;
    if (bind(s, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(s, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    close(s);
    return port;
}

pid_t child_spawn(char *const *argv, char *err, size_t errlen) {
    // A pipe with close-on-exec tells the parent whether exec worked: it reads EOF on success,
    // the child's errno otherwise.
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
        snprintf(err, errlen, "cannot start a child: %s", strerror(errno));
        return -1;
    }
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "cannot start a child: %s", strerror(errno));
        close(p[0]), close(p[1]);
        return -1;
    }
    if (pid == 0) {
        close(p[0]);
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent) _exit(127); // the router died before the line above
        // The router blocks SIGINT and SIGTERM to take them with sigwait: unblock them, the
        // child takes its own.
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGPIPE, SIG_DFL);
        // Nothing of the router's may stay open in the child: its listening socket would keep
        // the router's port taken for as long as the child lives.
        const long max_fd = sysconf(_SC_OPEN_MAX);
        for (int fd = 3; fd < (max_fd > 0 && max_fd < 65536 ? max_fd : 65536); fd++)
            if (fd != p[1]) close(fd);
        execv(argv[0], argv);
        const int e = errno;
        (void)!write(p[1], &e, sizeof e);
        _exit(127);
    }
    close(p[1]);
    int e = 0;
    ssize_t n;
    while ((n = read(p[0], &e, sizeof e)) < 0 && errno == EINTR) {}
    close(p[0]);
    if (n > 0) {
        snprintf(err, errlen, "cannot run %s: %s", argv[0], strerror(e));
        return -1;
    }
    return pid;
}

int child_connect(int port, double seconds) {
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0) return -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, MODELS_CHILD_HOST, &a.sin_addr);
    struct timeval tv = {(time_t)seconds, (suseconds_t)((seconds - (double)(time_t)seconds) * 1e6)};
    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (connect(s, (struct sockaddr *)&a, sizeof a) != 0) {
        close(s);
        return -1;
    }
    return s;
}

int child_health(int port) {
    int s = child_connect(port, 2);
    if (s < 0) return 0;
    static const char req[] = "GET /health HTTP/1.0\r\nHost: " MODELS_CHILD_HOST "\r\n\r\n";
    char buf[64] = "";
    int status = 0;
    if (send(s, req, sizeof req - 1, MSG_NOSIGNAL) == (ssize_t)(sizeof req - 1)) {
        size_t got = 0;
        ssize_t n;
        while (got < sizeof buf - 1 && (n = recv(s, buf + got, sizeof buf - 1 - got, 0)) > 0)
            got += (size_t)n;
        buf[got] = '\0';
        if (!strncmp(buf, "HTTP/1.", 7) && strlen(buf) > 12) status = atoi(buf + 9);
    }
    close(s);
    return status;
}
