/* error_directive.c — `#pragma omp error at(execution)` (OpenMP 5.1): a
 * warning reports and goes on, a fatal one reports and ends the program with
 * exit status 1. The report is the program's message, and programs' test
 * suites match libgomp's wording byte for byte (gcc's libgomp.c-c++-common/
 * error-1.c does), so it is checked exactly: run in a child whose stderr is a
 * pipe. The statement after a fatal error must not run.
 */
#include "check.h"
#include <sys/wait.h>

static const char *volatile tail_msg = "my message";

static void child(void) {
    const char *volatile msg = "a message";
#pragma omp error at(execution) severity(warning)
#pragma omp error at(execution) severity(warning) message(msg)
#pragma omp parallel num_threads(2)
    {
#pragma omp masked
        {
#pragma omp error at(execution) severity(fatal) message(tail_msg)
        }
    }
    fputs("after the fatal error\n", stderr);
    _exit(0);
}

int main(void) {
    check_begin("error_directive");
    int fds[2];
    if (pipe(fds) != 0) {
        perror("pipe");
        return 2;
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], 2);
        child();
    }
    close(fds[1]);
    char out[4096];
    size_t len = 0;
    ssize_t r;
    while (len < sizeof out - 1 && (r = read(fds[0], out + len, sizeof out - 1 - len)) > 0) len += (size_t)r;
    out[len] = 0;
    int st = 0;
    waitpid(pid, &st, 0);
    const char *want = "\nlibgomp: error directive encountered\n"
                       "\nlibgomp: error directive encountered: a message\n"
                       "\nlibgomp: fatal error: error directive encountered: my message\n";
    if (check_is_libomp()) {
        check_known("error: a fatal error directive ends the program with status 1",
                    WIFEXITED(st) && WEXITSTATUS(st) == 1, 1, "libomp: status %#x", st);
        check_known("error: the reports are worded as libgomp's", strcmp(out, want) == 0, 1,
                    "libomp words them its own way");
    } else {
        CHECK("error: a fatal error directive ends the program with status 1",
              WIFEXITED(st) && WEXITSTATUS(st) == 1, "child status %#x", st);
        CHECK("error: the reports are worded as libgomp's", strcmp(out, want) == 0, "stderr was \"%s\"", out);
    }
    return check_done();
}
