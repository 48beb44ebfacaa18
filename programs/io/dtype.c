#include "io/dtype.h"

#include <string.h>

/* Indexed by smx_dtype: NumPy's name, the kind letter of descr, the size. */
static const struct {
  const char *name;
  char kind;
  unsigned char size;
} table[] = {
  [SMX_DTYPE_BOOL] = { "bool", 'b', 1 },
  [SMX_DTYPE_I8] = { "int8", 'i', 1 },
  [SMX_DTYPE_I16] = { "int16", 'i', 2 },
  [SMX_DTYPE_I32] = { "int32", 'i', 4 },
  [SMX_DTYPE_I64] = { "int64", 'i', 8 },
  [SMX_DTYPE_U8] = { "uint8", 'u', 1 },
  [SMX_DTYPE_U16] = { "uint16", 'u', 2 },
  [SMX_DTYPE_U32] = { "uint32", 'u', 4 },
  [SMX_DTYPE_U64] = { "uint64", 'u', 8 },
  [SMX_DTYPE_F16] = { "float16", 'f', 2 },
  [SMX_DTYPE_F32] = { "float32", 'f', 4 },
  [SMX_DTYPE_F64] = { "float64", 'f', 8 },
};
enum { NTYPES = (int)(sizeof table / sizeof table[0]) };

static int known(smx_dtype t) { return (int)t > 0 && (int)t < NTYPES && table[t].name != NULL; }

const char *smx_dtype_name(smx_dtype t) { return known(t) ? table[t].name : NULL; }
size_t smx_dtype_size(smx_dtype t) { return known(t) ? table[t].size : 0; }

int smx_io_host_big_endian(void) {
  const uint16_t one = 1;
  unsigned char b;
  memcpy(&b, &one, 1);
  return b == 0;
}

int smx_io_dtype_from_descr(const char *s, size_t n, smx_dtype *t, int *big) {
  /* Exactly: byte-order character, kind letter, size of one digit. */
  if (n != 3) return -1;
  char order = s[0], kind = s[1], size = s[2];
  if (size < '1' || size > '8') return -1;
  for (int i = 1; i < NTYPES; i++) {
    if (table[i].name == NULL || table[i].kind != kind || table[i].size != (unsigned)(size - '0')) continue;
    int one_byte = table[i].size == 1;
    if (order == '<') *big = 0;
    else if (order == '>') *big = 1;
    else if (order == '=') *big = smx_io_host_big_endian();
    else if (order == '|' && one_byte) *big = 0;
    else return -1;
    if (one_byte) *big = 0;  /* byte order is meaningless for one byte: one canonical value */
    *t = (smx_dtype)i;
    return 0;
  }
  return -1;
}

int smx_io_dtype_descr(smx_dtype t, int big, char out[4]) {
  if (!known(t)) return -1;
  out[0] = table[t].size == 1 ? '|' : big ? '>' : '<';
  out[1] = table[t].kind;
  out[2] = (char)('0' + table[t].size);
  out[3] = '\0';
  return 0;
}
