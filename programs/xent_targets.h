/*
 * The targets of smx xent, read whole before any logit: an integer .npy, or
 * whole numbers in CSV/TSV, of any order, one per row of the logits.
 */
#ifndef SMX_PROGRAMS_XENT_TARGETS_H
#define SMX_PROGRAMS_XENT_TARGETS_H

#include <stdint.h>

/* Reads the targets at path (fmt: CLI_FMT_*) in the C order of their shape
 * as int64 into *t (malloc'ed); there must be want of them. Returns 0, or an
 * exit code after its message. */
int smx_xent_read_targets(const char *path, int fmt, uint64_t want, int64_t **t);

#endif
