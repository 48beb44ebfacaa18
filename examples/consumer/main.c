/* A program that uses an installed smx, built by CI both with find_package(smx) and with pkg-config. */
#include <math.h>
#include <stdio.h>

#include <smx/smx.h>

int main(void) {
  const float x[4] = { 1.0f, 2.0f, 3.0f, 4.0f };
  float y[4];
  smx_status s = smx_softmax_f32(x, y, 4, NULL);
  if (s != SMX_OK) {
    fprintf(stderr, "consumer: %s\n", smx_status_string(s));
    return 1;
  }
  float sum = y[0] + y[1] + y[2] + y[3];
  printf("smx %s (%s): softmax(1,2,3,4) = %.6f %.6f %.6f %.6f\n", smx_version_string(), smx_isa(), y[0], y[1], y[2],
         y[3]);
  return fabsf(sum - 1.0f) < 1e-6f && smx_version_number() == SMX_VERSION_NUMBER ? 0 : 1;
}
