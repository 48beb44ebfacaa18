/*
 * The command line and the timed loop that the random soaks share
 * (tests/ops/soak.c, tests/soak/attention, tests/soak/losses): --seconds S,
 * --seed S and --case 0xSEED mean the same in each, the length defaults to
 * SMX_SOAK_SECONDS (else 15 s), and a run's seed draws its cases' seeds from
 * splitmix64, so that a printed seed or case replays it.
 */
#ifndef SMX_TESTS_SOAK_RUN_H
#define SMX_TESTS_SOAK_RUN_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "splitmix.h"

typedef struct tu_soak_args {
  double seconds;     /* < 0 until given or defaulted */
  uint64_t seed, one; /* the run's seed; the one case to replay */
  int have_seed, have_one;
} tu_soak_args;
#define TU_SOAK_ARGS_INIT { -1.0, 0, 0, 0, 0 }

/* Takes argv[*i] (and its value) when it is one of the shared options: 1 if taken, 0 if not (the soak's own,
 * or a mistake). */
static inline int tu_soak_arg(tu_soak_args *a, int argc, char **argv, int *i) {
  if (*i + 1 >= argc) return 0;
  const char *o = argv[*i];
  if (!strcmp(o, "--seconds")) a->seconds = atof(argv[++*i]);
  else if (!strcmp(o, "--seed")) { a->seed = strtoull(argv[++*i], NULL, 0); a->have_seed = 1; }
  else if (!strcmp(o, "--case")) { a->one = strtoull(argv[++*i], NULL, 0); a->have_one = 1; }
  else return 0;
  return 1;
}

/* After the arguments: the default length, and a fresh seed for a run not given one. */
static inline void tu_soak_defaults(tu_soak_args *a) {
  if (a->seconds < 0) {
    const char *e = getenv("SMX_SOAK_SECONDS");
    a->seconds = e && *e ? atof(e) : 15;
  }
  if (!a->have_seed) a->seed = (uint64_t)time(NULL) ^ ((uint64_t)clock() << 32);
}

static inline double tu_monotonic_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The cases of a run: their seeds drawn from the run's seed until its seconds are spent (at least one case).
 *   uint64_t s;
 *   for (tu_soak_loop l = tu_soak_loop_start(&a); tu_soak_loop_next(&l, &s);) run_case(s); */
typedef struct tu_soak_loop { tu_rng r; double t0, seconds; int started; } tu_soak_loop;
static inline tu_soak_loop tu_soak_loop_start(const tu_soak_args *a) {
  tu_soak_loop l = { { a->seed }, tu_monotonic_seconds(), a->seconds, 0 };
  return l;
}
static inline int tu_soak_loop_next(tu_soak_loop *l, uint64_t *seed) {
  if (l->started && tu_monotonic_seconds() - l->t0 >= l->seconds) return 0;
  l->started = 1;
  *seed = tu_next(&l->r);
  return 1;
}

#endif
