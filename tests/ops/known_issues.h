/* Known library defects: checks that fail and are counted apart. */
#ifndef SMX_TESTS_OPS_KNOWN_ISSUES_H
#define SMX_TESTS_OPS_KNOWN_ISSUES_H

#include <stdio.h>

int known_issue(const char *op, const char *dtype, const char *isa, const char *family);
void known_issues_report(FILE *f, const char *const *isas, int nisa);

#endif
