/* Pass / fail counts and the worst error / bound, per table row. */
#ifndef SMX_TESTS_OPS_REPORT_H
#define SMX_TESTS_OPS_REPORT_H

#include <stddef.h>

void rep_init(size_t rows);
/* the family the next checks belong to (for the known-issue list) */
void rep_family(const char *family);
/* counts one check of table row op; prints the message of the first failures */
void rep_check(size_t op, int ok, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void rep_ratio(size_t op, double ratio);
/* the failures counted so far (known issues apart) */
long rep_failures(void);
/* prints the table over the kernel sets walked and the totals; returns the process's exit status */
int rep_summary(const char *const *isas, int nisa);

#endif
