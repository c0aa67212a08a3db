/* segv.c — a diagnosis preload for machines without gdb (the device): on
 * SIGSEGV, SIGBUS or SIGILL it prints the faulting address, the thread's
 * backtrace (module+offset: map offsets of a stripped binary back with
 * `addr2line -f -C -i -e <unstripped binary> <offset>`) and the executable
 * mappings, then dies of the signal; with SEGV_WATCHDOG=S it prints, after S
 * seconds, every thread's state (/proc/self/task/<tid>/stat, wchan) and
 * backtrace, and exits 99 (a hang's diagnosis). Built by
 * bench/device/stage.sh into .dev/lib/libsegv.so; use:
 *   SEGV_WATCHDOG=10 LD_PRELOAD=.dev/lib/libsegv.so prog
 * backtrace() is not async-signal-safe; this is for diagnosis only. */
#define _GNU_SOURCE
#include <dirent.h>
#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static void dump(const char *why, void *addr) {
    void *bt[64];
    int n = backtrace(bt, 64);
    pthread_mutex_lock(&mu);
    dprintf(2, "=== %s tid=%ld addr=%p\n", why, (long)syscall(SYS_gettid), addr);
    backtrace_symbols_fd(bt, n, 2);
    pthread_mutex_unlock(&mu);
}
static void fatal(int sig, siginfo_t *si, void *ctx) {
    (void)ctx;
    dump(strsignal(sig), si->si_addr);
    FILE *m = fopen("/proc/self/maps", "r");
    char line[512];
    while (m && fgets(line, sizeof line, m))
        if (strstr(line, "r-xp")) dprintf(2, "map %s", line);
    signal(sig, SIG_DFL);
    raise(sig);
}
static volatile int dumped;
static void usr2(int sig) { (void)sig; dump("watchdog", 0); __sync_fetch_and_add(&dumped, 1); }
static void *watch(void *arg) {
    sleep((unsigned)(long)arg);
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    int me = (int)syscall(SYS_gettid), sent = 0;
    while (d && (e = readdir(d))) {
        int tid = atoi(e->d_name);
        if (tid <= 0 || tid == me) continue;
        char p[64], st[256] = {0};
        snprintf(p, sizeof p, "/proc/self/task/%d/stat", tid);
        FILE *f = fopen(p, "r");
        if (f) { fgets(st, sizeof st, f); fclose(f); }
        snprintf(p, sizeof p, "/proc/self/task/%d/wchan", tid);
        char w[64] = {0};
        f = fopen(p, "r");
        if (f) { fgets(w, sizeof w, f); fclose(f); }
        dprintf(2, "task %d stat: %.60s wchan: %s\n", tid, strchr(st, ')') ? strchr(st, ')') : st, w);
        syscall(SYS_tgkill, getpid(), tid, SIGUSR2);
        sent++;
        usleep(20000);
    }
    usleep(500000);
    dprintf(2, "=== watchdog: %d threads signalled, %d dumped\n", sent, dumped);
    _exit(99);
}
__attribute__((constructor)) static void init(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = fatal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigaction(SIGSEGV, &sa, 0);
    sigaction(SIGBUS, &sa, 0);
    sigaction(SIGILL, &sa, 0);
    signal(SIGUSR2, usr2);
    const char *w = getenv("SEGV_WATCHDOG");
    if (w && atoi(w) > 0) {
        pthread_t t;
        pthread_create(&t, 0, watch, (void *)(long)atoi(w));
        pthread_detach(t);
    }
}
