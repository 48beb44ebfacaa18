/*
 * A small process-wide worker pool, created on first use and reused.
 * smx_parallel_for (public, smx.h) runs fn(ctx, i) for i in [0, ntasks) on up to `threads`
 * threads (the caller is one of them) and returns when all are done.
 * If the pool is busy with another caller's work, or cannot grow, the tasks
 * run on the calling thread: results never depend on which thread ran a task,
 * so this changes speed, never output.
 */
#ifndef SMX_CORE_THREAD_POOL_H
#define SMX_CORE_THREAD_POOL_H

#include <stddef.h>

#include "smx/smx.h"  /* smx_task_fn, smx_parallel_for: public since the Python module uses them */

/* Upper bound on worker threads (threads above it are clamped). */
#define SMX_MAX_THREADS 256

#endif
