/* SMX_MAX_ISA caps the kernel set (ctest runs this with each value). */
#include "../common/test_util.h"

int main(void) {
  const char *cap = getenv("SMX_MAX_ISA");
  const char *want = cap ? cap : "avx512bf16";
  /* by rank on x86: scalar < avx2 < avx512 < avx512bf16, capped by what the CPU has */
  int lvl = !strcmp(want, "scalar") ? 0 : !strcmp(want, "avx2") ? 1 : !strcmp(want, "avx512") ? 2 : 3;
  if (lvl > tu_isa_top()) lvl = tu_isa_top();
  CHECK(strcmp(smx_isa(), tu_isa_names[lvl]) == 0, "SMX_MAX_ISA=%s gives %s, want %s", want, smx_isa(),
        tu_isa_names[lvl]);
  float x[3] = { 1, 2, 3 }, y[3];
  CHECK(smx_softmax_f32(x, y, 3, NULL) == SMX_OK && fabsf(y[0] + y[1] + y[2] - 1.0f) < 1e-6f, "works");
  return tu_finish("test_env_isa");
}
