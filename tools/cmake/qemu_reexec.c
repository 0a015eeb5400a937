// qemu_reexec.c - lets an aarch64 program running under qemu-user exec another aarch64 program
// when the host has no binfmt_misc handler for aarch64 (a container, a VM without it).
//
// Criterion runs every test in a fresh process: BoxFort forks and the child execs the test binary
// again (execl(readlink("/proc/self/exe"), ...)). Under qemu-user that execve goes to the host
// kernel, which cannot run an aarch64 ELF unless binfmt_misc sends it to qemu; without that the
// child dies and Criterion reports "Could not spawn test instance: Protocol error". This library,
// preloaded into the emulated program (qemu's QEMU_SET_ENV=LD_PRELOAD=...), turns an exec of an
// aarch64 ELF into an exec of qemu itself (the path in MINT_QEMU) with the program as argument.
// The process keeps its pid, as BoxFort requires. The new qemu reads the same environment
// (QEMU_LD_PREFIX, QEMU_CPU, QEMU_SET_ENV), so it uses the same sysroot and CPU model and preloads
// this library again; LD_PRELOAD itself is dropped from the environment handed to the host
// loader, which would otherwise complain that it cannot preload an aarch64 library into qemu.
//
// Built for aarch64 by tools/cmake/aarch64-linux-gnu.cmake; only ever loaded in qemu runs.
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

extern char **environ;

// Whether path is an ELF file for aarch64 (e_machine 183 at offset 18, little-endian).
static int is_aarch64_elf(const char *path) {
    unsigned char h[20];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, h, sizeof h);
    close(fd);
    return n == (ssize_t)sizeof h && memcmp(h, "\177ELF", 4) == 0 && h[4] == 2 &&
           (h[18] | h[19] << 8) == 183;
}

static int raw_execve(const char *path, char *const argv[], char *const envp[]) {
    return (int)syscall(SYS_execve, path, argv, envp);
}

int execve(const char *path, char *const argv[], char *const envp[]) {
    const char *qemu = getenv("MINT_QEMU");
    if (!qemu || !*qemu || !is_aarch64_elf(path)) return raw_execve(path, argv, envp);
    size_t argc = 0, envc = 0;
    while (argv[argc]) argc++;
    while (envp[envc]) envc++;
    // qemu -0 ARGV0 PATH ARGV[1..]: qemu's own options end at the program path.
    char **qargv = malloc((argc + 4) * sizeof *qargv), **qenvp = malloc((envc + 1) * sizeof *qenvp);
    if (!qargv || !qenvp) {
        free(qargv);
        free(qenvp);
        errno = ENOMEM;
        return -1;
    }
    size_t k = 0;
    qargv[k++] = (char *)qemu;
    qargv[k++] = "-0";
    qargv[k++] = (char *)(argc ? argv[0] : path);
    qargv[k++] = (char *)path;
    for (size_t i = 1; i < argc; i++) qargv[k++] = argv[i];
    qargv[k] = NULL;
    k = 0;
    for (size_t i = 0; i < envc; i++)
        if (strncmp(envp[i], "LD_PRELOAD=", 11) != 0) qenvp[k++] = envp[i];
    qenvp[k] = NULL;
    int rc = raw_execve(qemu, qargv, qenvp);
    int err = errno;
    free(qargv);
    free(qenvp);
    errno = err;
    return rc;
}

int execv(const char *path, char *const argv[]) {
    return execve(path, argv, environ);
}

// glibc's execl calls its internal execve directly, so it is replaced too (BoxFort uses it).
int execl(const char *path, const char *arg, ...) {
    va_list ap;
    size_t argc = 1;
    va_start(ap, arg);
    while (va_arg(ap, const char *)) argc++;
    va_end(ap);
    const char **argv = malloc((argc + 1) * sizeof *argv);
    if (!argv) {
        errno = ENOMEM;
        return -1;
    }
    argv[0] = arg;
    va_start(ap, arg);
    for (size_t i = 1; i <= argc; i++) argv[i] = va_arg(ap, const char *);
    va_end(ap);
    int rc = execve(path, (char *const *)argv, environ);
    int err = errno;
    free(argv);
    errno = err;
    return rc;
}
