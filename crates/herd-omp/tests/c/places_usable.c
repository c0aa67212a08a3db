/* OMP_PLACES naming CPUs the process cannot use (beyond the machine, or
 * outside its CPU set): the program runs on (libgomp drops such CPUs and
 * the places they leave empty, or ignores the variable; herd drops them with
 * one warning), and the places reported are usable: none empty, every CPU
 * in the process's CPU set.  EXPECT_MAX_PLACES: the most places the variable can leave (the
 * usable ones it lists); EXPECT_MIN_PLACES: the fewest (a list of only
 * usable CPUs keeps every place: herd preloaded beside libgomp must judge
 * usability by the process's CPU set, not by libgomp's binding of the
 * initial thread); ALLOWED_CPUS: the process's CPU set as run.sh found it
 * (a list such as 0-3,8; default: CPUs below the online count). */
#include "check.h"

/* Whether `cpu` is in the list `set` ("0-3,8"). */
static int in_list(const char *set, int cpu) {
    const char *p = set;
    while (*p) {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p) return 0;
        p = end;
        if (*p == '-') {
            b = strtol(p + 1, &end, 10);
            p = end;
        }
        if (cpu >= a && cpu <= b) return 1;
        if (*p == ',') p++;
        else if (*p) return 0;
    }
    return 0;
}

int main(void) {
    check_begin("places_usable");
    char online[64];
    snprintf(online, sizeof online, "0-%ld", sysconf(_SC_NPROCESSORS_ONLN) - 1);
    const char *allowed = getenv("ALLOWED_CPUS") ? getenv("ALLOWED_CPUS") : online;
    long max_places = env_long("EXPECT_MAX_PLACES", -1);
    long min_places = env_long("EXPECT_MIN_PLACES", -1);
    int np = omp_get_num_places();
    if (min_places >= 0)
        CHECK("places.all_usable_kept", np >= min_places, "%d places, the variable lists %ld usable", np,
              min_places);
    if (max_places >= 0)
        CHECK("places.at_most_usable", np <= max_places, "%d places, the variable lists %ld usable", np,
              max_places);
    int empty = 0, outside = 0, first_outside = -1;
    for (int p = 0; p < np; p++) {
        int k = omp_get_place_num_procs(p);
        if (k <= 0) {
            empty++;
            continue;
        }
        int ids[1024];
        if (k > 1024) k = 1024;
        omp_get_place_proc_ids(p, ids);
        for (int i = 0; i < k; i++)
            if (!in_list(allowed, ids[i])) {
                if (first_outside < 0) first_outside = ids[i];
                outside++;
            }
    }
    CHECK("places.none_empty", empty == 0, "%d of %d places have no CPU", empty, np);
    CHECK("places.cpus_usable", outside == 0, "%d CPUs outside the process's set %s, first %d", outside, allowed,
          first_outside);
    int team = 0;
    long sum = 0;
#pragma omp parallel num_threads(2) reduction(+ : sum)
    {
        if (omp_get_thread_num() == 0) team = omp_get_num_threads();
        sum += omp_get_thread_num() + 1;
    }
    CHECK_EQ("region.team", team, 2);
    CHECK_EQ("region.sum", sum, 3);
    return check_done();
}
