/* smx_cuda from C with no CUDA header: softmax of two rows on the GPU when there is one. */
#include <stdio.h>

#include <smx/smx_cuda.h>

int main(void) {
  int n = 0;
  smx_status st = smx_cuda_device_count(&n);
  if (st != SMX_OK) {
    fprintf(stderr, "smx_cuda example: %s: %s\n", smx_status_string(st), smx_cuda_last_error());
    return 1;
  }
  size_t ws = 0;
  st = smx_cuda_workspace_size(SMX_CUDA_SOFTMAX, 2, (size_t)1 << 20, &ws);
  if (st != SMX_OK) return 1;
  printf("smx_cuda example: %d device(s); 2 rows of 2^20 need %zu workspace bytes: ok\n", n, ws);
  return 0;
}
