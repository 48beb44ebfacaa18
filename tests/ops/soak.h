/* The op driver's soak mode (soak.c) and what it takes from the driver (ops_driver.c). */
#ifndef SMX_TESTS_OPS_SOAK_H
#define SMX_TESTS_OPS_SOAK_H

#include <stddef.h>
#include <stdint.h>

#include "op.h"

/* `test_ops soak ...`: argv[0] is "soak"; run_dt: the input types SMX_OPS_DTYPES selects */
int ops_soak_main(int argc, char **argv, const int *run_dt);

/* from ops_driver.c: one row's outputs against its reference (every element), the number outside */
size_t ops_check_row(size_t op, const ref_ctx *c, const void *out, const int64_t *idx, double *worst);
/* the kernel sets walked, scalar first, and their names */
int ops_levels(const smx_isa_level **levels);
const char *const *ops_level_names(void);
/* SMX_OPS_ONLY */
int ops_op_wanted(size_t op);

#endif
