/* Calls from several user threads at once, each asking for 2 threads, give
 * the same bits as a serial call (the shared pool is safe to contend for). */
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/test_util.h"

enum { R = 64, C = 3000, CALLERS = 4, ROUNDS = 20 };
static float x[R * C], longx[300000], longref[300000];
#define BATCH_BYTES (sizeof(float) * R * C)

static void *caller(void *arg) {
  long id = (long)arg;
  float *y = malloc(BATCH_BYTES), *yl = malloc(sizeof longref);
  long bad = 0;
  for (int r = 0; r < ROUNDS; r++) {
    smx_options o = { tu_algos[(id + r) % 3], 0, 0, 2, NULL };
    smx_softmax_rows_f32(x, C, y, C, R, C, &o);
    smx_options oa = { tu_algos[(id + r) % 3], 0, 0, 1, NULL };
    float *want = malloc(BATCH_BYTES);
    smx_softmax_rows_f32(x, C, want, C, R, C, &oa);
    bad += memcmp(y, want, BATCH_BYTES) != 0;
    free(want);
    smx_options ol = { SMX_ALGO_ONLINE, 0, 0, 3, NULL };
    smx_softmax_f32(longx, yl, 300000, &ol);
    bad += memcmp(yl, longref, sizeof longref) != 0;
  }
  free(y);
  free(yl);
  return (void *)bad;
}

int main(void) {
  tu_rng rng = { 99 };
  for (size_t i = 0; i < R * C; i++) x[i] = tu_uniform_f(&rng, -10, 10);
  for (size_t i = 0; i < 300000; i++) longx[i] = tu_normal(&rng);
  smx_options o = { SMX_ALGO_ONLINE, 0, 0, 1, NULL };
  smx_softmax_f32(longx, longref, 300000, &o);
  pthread_t t[CALLERS];
  for (long i = 0; i < CALLERS; i++) pthread_create(&t[i], NULL, caller, (void *)i);
  for (long i = 0; i < CALLERS; i++) {
    void *bad;
    pthread_join(t[i], &bad);
    CHECK(bad == NULL, "caller %ld saw %ld mismatching results", i, (long)bad);
  }
  /* fork after the pool has workers: the child must compute, not wait for
   * threads it does not have (alarm turns a hang into a failure) */
  pid_t pid = fork();
  if (pid == 0) {
    alarm(20);
    float *y = malloc(BATCH_BYTES), *want = malloc(BATCH_BYTES);
    smx_options o2 = { SMX_ALGO_THREE_PASS, 0, 0, 2, NULL }, o1 = { SMX_ALGO_THREE_PASS, 0, 0, 1, NULL };
    smx_softmax_rows_f32(x, C, y, C, R, C, &o2);
    smx_softmax_rows_f32(x, C, want, C, R, C, &o1);
    _exit(memcmp(y, want, BATCH_BYTES) == 0 ? 0 : 3);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "forked child: status %d", status);
  return tu_finish("test_concurrency");
}
