#include "report.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "known_issues.h"
#include "op.h"

typedef struct tally { long pass, fail, known; double worst; } tally;
static tally *t;
static long printed;
static const char *family = "";

void rep_family(const char *f) { family = f; }

void rep_init(size_t rows) {
  t = calloc(rows, sizeof *t);
  if (!t) { perror("calloc"); exit(2); }
}

void rep_check(size_t op, int ok, const char *fmt, ...) {
  if (ok) { t[op].pass++; return; }
  if (known_issue(op_table[op].name, dt_name(op_table[op].in_dt), smx_isa(), family)) { t[op].known++; return; }
  t[op].fail++;
  if (++printed > 60) return;
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "FAIL %s %s: ", op_table[op].name, dt_name(op_table[op].in_dt));
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
}

long rep_failures(void) {
  long n = 0;
  for (size_t i = 0; i < op_table_len; i++) n += t[i].fail;
  return n;
}

void rep_ratio(size_t op, double ratio) {
  if (ratio > t[op].worst) t[op].worst = ratio;
}

int rep_summary(const char *const *isas, int nisa) {
  char isa[64] = "";
  for (int i = 0; i < nisa; i++) {
    size_t l = strlen(isa);
    snprintf(isa + l, sizeof isa - l, "%s%s", i ? "+" : "", isas[i]);
  }
  long pass = 0, fail = 0, known = 0;
  printf("%-22s %-5s %-18s %12s %9s %7s %6s\n", "op", "dtype", "isa", "worst/bound", "passed", "failed", "known");
  for (size_t i = 0; i < op_table_len; i++) {
    printf("%-22s %-5s %-18s %12.3f %9ld %7ld %6ld\n", op_table[i].name, dt_name(op_table[i].in_dt), isa,
           t[i].worst, t[i].pass, t[i].fail, t[i].known);
    pass += t[i].pass;
    fail += t[i].fail;
    known += t[i].known;
  }
  known_issues_report(stdout, isas, nisa);
  printf("%ld passed, %ld failed (%ld known issues)\n", pass, fail, known);
  free(t);
  return fail ? 1 : 0;
}
