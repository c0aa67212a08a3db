/* detach.c — detached tasks (OpenMP 5.0 detach(event), omp_fulfill_event):
 * a task completes only when its body has finished and its event has been
 * fulfilled, in either order, by any thread — the task itself, another task
 * of the team, or a thread outside the team. taskwait, taskgroup end,
 * barriers and dependence successors wait for completion, not for the end
 * of the body. A second fulfilment of an event is an error (checked in a
 * child process: it must die). Every check runs in teams of one too (a
 * team of one defers detached tasks, as libgomp does: an event a later task
 * of its one thread fulfils completes the earlier task; chain_alone checks
 * that at any OMP_NUM_THREADS).
 */
#include "check.h"
#include <pthread.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <time.h>

static void sleep_ms(int ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* A thread outside the team that fulfils an event after a delay, setting a
 * flag first (so whoever sees the task complete must see the flag). */
struct late {
    omp_event_handle_t ev;
    int *flag;
    int ms;
    pthread_t th;
};

static void *late_main(void *p) {
    struct late *l = p;
    sleep_ms(l->ms);
    __atomic_store_n(l->flag, 1, __ATOMIC_SEQ_CST);
    omp_fulfill_event(l->ev);
    return NULL;
}

static void late_start(struct late *l, omp_event_handle_t ev, int *flag, int ms) {
    l->ev = ev;
    l->flag = flag;
    l->ms = ms;
    if (pthread_create(&l->th, NULL, late_main, l) != 0) {
        fprintf(stderr, "pthread_create failed\n");
        exit(2);
    }
}

/* taskwait waits for the fulfilment, done by a thread outside the team
 * after the body has ended. */
static void taskwait_waits(void) {
    int fulfilled = 0, body = 0, seen = 0;
    struct late l;
#pragma omp parallel shared(fulfilled, body, seen, l)
#pragma omp single
    {
        omp_event_handle_t ev;
#pragma omp task detach(ev) shared(body)
        __atomic_store_n(&body, 1, __ATOMIC_SEQ_CST);
        late_start(&l, ev, &fulfilled, 50);
#pragma omp taskwait
        seen = __atomic_load_n(&fulfilled, __ATOMIC_SEQ_CST);
    }
    pthread_join(l.th, NULL);
    CHECK_EQ("detach: body ran", body, 1);
    CHECK_EQ("detach: taskwait waits for the fulfilment", seen, 1);
}

/* The end of a taskgroup waits for a detached task (created in a child
 * task, so also a descendant) fulfilled from outside. */
static void taskgroup_waits(void) {
    int fulfilled = 0, seen = 0;
    struct late l;
#pragma omp parallel shared(fulfilled, seen, l)
#pragma omp single
    {
#pragma omp taskgroup
        {
#pragma omp task shared(fulfilled, l)
            {
                omp_event_handle_t ev;
#pragma omp task detach(ev)
                check_spin(10);
                late_start(&l, ev, &fulfilled, 50);
            }
        }
        seen = __atomic_load_n(&fulfilled, __ATOMIC_SEQ_CST);
    }
    pthread_join(l.th, NULL);
    CHECK_EQ("detach: taskgroup end waits for the fulfilment", seen, 1);
}

/* A barrier waits too: the event is fulfilled by another task of the team
 * after a delay. */
static void barrier_waits(void) {
    int fulfilled = 0, seen_bad = 0;
#pragma omp parallel shared(fulfilled, seen_bad)
    {
#pragma omp single nowait
        {
            omp_event_handle_t ev;
#pragma omp task detach(ev)
            check_spin(10);
#pragma omp task firstprivate(ev) shared(fulfilled)
            {
                sleep_ms(50);
                __atomic_store_n(&fulfilled, 1, __ATOMIC_SEQ_CST);
                omp_fulfill_event(ev);
            }
        }
#pragma omp barrier
        if (!__atomic_load_n(&fulfilled, __ATOMIC_SEQ_CST)) __atomic_fetch_add(&seen_bad, 1, __ATOMIC_RELAXED);
    }
    CHECK_EQ("detach: barrier waits for the fulfilment", seen_bad, 0);
}

/* A task fulfilling its own event (before its body ends), if(0) detached
 * tasks fulfilled from outside, and tasks in a final task. */
static void self_and_undeferred(void) {
    int ran = 0, fulfilled = 0, seen = 0;
    struct late l;
#pragma omp parallel shared(ran, fulfilled, seen, l)
#pragma omp single
    {
        for (int i = 0; i < 50; i++) {
            omp_event_handle_t ev;
#pragma omp task detach(ev) shared(ran)
            {
                omp_fulfill_event(ev);
                __atomic_fetch_add(&ran, 1, __ATOMIC_RELAXED);
            }
        }
        omp_event_handle_t ev2;
        /* if(0): undeferred; the encountering thread resumes only when the
         * event is fulfilled (by the outside thread started inside it). */
#pragma omp task detach(ev2) if (0) shared(l, fulfilled)
        late_start(&l, ev2, &fulfilled, 30);
        seen = __atomic_load_n(&fulfilled, __ATOMIC_SEQ_CST);
#pragma omp taskwait
    }
    pthread_join(l.th, NULL);
    CHECK_EQ("detach: self-fulfilled tasks ran", ran, 50);
    CHECK_EQ("detach: if(0) task completes at the fulfilment", seen, 1);
}

/* A dependence successor runs only after the fulfilment. */
static void dependence_waits(void) {
    int x = 0, dep_early = 0, dep_ran = 0, dep_flag = 0;
#pragma omp parallel shared(x, dep_early, dep_ran, dep_flag)
#pragma omp single
    {
        omp_event_handle_t dev;
#pragma omp task detach(dev) depend(out : x) shared(x)
        x = 1;
#pragma omp task shared(dep_flag) firstprivate(dev)
        {
            sleep_ms(30);
            __atomic_store_n(&dep_flag, 1, __ATOMIC_SEQ_CST);
            omp_fulfill_event(dev);
        }
#pragma omp task depend(in : x) shared(x, dep_early, dep_ran, dep_flag)
        {
            if (!__atomic_load_n(&dep_flag, __ATOMIC_SEQ_CST) || x != 1) dep_early = 1;
            dep_ran = 1;
        }
#pragma omp taskwait
    }
    CHECK_EQ("detach: dependence successor ran", dep_ran, 1);
    CHECK_EQ("detach: dependence successor waits for the fulfilment", dep_early, 0);
}

/* Events fulfilled by other tasks, in the reverse order. At most 48 per
 * thread: libgomp runs a task undeferred once 64 per thread are queued, and
 * an undeferred detached task waits for an event only a later task fulfils. */
#define ND 100
static void fulfilled_by_tasks(void) {
    static omp_event_handle_t evs[ND];
    static int fulfilled[ND];
    int body = 0, early = 0, nd = ND;
    memset(fulfilled, 0, sizeof fulfilled);
#pragma omp parallel shared(body, early, nd)
#pragma omp single
    {
        if (48 * omp_get_num_threads() < nd) nd = 48 * omp_get_num_threads();
        for (int i = 0; i < nd; i++) {
            omp_event_handle_t ev;
#pragma omp task detach(ev) shared(body)
            __atomic_fetch_add(&body, 1, __ATOMIC_RELAXED);
            evs[i] = ev;
        }
        for (int i = nd - 1; i >= 0; i--) {
#pragma omp task firstprivate(i)
            {
                __atomic_store_n(&fulfilled[i], 1, __ATOMIC_SEQ_CST);
                omp_fulfill_event(evs[i]);
            }
        }
#pragma omp taskwait
        for (int i = 0; i < nd; i++)
            if (!__atomic_load_n(&fulfilled[i], __ATOMIC_SEQ_CST)) early++;
    }
    CHECK_EQ("detach: bodies ran", body, nd);
    CHECK_EQ("detach: taskwait after fulfilments by tasks", early, 0);
}

/* A team of one (num_threads(1)): each detached task's event is fulfilled
 * by the next task, created after it (libgomp's task-detach-2), and a
 * dependence successor of a detached task waits, deferred, for the event a
 * later task fulfils: it must not run before the fulfilment nor hang. */
static void chain_alone(void) {
    int x = 0, y = 0, z = 0, flag = 0, early = 0, dep_ran = 0;
#pragma omp parallel num_threads(1) shared(x, y, z, flag, early, dep_ran)
#pragma omp single
    {
        omp_event_handle_t e1, e2, e3;
#pragma omp task detach(e1) shared(x)
        x++;
#pragma omp task detach(e2) shared(y) firstprivate(e1)
        {
            y++;
            omp_fulfill_event(e1);
        }
#pragma omp task shared(z) firstprivate(e2)
        {
            z++;
            omp_fulfill_event(e2);
        }
#pragma omp task detach(e3) depend(out : x) shared(x)
        x += 10;
#pragma omp task depend(in : x) shared(x, flag, early, dep_ran)
        {
            if (!__atomic_load_n(&flag, __ATOMIC_SEQ_CST) || x != 11) early = 1;
            dep_ran = 1;
        }
#pragma omp task shared(flag) firstprivate(e3)
        {
            __atomic_store_n(&flag, 1, __ATOMIC_SEQ_CST);
            omp_fulfill_event(e3);
        }
    }
    CHECK("detach: a chain of events in a team of one", x == 11 && y == 1 && z == 1, "x=%d y=%d z=%d", x, y, z);
    CHECK_EQ("detach: team of one: dependence successor ran", dep_ran, 1);
    CHECK_EQ("detach: team of one: successor waits for a later task's fulfilment", early, 0);
}

/* A second fulfilment of an event is an error: the child must die. */
static void double_fulfil_dies(void) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) dup2(devnull, 2);
        omp_event_handle_t ev;
#pragma omp task detach(ev) if (0)
        {
            omp_fulfill_event(ev);
            omp_fulfill_event(ev);
        }
        _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    CHECK("detach: a second omp_fulfill_event is an error", !(WIFEXITED(st) && WEXITSTATUS(st) == 0),
          "child status %#x", st);
}

int main(void) {
    check_begin("detach");
    self_and_undeferred();
    taskwait_waits();
    taskgroup_waits();
    barrier_waits();
    fulfilled_by_tasks();
    dependence_waits();
    chain_alone();
    double_fulfil_dies();
    return check_done();
}
