/*
 * The .npy header parser: a pure function over bytes (also the fuzz target's
 * entry point). A small recursive-descent reader of exactly the dict literal
 * NumPy writes; every access goes through a cursor bounded by the header
 * length, and nothing is allocated.
 */
#include <stdint.h>
#include <string.h>

#include "io/dtype.h"
#include "io/io_err.h"
#include "io/npy_shape.h"
#include "io/npy_io.h"

static const unsigned char magic[6] = { 0x93, 'N', 'U', 'M', 'P', 'Y' };

smx_status smx_npy_header_size(const void *buf, size_t len, uint64_t *total, char *err, size_t errlen) {
  const unsigned char *b = (const unsigned char *)buf;
  if (total == NULL || (buf == NULL && len > 0))
    return smx_io_err(SMX_E_INVALID_ARG, err, errlen, "NULL argument");
  size_t m = len < sizeof magic ? len : sizeof magic;
  if (len == 0) return smx_io_err(SMX_E_PARSE, err, errlen, "empty file: not a .npy file");
  if (memcmp(b, magic, m) != 0) return smx_io_err(SMX_E_PARSE, err, errlen, "not a .npy file (no \\x93NUMPY magic)");
  if (len < 8) return smx_io_err(SMX_E_PARSE, err, errlen, "truncated: %zu bytes, too short for a .npy header", len);
  unsigned major = b[6], minor = b[7];
  if (major < 1 || major > 3 || minor != 0)
    return smx_io_err(SMX_E_PARSE, err, errlen, "unsupported .npy format version %u.%u (1.0, 2.0 and 3.0 are known)",
                      major, minor);
  size_t prefix = major == 1 ? 10 : 12;
  if (len < prefix)
    return smx_io_err(SMX_E_PARSE, err, errlen, "truncated: %zu bytes, too short for a .npy header", len);
  uint64_t hlen = major == 1 ? (uint64_t)b[8] | (uint64_t)b[9] << 8
                             : (uint64_t)b[8] | (uint64_t)b[9] << 8 | (uint64_t)b[10] << 16 | (uint64_t)b[11] << 24;
  if (hlen > SMX_NPY_MAX_HEADER_BYTES)
    return smx_io_err(SMX_E_PARSE, err, errlen, "header length %llu exceeds the limit of %u bytes",
                      (unsigned long long)hlen, (unsigned)SMX_NPY_MAX_HEADER_BYTES);
  *total = prefix + hlen;
  return SMX_OK;
}

/* ---------------------------------------------------------------- cursor */
typedef struct {
  const unsigned char *p;  /* the header text (after magic, version, length) */
  size_t n, i;             /* its length and the read position             */
  size_t base;             /* file offset of p[0], for messages            */
  int version;
  char *err;
  size_t errlen;
} cursor;

static int peek(const cursor *c) { return c->i < c->n ? c->p[c->i] : -1; }
static void skip_ws(cursor *c) { while (c->i < c->n && (c->p[c->i] == ' ' || c->p[c->i] == '\t')) c->i++; }

/* A readable rendering of the byte at the cursor for messages. */
static const char *what_here(const cursor *c, char buf[16]) {
  int ch = peek(c);
  if (ch < 0) return "the end of the header";
  if (ch == '\n') return "a newline";
  if (ch >= 0x20 && ch < 0x7f) {
    buf[0] = '\'';
    buf[1] = (char)ch;
    buf[2] = '\'';
    buf[3] = '\0';
  } else {
    static const char hex[] = "0123456789abcdef";
    memcpy(buf, "byte 0x", 7);
    buf[7] = hex[ch >> 4];
    buf[8] = hex[ch & 15];
    buf[9] = '\0';
  }
  return buf;
}

static smx_status fail_expected(const cursor *c, const char *expected) {
  char b[16];
  return smx_io_err(SMX_E_PARSE, c->err, c->errlen, "bad .npy header at byte %zu: expected %s, found %s",
                    c->base + c->i, expected, what_here(c, b));
}

static int accept(cursor *c, int ch) {
  if (peek(c) != ch) return 0;
  c->i++;
  return 1;
}

/* A Python string literal without escapes or prefixes: '...' or "...".
 * Sets [*s, *s + *len) to its contents. */
static smx_status parse_string(cursor *c, const char **s, size_t *len, const char *what) {
  int q = peek(c);
  if (q != '\'' && q != '"') return fail_expected(c, what);
  size_t start = ++c->i;
  while (c->i < c->n && c->p[c->i] != q) {
    unsigned char ch = c->p[c->i];
    if (ch == '\\' || ch == '\n' || ch < 0x20 || ch >= 0x7f)
      return smx_io_err(SMX_E_PARSE, c->err, c->errlen,
                        "bad .npy header at byte %zu: unsupported character 0x%02x in a string",
                        c->base + c->i, ch);
    c->i++;
  }
  if (c->i >= c->n)
    return smx_io_err(SMX_E_PARSE, c->err, c->errlen, "bad .npy header at byte %zu: unterminated string",
                      c->base + start - 1);
  *s = (const char *)c->p + start;
  *len = c->i - start;
  c->i++;
  return SMX_OK;
}

static int is_ident_char(int ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
}

static smx_status parse_bool(cursor *c, int *v) {
  size_t start = c->i;
  while (c->i < c->n && is_ident_char(c->p[c->i])) c->i++;
  size_t len = c->i - start;
  const char *w = (const char *)c->p + start;
  if (len == 4 && memcmp(w, "True", 4) == 0) *v = 1;
  else if (len == 5 && memcmp(w, "False", 5) == 0) *v = 0;
  else {
    c->i = start;
    return fail_expected(c, "True or False for 'fortran_order'");
  }
  return SMX_OK;
}

/* A non-negative decimal integer as Python writes it: no sign, no leading
 * zeros, no '_'; "L" after it in versions 1 and 2 (Python 2's long). */
static smx_status parse_dim(cursor *c, uint64_t *v) {
  size_t start = c->i;
  int ch = peek(c);
  if (ch < '0' || ch > '9') return fail_expected(c, "a dimension (a non-negative integer)");
  uint64_t x = 0;
  int too_big = 0;
  while ((ch = peek(c)) >= '0' && ch <= '9') {
    unsigned d = (unsigned)(ch - '0');
    if (x > (SMX_IO_MAX_EXTENT - d) / 10) too_big = 1;
    else x = x * 10 + d;
    c->i++;
  }
  if (c->i - start > 1 && c->p[start] == '0')
    return smx_io_err(SMX_E_PARSE, c->err, c->errlen, "bad .npy header at byte %zu: dimension with a leading zero",
                      c->base + start);
  if (too_big)
    return smx_io_err(SMX_E_PARSE, c->err, c->errlen, "bad .npy header at byte %zu: dimension %.*s exceeds 2^63 - 1",
                      c->base + start, (int)(c->i - start > 40 ? 40 : c->i - start), (const char *)c->p + start);
  if (c->version <= 2) accept(c, 'L');
  if (is_ident_char(peek(c))) return fail_expected(c, "',' or ')' after a dimension");
  *v = x;
  return SMX_OK;
}

/* '(' [dim (',' dim)* [',']] ')', where one dimension needs its comma. */
static smx_status parse_shape(cursor *c, int *ndim, uint64_t shape[SMX_NPY_MAX_DIMS]) {
  if (!accept(c, '(')) return fail_expected(c, "a tuple '(...)' for 'shape'");
  int n = 0, comma_after_last = 0;
  skip_ws(c);
  while (!accept(c, ')')) {
    if (n > 0 && !comma_after_last) return fail_expected(c, "',' or ')' in 'shape'");
    if (n == SMX_NPY_MAX_DIMS)
      return smx_io_err(SMX_E_PARSE, c->err, c->errlen, "bad .npy header at byte %zu: more than %d dimensions",
                        c->base + c->i, SMX_NPY_MAX_DIMS);
    smx_status s = parse_dim(c, &shape[n]);
    if (s != SMX_OK) return s;
    n++;
    skip_ws(c);
    comma_after_last = accept(c, ',');
    skip_ws(c);
  }
  if (n == 1 && !comma_after_last)
    return smx_io_err(SMX_E_PARSE, c->err, c->errlen,
                      "bad .npy header at byte %zu: shape (%llu) is an integer, not a tuple (write (%llu,))",
                      c->base + c->i - 1, (unsigned long long)shape[0], (unsigned long long)shape[0]);
  *ndim = n;
  return SMX_OK;
}

static int utf8_valid(const unsigned char *p, size_t n, size_t *bad) {
  for (size_t i = 0; i < n;) {
    unsigned char b = p[i];
    size_t k;
    uint32_t cp;
    if (b < 0x80) { i++; continue; }
    if (b >= 0xc2 && b <= 0xdf) { k = 1; cp = b & 0x1fu; }
    else if (b >= 0xe0 && b <= 0xef) { k = 2; cp = b & 0x0fu; }
    else if (b >= 0xf0 && b <= 0xf4) { k = 3; cp = b & 0x07u; }
    else { *bad = i; return 0; }
    if (n - i <= k) { *bad = i; return 0; }
    for (size_t j = 1; j <= k; j++) {
      if ((p[i + j] & 0xc0u) != 0x80u) { *bad = i; return 0; }
      cp = cp << 6 | (p[i + j] & 0x3fu);
    }
    /* overlong forms, UTF-16 surrogates and code points past U+10FFFF */
    if ((k == 2 && cp < 0x800) || (k == 3 && cp < 0x10000) || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff) {
      *bad = i;
      return 0;
    }
    i += k + 1;
  }
  return 1;
}

enum { KEY_DESCR = 1, KEY_FORTRAN = 2, KEY_SHAPE = 4 };

static smx_status parse_dict(cursor *c, smx_npy_info *info) {
  int seen = 0, ndim = 0;
  smx_dtype dtype = SMX_DTYPE_F32;
  int big = 0, fortran = 0;
  uint64_t shape[SMX_NPY_MAX_DIMS];
  smx_status s;

  if (!accept(c, '{')) return fail_expected(c, "'{' at the start of the header");
  for (;;) {
    skip_ws(c);
    if (accept(c, '}')) break;
    const char *key;
    size_t klen;
    size_t kpos = c->i;
    if ((s = parse_string(c, &key, &klen, "a quoted key or '}'")) != SMX_OK) return s;
    int which = klen == 5 && memcmp(key, "descr", 5) == 0           ? KEY_DESCR
                : klen == 13 && memcmp(key, "fortran_order", 13) == 0 ? KEY_FORTRAN
                : klen == 5 && memcmp(key, "shape", 5) == 0          ? KEY_SHAPE
                                                                     : 0;
    if (which == 0)
      return smx_io_err(SMX_E_PARSE, c->err, c->errlen, "bad .npy header at byte %zu: unknown key '%.*s'",
                        c->base + kpos, (int)(klen > 40 ? 40 : klen), key);
    if (seen & which)
      return smx_io_err(SMX_E_PARSE, c->err, c->errlen, "bad .npy header at byte %zu: duplicate key '%.*s'",
                        c->base + kpos, (int)klen, key);
    seen |= which;
    skip_ws(c);
    if (!accept(c, ':')) return fail_expected(c, "':' after a key");
    skip_ws(c);
    if (which == KEY_DESCR) {
      const char *d;
      size_t dlen, dpos = c->i;
      if (peek(c) == '[' || peek(c) == '(' || peek(c) == '{')
        return smx_io_err(SMX_E_PARSE, c->err, c->errlen,
                          "bad .npy header at byte %zu: structured dtypes are not supported", c->base + dpos);
      if ((s = parse_string(c, &d, &dlen, "a quoted dtype for 'descr'")) != SMX_OK) return s;
      if (smx_io_dtype_from_descr(d, dlen, &dtype, &big) != 0)
        return smx_io_err(SMX_E_PARSE, c->err, c->errlen,
                          "bad .npy header at byte %zu: unsupported dtype '%.*s' (bool, int8-64, uint8-64, "
                          "float16/32/64 with an explicit byte order are)",
                          c->base + dpos, (int)(dlen > 40 ? 40 : dlen), d);
    } else if (which == KEY_FORTRAN) {
      if ((s = parse_bool(c, &fortran)) != SMX_OK) return s;
    } else {
      if ((s = parse_shape(c, &ndim, shape)) != SMX_OK) return s;
    }
    skip_ws(c);
    if (accept(c, '}')) break;
    if (!accept(c, ',')) return fail_expected(c, "',' or '}' after a value");
  }
  /* after the dict: spaces, then the final '\n' (the byte at n - 1, checked by the caller) */
  while (c->i < c->n - 1 && c->p[c->i] == ' ') c->i++;
  if (c->i != c->n - 1) return fail_expected(c, "only spaces between '}' and the final newline");
  if (seen != (KEY_DESCR | KEY_FORTRAN | KEY_SHAPE))
    return smx_io_err(SMX_E_PARSE, c->err, c->errlen, "bad .npy header: missing key '%s'",
                      !(seen & KEY_DESCR) ? "descr" : !(seen & KEY_FORTRAN) ? "fortran_order" : "shape");
  if ((s = smx_io_shape_set(info, dtype, ndim, shape, SMX_E_PARSE, c->err, c->errlen)) != SMX_OK) {
    smx_io_err_prefix(c->err, c->errlen, "bad .npy header");
    return s;
  }
  info->big_endian = big;
  info->fortran_order = fortran;
  return SMX_OK;
}

smx_status smx_npy_parse_header(const void *buf, size_t len, smx_npy_info *info, char *err, size_t errlen) {
  if (info == NULL) return smx_io_err(SMX_E_INVALID_ARG, err, errlen, "NULL argument");
  uint64_t total = 0;
  smx_status s = smx_npy_header_size(buf, len, &total, err, errlen);
  if (s != SMX_OK) return s;
  if (total > len)
    return smx_io_err(SMX_E_PARSE, err, errlen, "truncated: the header needs %llu bytes but only %zu are there",
                      (unsigned long long)total, len);
  const unsigned char *b = (const unsigned char *)buf;
  cursor c = { 0 };
  c.version = b[6];
  c.base = c.version == 1 ? 10 : 12;
  c.p = b + c.base;
  c.n = (size_t)total - c.base;
  c.err = err;
  c.errlen = errlen;
  if (c.n == 0) return smx_io_err(SMX_E_PARSE, err, errlen, "bad .npy header: empty");
  if (c.p[c.n - 1] != '\n')
    return smx_io_err(SMX_E_PARSE, err, errlen, "bad .npy header: does not end with a newline");
  size_t bad;
  if (c.version < 3) {
    for (size_t i = 0; i < c.n; i++)
      if (c.p[i] >= 0x80)
        return smx_io_err(SMX_E_PARSE, err, errlen,
                          "bad .npy header at byte %zu: non-ASCII byte 0x%02x in a version %d.0 header",
                          c.base + i, c.p[i], c.version);
  } else if (!utf8_valid(c.p, c.n, &bad)) {
    return smx_io_err(SMX_E_PARSE, err, errlen, "bad .npy header at byte %zu: invalid UTF-8", c.base + bad);
  }
  if ((s = parse_dict(&c, info)) != SMX_OK) return s;
  info->data_offset = total;
  info->version_major = c.version;
  info->version_minor = 0;
  return SMX_OK;
}
