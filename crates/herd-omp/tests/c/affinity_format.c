/* The OpenMP 5.0 affinity format: omp_get_affinity_format (the ICV from
 * OMP_AFFINITY_FORMAT or libgomp's default; snprintf-like truncation),
 * omp_set_affinity_format, omp_capture_affinity with the fields whose value
 * the program knows (nesting level, thread number, team size, ancestor
 * thread number, process id, team number and count, host name, native
 * thread id prefix, a non-empty CPU list), the width, '.', '0' modifiers and
 * long names, truncation and the returned length; omp_display_affinity runs
 * (its stderr line is not judged).  With OMP_DISPLAY_AFFINITY=true the
 * runtime prints lines to stderr; the checks must still all pass.
 * EXPECT_FORMAT: the initial format (default: the runtime's own, libgomp's or
 * libomp's). */
#include "check.h"
#include <fcntl.h>
#include <sys/wait.h>

/* The default format and the native thread id are implementation-defined:
 * libgomp's (and herd's) and LLVM libomp's. */
#define DEFAULT_FORMAT "level %L thread %i affinity %A"
#define LIBOMP_DEFAULT_FORMAT "OMP: pid %P tid %i thread %n bound to OS proc set {%A}"

static int capture_is(const char *fmt, const char *want) {
    char buf[256];
    size_t n = omp_capture_affinity(buf, sizeof buf, fmt);
    return n == strlen(want) && strcmp(buf, want) == 0;
}

/* A format with an unknown field ends the program with a message and exit
 * status 1 (libgomp's gomp_fatal); the program's buffered output before it
 * is not lost. Returns the child's wait status. */
static int invalid_field_status(int *printed) {
    int fd[2];
    if (pipe(fd) != 0) return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        dup2(fd[1], 1);
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) dup2(devnull, 2); /* the runtime's message */
        printf("before\n");                /* buffered: stdout is a pipe */
        char a[64];
        omp_capture_affinity(a, sizeof a, "%Z");
        _exit(0);
    }
    close(fd[1]);
    char got[16] = {0};
    ssize_t n = read(fd[0], got, sizeof got - 1);
    close(fd[0]);
    *printed = n > 0 && strncmp(got, "before", 6) == 0;
    int st = 0;
    waitpid(pid, &st, 0);
    return st;
}

int main(void) {
    check_begin("affinity_format");
    int printed = 0, st = invalid_field_status(&printed);
    check_known("invalid_field.exit_status_1", WIFEXITED(st) && WEXITSTATUS(st) == 1, check_is_libomp(),
                "wait status %#x (exited %d, status %d, signal %d)", st, WIFEXITED(st),
                WIFEXITED(st) ? WEXITSTATUS(st) : -1, WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    check_known("invalid_field.output_kept", printed, check_is_libomp(), "the program's buffered line was lost");
    const char *want_fmt = getenv("EXPECT_FORMAT") ? getenv("EXPECT_FORMAT")
                           : check_is_libomp() ? LIBOMP_DEFAULT_FORMAT
                                               : DEFAULT_FORMAT;
    char buf[256];
    size_t len = omp_get_affinity_format(buf, sizeof buf);
    CHECK("get.initial", len == strlen(want_fmt) && strcmp(buf, want_fmt) == 0, "got %zu '%s', want '%s'", len,
          buf, want_fmt);
    char small[5];
    memset(small, 'x', sizeof small);
    len = omp_get_affinity_format(small, sizeof small);
    CHECK("get.truncated", len == strlen(want_fmt) && strlen(small) == 4 && strncmp(small, want_fmt, 4) == 0,
          "got %zu '%s'", len, small);
    CHECK_EQ("get.size0", (long)omp_get_affinity_format(NULL, 0), (long)strlen(want_fmt));

    /* The ICV is used for a null or empty format. */
    char a[256], b[256];
    omp_capture_affinity(a, sizeof a, NULL);
    omp_capture_affinity(b, sizeof b, want_fmt);
    CHECK("capture.null_uses_icv", strcmp(a, b) == 0, "'%s' vs '%s'", a, b);
    omp_capture_affinity(a, sizeof a, "");
    CHECK("capture.empty_uses_icv", strcmp(a, b) == 0, "'%s' vs '%s'", a, b);

    /* Fields at the initial thread. */
    char want[256];
    snprintf(want, sizeof want, "L=0 n=0 N=1 a=-1 P=%d t=0 T=1 %%", (int)getpid());
    CHECK("capture.initial_fields", capture_is("L=%L n=%n N=%N a=%a P=%P t=%t T=%T %%", want), "want '%s'", want);
    snprintf(want, sizeof want, "0,0,1,-1,%d,0,1", (int)getpid());
    CHECK("capture.long_names",
          capture_is("%{nesting_level},%{thread_num},%{num_threads},%{ancestor_tnum},%{process_id},%{team_num},"
                     "%{num_teams}",
                     want),
          "want '%s'", want);
    CHECK("capture.modifiers", capture_is("[%0.5n|%.3N|%4L|%0.4a]", "[00000|  1|0   |-001]"), "");
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    snprintf(want, sizeof want, "[%s]", host);
    CHECK("capture.host", capture_is("[%H]", want), "want '%s'", want);
    omp_capture_affinity(a, sizeof a, "%i");
    /* libgomp and herd: pthread_self() in hex; libomp: the kernel thread id. */
    int id_ok = check_is_libomp() ? a[0] && strspn(a, "0123456789") == strlen(a)
                                  : strncmp(a, "0x", 2) == 0 && strlen(a) > 2;
    CHECK("capture.native_id", id_ok, "got '%s'", a);
    omp_capture_affinity(a, sizeof a, "%A");
    CHECK("capture.affinity_nonempty", a[0] >= '0' && a[0] <= '9', "got '%s'", a);

    /* Truncation: the full length is returned, the buffer holds a prefix. */
    char four[4];
    size_t full = omp_capture_affinity(four, sizeof four, "abcdef%n");
    CHECK("capture.truncated", full == 7 && strcmp(four, "abc") == 0, "got %zu '%s'", full, four);
    CHECK_EQ("capture.size0", (long)omp_capture_affinity(NULL, 0, "abcdef%n"), 7L);

    /* Setting the format. */
    omp_set_affinity_format("T%n/%N");
    len = omp_get_affinity_format(buf, sizeof buf);
    CHECK("set.get", len == 6 && strcmp(buf, "T%n/%N") == 0, "got '%s'", buf);
    CHECK("set.capture_null", capture_is(NULL, "T0/1"), "");
    omp_display_affinity(NULL);
    omp_display_affinity("display %n of %N at level %L");

    /* Inside a region and a nested one. */
    int bad = 0, ran = 0;
    omp_set_max_active_levels(2);
#pragma omp parallel
    {
        char s[128], w[128];
        int n = omp_get_thread_num(), nt = omp_get_num_threads();
        snprintf(w, sizeof w, "L=1 n=%d N=%d a=0", n, nt);
        omp_capture_affinity(s, sizeof s, "L=%L n=%n N=%N a=%a");
        if (strcmp(s, w) != 0) {
#pragma omp atomic
            bad++;
        }
        snprintf(w, sizeof w, "T%d/%d", n, nt);
        if (!capture_is(NULL, w)) {
#pragma omp atomic
            bad++;
        }
#pragma omp parallel num_threads(2)
        {
            char s2[128], w2[128];
            snprintf(w2, sizeof w2, "L=2 n=%d N=%d a=%d", omp_get_thread_num(), omp_get_num_threads(), n);
            omp_capture_affinity(s2, sizeof s2, "L=%L n=%n N=%N a=%a");
            if (strcmp(s2, w2) != 0) {
#pragma omp atomic
                bad++;
            }
#pragma omp atomic
            ran++;
        }
    }
    CHECK_EQ("capture.in_regions", bad, 0);
    CHECK("capture.nested_ran", ran >= 1, "ran %d", ran);
    return check_done();
}
