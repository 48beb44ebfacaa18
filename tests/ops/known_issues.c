/*
 * Library defects the driver finds that are not fixed yet. A failing check
 * that matches an entry is counted as known, not as a failure, so that the
 * suite stays a gate for everything else; the summary lists them, and says
 * when one no longer shows (then delete its entry).
 */
#include <string.h>

#include "known_issues.h"

typedef struct known {
  const char *op;      /* table row name */
  const char *dtype;   /* NULL: every storage type */
  const char *isa;     /* NULL: every kernel set */
  const char *family;  /* prefix of the family name */
  const char *why;
} known;

static const known list[] = {
  { NULL, NULL, NULL, NULL, NULL },   /* keep the list non-empty */
};
#define NKNOWN (sizeof list / sizeof list[0])
static int seen[NKNOWN];

int known_issue(const char *op, const char *dtype, const char *isa, const char *family) {
  for (size_t i = 0; i < NKNOWN; i++) {
    const known *k = &list[i];
    if (!k->op) continue;
    if (strcmp(k->op, op) || (k->dtype && strcmp(k->dtype, dtype)) || (k->isa && strcmp(k->isa, isa)) ||
        strncmp(k->family, family, strlen(k->family)))
      continue;
    seen[i] = 1;
    return 1;
  }
  return 0;
}

void known_issues_report(FILE *f, const char *const *isas, int nisa) {
  for (size_t i = 0; i < NKNOWN; i++) {
    const known *k = &list[i];
    int walked = !k->isa;
    for (int j = 0; j < nisa; j++) walked |= k->isa && !strcmp(k->isa, isas[j]);
    if (!k->op || !walked) continue;
    if (!seen[i] && !strncmp(k->family, "soak", 4)) continue;   /* the soak's own entries: only its runs see them */
    fprintf(f, "known issue %s: %s %s (%s)\n", seen[i] ? "seen" : "NOT SEEN, delete its entry", k->op, k->family,
            k->why);
  }
}
