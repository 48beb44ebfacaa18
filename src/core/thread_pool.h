/*
 * A small process-wide worker pool, created on first use and reused.
 * smx_parallel_for runs fn(ctx, i) for i in [0, ntasks) on up to `threads`
 * threads (the caller is one of them) and returns when all are done.
 * If the pool is busy with another caller's work, or cannot grow, the tasks
 * run on the calling thread: results never depend on which thread ran a task,
 * so this changes speed, never output.
 */
#ifndef SMX_CORE_THREAD_POOL_H
#define SMX_CORE_THREAD_POOL_H

#include <stddef.h>

typedef void (*smx_task_fn)(void *ctx, size_t task);

void smx_parallel_for(int threads, size_t ntasks, smx_task_fn fn, void *ctx);

/* Upper bound on worker threads (threads above it are clamped). */
#define SMX_MAX_THREADS 256

#endif
