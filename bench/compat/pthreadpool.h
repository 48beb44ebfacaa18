/*
 * Minimal stand-in for <pthreadpool.h>, used only when the system has the
 * pthreadpool library but not its header (Debian ships libpthreadpool0 without
 * a -dev package, while xnnpack.h includes <pthreadpool.h>).
 *
 * It declares only what the benchmark and the XNNPACK operator API need: the
 * opaque pool handle and the create / destroy / thread-count calls, with the
 * library's C ABI.
 */
#ifndef SMX_BENCH_COMPAT_PTHREADPOOL_H
#define SMX_BENCH_COMPAT_PTHREADPOOL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pthreadpool *pthreadpool_t;

/* threads_count == 0: one thread per logical processor. The calling thread
 * takes part in the work, so a pool of n runs n-1 extra threads. */
pthreadpool_t pthreadpool_create(size_t threads_count);
size_t pthreadpool_get_threads_count(pthreadpool_t threadpool);
void pthreadpool_destroy(pthreadpool_t threadpool);

#ifdef __cplusplus
}
#endif
#endif /* SMX_BENCH_COMPAT_PTHREADPOOL_H */
