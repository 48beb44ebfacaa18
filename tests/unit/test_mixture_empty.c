/*
 * mixture_log_softmax_backward on rows of no entries (n = 0): the loss does
 * not depend on w there, so dw must come back 0 (it used to be left as it
 * was, stale memory to the caller), and dx, of no entries, is not touched.
 */
#include <stdio.h>

#include "smx/smx.h"

static int fails;
#define CHECK(c)                                                        \
  do {                                                                  \
    if (!(c)) { fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #c); fails++; } \
  } while (0)

int main(void) {
  enum { ROWS = 3, K = 4, LDW = 5 };
  float x[1] = { 0 }, w[ROWS * K] = { 0 }, dy[1] = { 0 }, dx[1] = { 7 };
  float dw[ROWS * LDW];
  double xd[1] = { 0 }, wd[ROWS * K] = { 0 }, dyd[1] = { 0 }, dxd[1] = { 7 };
  double dwd[ROWS * LDW];
  for (int i = 0; i < ROWS * LDW; i++) { dw[i] = 9.0f; dwd[i] = 9.0; }
  CHECK(smx_mixture_log_softmax_backward_rows_f32(x, 0, w, K, dy, 0, dx, 0, dw, LDW, ROWS, K, 0, NULL) == SMX_OK);
  CHECK(smx_mixture_log_softmax_backward_rows_f64(xd, 0, wd, K, dyd, 0, dxd, 0, dwd, LDW, ROWS, K, 0, NULL) == SMX_OK);
  for (int r = 0; r < ROWS; r++)
    for (int c = 0; c < LDW; c++) {
      /* the K entries of a row are 0; the padding past K is the caller's and stays */
      CHECK(dw[r * LDW + c] == (c < K ? 0.0f : 9.0f));
      CHECK(dwd[r * LDW + c] == (c < K ? 0.0 : 9.0));
    }
  CHECK(dx[0] == 7 && dxd[0] == 7);
  if (fails) return 1;
  puts("test_mixture_empty: ok");
  return 0;
}
