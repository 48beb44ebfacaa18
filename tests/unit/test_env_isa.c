/* SMX_MAX_ISA caps the kernel set (ctest runs this with each value). */
#include "../common/test_util.h"

int main(void) {
  const char *cap = getenv("SMX_MAX_ISA");
  const char *want = cap ? cap : "avx512";
  static const char *names[] = { "scalar", "avx2", "avx512" };
  int lvl = !strcmp(want, "scalar") ? 0 : !strcmp(want, "avx2") ? 1 : 2;
  if (lvl > (int)smx_cpu_isa()) lvl = (int)smx_cpu_isa();
  CHECK(strcmp(smx_isa(), names[lvl]) == 0, "SMX_MAX_ISA=%s gives %s, want %s", want, smx_isa(), names[lvl]);
  float x[3] = { 1, 2, 3 }, y[3];
  CHECK(smx_softmax_f32(x, y, 3, NULL) == SMX_OK && fabsf(y[0] + y[1] + y[2] - 1.0f) < 1e-6f, "works");
  return tu_finish("test_env_isa");
}
