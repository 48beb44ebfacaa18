#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "core/thread_pool.h"

/* One job at a time: a generation counter wakes the workers, an atomic task
 * counter hands out tasks, and a done counter tells the caller when to return. */
static struct {
  pthread_mutex_t lock;      /* guards everything below except the atomics */
  pthread_cond_t wake, done_cv;
  int nworkers;              /* started workers                            */
  int active;                /* workers wanted for the current job         */
  unsigned long generation;
  smx_task_fn fn;
  void *ctx;
  size_t ntasks;
  atomic_size_t next;
  int finished;              /* workers that finished the current job      */
} pool = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, NULL, NULL, 0, 0, 0 };

static pthread_mutex_t busy = PTHREAD_MUTEX_INITIALIZER;  /* held by the caller that owns the pool */

static void run_tasks(smx_task_fn fn, void *ctx, size_t ntasks) {
  for (;;) {
    size_t i = atomic_fetch_add_explicit(&pool.next, 1, memory_order_relaxed);
    if (i >= ntasks) return;
    fn(ctx, i);
  }
}

static void *worker_main(void *arg) {
  int id = (int)(size_t)arg;
  unsigned long seen = 0;
  pthread_mutex_lock(&pool.lock);
  for (;;) {
    while (pool.generation == seen) pthread_cond_wait(&pool.wake, &pool.lock);
    seen = pool.generation;
    if (id >= pool.active) continue;          /* not needed for this job */
    smx_task_fn fn = pool.fn;
    void *ctx = pool.ctx;
    size_t ntasks = pool.ntasks;
    pthread_mutex_unlock(&pool.lock);
    run_tasks(fn, ctx, ntasks);
    pthread_mutex_lock(&pool.lock);
    if (++pool.finished == pool.active) pthread_cond_signal(&pool.done_cv);
  }
  return NULL;
}

/* Called with pool.lock held. Returns the number of workers available. */
static int grow(int want) {
  while (pool.nworkers < want) {
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&t, &attr, worker_main, (void *)(size_t)pool.nworkers);
    pthread_attr_destroy(&attr);
    if (rc != 0) break;
    pool.nworkers++;
  }
  return pool.nworkers < want ? pool.nworkers : want;
}

/* fork(): the child inherits the pool's bookkeeping but none of its threads.
 * Holding both locks across fork means the child sees no job in flight; it
 * then forgets the parent's workers and starts its own when first asked. */
static void atfork_prepare(void) {
  pthread_mutex_lock(&busy);
  pthread_mutex_lock(&pool.lock);
}
static void atfork_parent(void) {
  pthread_mutex_unlock(&pool.lock);
  pthread_mutex_unlock(&busy);
}
static void atfork_child(void) {
  pool.nworkers = 0;
  pool.active = 0;
  pool.finished = 0;
  pthread_cond_init(&pool.wake, NULL);
  pthread_cond_init(&pool.done_cv, NULL);
  pthread_mutex_unlock(&pool.lock);
  pthread_mutex_unlock(&busy);
}
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static void register_atfork(void) { pthread_atfork(atfork_prepare, atfork_parent, atfork_child); }

smx_status smx_parallel_for(int threads, size_t ntasks, smx_task_fn fn, void *ctx) {
  if (!fn) return ntasks ? SMX_E_INVALID_ARG : SMX_OK;
  if (threads > SMX_MAX_THREADS) threads = SMX_MAX_THREADS;
  if ((size_t)threads > ntasks) threads = (int)ntasks;
  if (threads > 1) pthread_once(&atfork_once, register_atfork);
  if (threads <= 1 || pthread_mutex_trylock(&busy) != 0) {
    for (size_t i = 0; i < ntasks; i++) fn(ctx, i);
    return SMX_OK;
  }
  pthread_mutex_lock(&pool.lock);
  int helpers = grow(threads - 1);
  pool.fn = fn;
  pool.ctx = ctx;
  pool.ntasks = ntasks;
  atomic_store(&pool.next, 0);
  pool.finished = 0;
  pool.active = helpers;
  pool.generation++;
  pthread_cond_broadcast(&pool.wake);
  pthread_mutex_unlock(&pool.lock);

  run_tasks(fn, ctx, ntasks);

  pthread_mutex_lock(&pool.lock);
  while (pool.finished < pool.active) pthread_cond_wait(&pool.done_cv, &pool.lock);
  pool.active = 0;
  pthread_mutex_unlock(&pool.lock);
  pthread_mutex_unlock(&busy);
  return SMX_OK;
}
