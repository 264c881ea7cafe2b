/* The timing harness and the floor of scripts/bench_project.sh (built by it with `cc -O2`).
 *
 *   bench_project floor DIR
 *       The floor of `pair ls DIR`: walk DIR recursively (skipping dot directories), and of each
 *       `.md` file read the head up to the line that closes its frontmatter; print how many files
 *       had one. The least any program could do to list a project's boards.
 *   bench_project time REPS -- CMD ARGS...
 *       Run CMD REPS times (stdout and stderr to /dev/null), each timed from just before fork to
 *       the return of wait4; print "median_ns min_ns max_ns cpu_median_ns exit". An exit other
 *       than 0 or 10 (nothing to do) is reported and fails.
 *   bench_project paired REPS -- CMD1 ARGS... -- CMD2 ARGS... [-- CMD3 ARGS...]
 *       REPS rounds, each running every CMD once in turn (interleaved, so a change in the
 *       machine's load falls on all of them alike), timed as by `time`; print one line per CMD,
 *       in order: "median_ns min_ns max_ns cpu_median_ns exit".
 *   bench_project wake-rename REPS BOARD IDLE BUSY SETTLE_MS -- WAITER ARGS...
 *       REPS times: put IDLE in place at BOARD (copy, then rename), start WAITER with its stdout
 *       on a pipe, let it settle SETTLE_MS, then copy BUSY beside BOARD and time from just before
 *       the rename(2) over BOARD to the first byte the waiter prints. Prints one line per sample
 *       (ns), then "median_ns max_ns".
 *   bench_project wake-cmd REPS SETTLE_MS RESET -- WRITER ARGS... -- WAITER ARGS...
 *       REPS times: run the shell command RESET (puts the board back), start WAITER, let it
 *       settle, start WRITER; times from the writer's start and from its exit to the first byte
 *       the waiter prints. Prints "from_start_ns from_exit_ns" per sample, then the medians and
 *       the worst of each.
 *   bench_project idle SECONDS -- CMD ARGS...
 *       Run CMD (a waiter that finds nothing to do within SECONDS) and print its wall time and
 *       its CPU time (user+sys, its waited-for children included), in ns.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void die(const char *what) {
    perror(what);
    exit(2);
}

static int cmp64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int64_t median(int64_t *v, int n) {
    qsort(v, n, sizeof *v, cmp64);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int64_t worst(int64_t *v, int n) {
    int64_t m = v[0];
    for (int i = 1; i < n; i++)
        if (v[i] > m) m = v[i];
    return m;
}

/* ---- the floor ---- */

static int head_has_frontmatter(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    static char buf[1 << 16];
    size_t len = 0;
    int found = 0;
    for (;;) {
        ssize_t r = read(fd, buf + len, sizeof buf - len - 1);
        if (r <= 0) break;
        len += (size_t)r;
        buf[len] = 0;
        if (len < 4 || memcmp(buf, "---", 3) != 0) break;
        if (strstr(buf + 3, "\n---")) {
            found = 1;
            break;
        }
        if (len >= sizeof buf - 1) break;
    }
    close(fd);
    return found;
}

static long walk(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return 0;
    long n = 0;
    struct dirent *e;
    char path[4096];
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (e->d_type == DT_DIR) {
            n += walk(path);
        } else if (e->d_type == DT_REG) {
            size_t l = strlen(e->d_name);
            if (l > 3 && strcmp(e->d_name + l - 3, ".md") == 0) n += head_has_frontmatter(path);
        }
    }
    closedir(d);
    return n;
}

/* ---- processes ---- */

static pid_t spawn(char **argv, int out_fd) {
    pid_t pid = fork();
    if (pid < 0) die("fork");
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0);
        dup2(out_fd >= 0 ? out_fd : null, 1);
        dup2(null, 2);
        execvp(argv[0], argv);
        _exit(127);
    }
    return pid;
}

static int run_shell(const char *cmd) {
    int st = system(cmd);
    if (st != 0) {
        fprintf(stderr, "bench_project: `%s` failed (%d)\n", cmd, st);
        exit(2);
    }
    return 0;
}

static void copy_file(const char *from, const char *to) {
    int in = open(from, O_RDONLY);
    if (in < 0) die(from);
    int out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0) die(to);
    char buf[1 << 16];
    ssize_t r;
    while ((r = read(in, buf, sizeof buf)) > 0)
        if (write(out, buf, (size_t)r) != r) die("write");
    fsync(out);
    close(in);
    close(out);
}

/* Put `from`'s bytes at `board` by a rename, as every writer does; returns the time just before
 * the rename. */
static int64_t replace(const char *from, const char *board) {
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.bench-tmp", board);
    copy_file(from, tmp);
    int64_t t = now_ns();
    if (rename(tmp, board) != 0) die("rename");
    return t;
}

/* Block until the waiter's pipe has a byte (or closes); the time it arrived. */
static int64_t first_byte(int fd) {
    char c;
    ssize_t r = read(fd, &c, 1);
    int64_t t = now_ns();
    if (r <= 0) {
        fprintf(stderr, "bench_project: the waiter printed nothing\n");
        exit(2);
    }
    return t;
}

static void drain_and_reap(int fd, pid_t pid) {
    char buf[4096];
    while (read(fd, buf, sizeof buf) > 0) {
    }
    close(fd);
    int st;
    waitpid(pid, &st, 0);
}

/* Run CMD once (stdout and stderr to /dev/null), timed from just before fork to the return of
 * wait4; its wall and CPU time (user+sys, its waited-for children included), and its exit. An
 * exit other than 0 or 10 (nothing to do) fails the run. */
static int timed_run(char **cmd, int64_t *wall, int64_t *cpu) {
    int64_t t0 = now_ns();
    pid_t pid = spawn(cmd, -1);
    int st;
    struct rusage ru;
    if (wait4(pid, &st, 0, &ru) < 0) die("wait4");
    *wall = now_ns() - t0;
    *cpu = ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000 +
           ((int64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
    int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    if (code != 0 && code != 10) {
        fprintf(stderr, "bench_project: %s exited %d\n", cmd[0], code);
        exit(2);
    }
    return code;
}

/* "median_ns min_ns max_ns cpu_median_ns exit" of REPS timed runs. */
static void print_times(int64_t *wall, int64_t *cpu, int reps, int code) {
    int64_t lo = wall[0];
    for (int i = 1; i < reps; i++)
        if (wall[i] < lo) lo = wall[i];
    int64_t hi = worst(wall, reps);
    printf("%lld %lld %lld %lld %d\n", (long long)median(wall, reps), (long long)lo,
           (long long)hi, (long long)median(cpu, reps), code);
}

static char **after_dashes(int argc, char **argv, int from) {
    for (int i = from; i < argc; i++)
        if (strcmp(argv[i], "--") == 0) return argv + i + 1;
    fprintf(stderr, "bench_project: missing -- before the command\n");
    exit(2);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: see the head of scripts/bench_project.c\n");
        return 2;
    }
    const char *mode = argv[1];
    if (strcmp(mode, "floor") == 0) {
        printf("%ld\n", walk(argv[2]));
        return 0;
    }
    if (strcmp(mode, "time") == 0) {
        int reps = atoi(argv[2]);
        char **cmd = after_dashes(argc, argv, 3);
        int64_t *wall = calloc(reps, sizeof *wall), *cpu = calloc(reps, sizeof *cpu);
        int code = 0;
        for (int i = 0; i < reps; i++) code = timed_run(cmd, &wall[i], &cpu[i]);
        print_times(wall, cpu, reps, code);
        return 0;
    }
    if (strcmp(mode, "paired") == 0) {
        int reps = atoi(argv[2]);
        /* The commands: each starts after a "--", which becomes its predecessor's end. */
        char **cmds[8];
        int n = 0;
        for (int i = 3; i < argc && n < 8; i++) {
            if (strcmp(argv[i], "--") == 0) {
                argv[i] = NULL;
                cmds[n++] = argv + i + 1;
            }
        }
        if (n == 0) return 2;
        int64_t *wall = calloc((size_t)reps * n, sizeof *wall);
        int64_t *cpu = calloc((size_t)reps * n, sizeof *cpu);
        int code[8] = {0};
        for (int i = 0; i < reps; i++)
            for (int c = 0; c < n; c++)
                code[c] = timed_run(cmds[c], &wall[c * reps + i], &cpu[c * reps + i]);
        for (int c = 0; c < n; c++) print_times(wall + c * reps, cpu + c * reps, reps, code[c]);
        return 0;
    }
    if (strcmp(mode, "wake-rename") == 0) {
        if (argc < 8) return 2;
        int reps = atoi(argv[2]);
        const char *board = argv[3], *idle = argv[4], *busy = argv[5];
        int settle = atoi(argv[6]);
        char **cmd = after_dashes(argc, argv, 7);
        int64_t *lat = calloc(reps, sizeof *lat);
        for (int i = 0; i < reps; i++) {
            replace(idle, board);
            int p[2];
            if (pipe2(p, O_CLOEXEC) != 0) die("pipe");
            pid_t pid = spawn(cmd, p[1]);
            close(p[1]);
            usleep((useconds_t)settle * 1000);
            struct pollfd pf = {p[0], POLLIN, 0};
            if (poll(&pf, 1, 0) > 0) {
                fprintf(stderr, "bench_project: the waiter did not wait (it had work already)\n");
                return 2;
            }
            int64_t t0 = replace(busy, board);
            lat[i] = first_byte(p[0]) - t0;
            printf("%lld\n", (long long)lat[i]);
            drain_and_reap(p[0], pid);
        }
        replace(idle, board);
        printf("%lld %lld\n", (long long)median(lat, reps), (long long)worst(lat, reps));
        return 0;
    }
    if (strcmp(mode, "wake-cmd") == 0) {
        if (argc < 6) return 2;
        int reps = atoi(argv[2]);
        int settle = atoi(argv[3]);
        const char *reset = argv[4];
        char **writer = after_dashes(argc, argv, 5);
        char **waiter = NULL;
        for (char **w = writer; *w; w++)
            if (strcmp(*w, "--") == 0) {
                *w = NULL;
                waiter = w + 1;
                break;
            }
        if (!waiter) return 2;
        int64_t *from_start = calloc(reps, sizeof(int64_t)), *from_exit = calloc(reps, sizeof(int64_t));
        for (int i = 0; i < reps; i++) {
            run_shell(reset);
            int p[2];
            if (pipe2(p, O_CLOEXEC) != 0) die("pipe");
            pid_t wpid = spawn(waiter, p[1]);
            close(p[1]);
            usleep((useconds_t)settle * 1000);
            struct pollfd early = {p[0], POLLIN, 0};
            if (poll(&early, 1, 0) > 0) {
                fprintf(stderr, "bench_project: the waiter did not wait (it had work already)\n");
                return 2;
            }
            int64_t t0 = now_ns();
            pid_t pid = spawn(writer, -1);
            int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
            if (pidfd < 0) die("pidfd_open");
            int64_t printed = 0, exited = 0;
            while (!printed || !exited) {
                struct pollfd pf[2] = {{p[0], POLLIN, 0}, {pidfd, POLLIN, 0}};
                if (poll(pf, 2, -1) < 0 && errno != EINTR) die("poll");
                int64_t t = now_ns();
                if (!printed && pf[0].revents) printed = t, pf[0].fd = -1;
                if (!exited && pf[1].revents) {
                    exited = t;
                    int st;
                    waitpid(pid, &st, 0);
                    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
                        fprintf(stderr, "bench_project: the writer %s failed\n", writer[0]);
                        return 2;
                    }
                }
                if (printed && !exited) {
                    /* wait for the writer only */
                    struct pollfd w = {pidfd, POLLIN, 0};
                    poll(&w, 1, -1);
                    exited = now_ns();
                    int st;
                    waitpid(pid, &st, 0);
                }
            }
            close(pidfd);
            from_start[i] = printed - t0;
            from_exit[i] = printed - exited;
            printf("%lld %lld\n", (long long)from_start[i], (long long)from_exit[i]);
            drain_and_reap(p[0], wpid);
        }
        int64_t ws = worst(from_start, reps), we = worst(from_exit, reps);
        printf("%lld %lld %lld %lld\n", (long long)median(from_start, reps), (long long)ws,
               (long long)median(from_exit, reps), (long long)we);
        return 0;
    }
    if (strcmp(mode, "idle") == 0) {
        char **cmd = after_dashes(argc, argv, 3);
        int64_t t0 = now_ns();
        pid_t pid = spawn(cmd, -1);
        int st;
        struct rusage ru;
        if (wait4(pid, &st, 0, &ru) < 0) die("wait4");
        int64_t wall = now_ns() - t0;
        int64_t cpu = ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000 +
                      ((int64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
        printf("%lld %lld\n", (long long)wall, (long long)cpu);
        return 0;
    }
    fprintf(stderr, "bench_project: unknown mode %s\n", mode);
    return 2;
}
