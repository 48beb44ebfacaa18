/*
 * smx_feature_model_save / _load: the finished model in one file
 * (docs/feature-model.md): a 128-byte header, the arrays in a fixed order,
 * an FNV-1a 64-bit checksum of every byte before it. Native little-endian;
 * save writes a temporary file in the same directory and renames it over the
 * target, so a reader never sees half a model.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "features/model.h"

#define MAGIC "SMXFEAT1"
#define VERSION 1u
#define HEADER 128

typedef struct hdr {
  char magic[8];
  uint32_t version, methods;
  uint64_t F, C, H, N, k, D, rank;
  uint32_t knn_kind, cov;
  uint64_t lists, probe;
  double pct, alpha, thr, shrink;
} hdr;
_Static_assert(sizeof(hdr) == HEADER, "the header is 128 bytes");

typedef struct sink {
  FILE *f;
  uint64_t h;
  int bad;
} sink;

static void fnv(uint64_t *h, const void *p, size_t n) {
  const unsigned char *c = p;
  uint64_t x = *h;
  for (size_t i = 0; i < n; i++) x = (x ^ c[i]) * 0x100000001b3ull;
  *h = x;
}

static void put(sink *s, const void *p, size_t n) {
  if (s->bad || !n) return;
  fnv(&s->h, p, n);
  if (fwrite(p, 1, n, s->f) != n) s->bad = 1;
}

static int get(sink *s, void *p, size_t n) {
  if (!n) return 0;
  if (fread(p, 1, n, s->f) != n) return -1;
  fnv(&s->h, p, n);
  return 0;
}

#define HAS(m, x) (((m) & SMX_FEAT_BIT(x)) != 0)
#define HAS_VIM(m) (HAS(m, SMX_FEAT_VIM) || HAS(m, SMX_FEAT_RESIDUAL))

/* The arrays of a model with header h, in file order: element size and count. */
typedef struct part { size_t esize; uint64_t count; } part;
static size_t parts_of(const hdr *h, part *p) {
  uint64_t S = h->C ? h->C : 1;
  size_t n = 0;
  p[n++] = (part){ 8, h->H * h->F };            /* W */
  p[n++] = (part){ 8, h->H };                   /* b */
  p[n++] = (part){ 8, S };                      /* counts */
  int g = HAS(h->methods, SMX_FEAT_MAHALANOBIS) || HAS_VIM(h->methods);
  p[n++] = (part){ 8, g ? h->F : 0 };           /* overall mean */
  int ma = HAS(h->methods, SMX_FEAT_MAHALANOBIS);
  p[n++] = (part){ 8, ma ? h->rank * h->F : 0 };   /* whitening */
  p[n++] = (part){ 8, ma ? S * h->rank : 0 };      /* whitened class means */
  int v = HAS_VIM(h->methods);
  p[n++] = (part){ 8, v ? h->F : 0 };               /* u */
  p[n++] = (part){ 8, v ? (h->F - h->D) * h->F : 0 };   /* complement basis */
  p[n++] = (part){ 4, HAS(h->methods, SMX_FEAT_KNN) ? h->N * h->F : 0 };   /* unit bank */
  return n;
}

smx_status smx_feature_model_save(const smx_feature_model *m, const char *path) {
  if (!m || !path || !m->finished) return SMX_E_INVALID_ARG;
  hdr h;
  memset(&h, 0, sizeof h);
  memcpy(h.magic, MAGIC, 8);
  h.version = VERSION;
  h.methods = m->methods;
  h.F = m->F; h.C = m->C; h.H = m->H; h.N = m->N; h.k = m->k; h.D = m->D; h.rank = m->rank;
  h.knn_kind = (uint32_t)m->knn_kind; h.cov = (uint32_t)m->cov;
  h.lists = m->ivf_lists; h.probe = m->ivf_probe;
  h.pct = m->pct; h.alpha = m->alpha; h.thr = m->thr; h.shrink = m->shrink;
  size_t plen = strlen(path);
  char *tmp = malloc(plen + 16);
  if (!tmp) return SMX_E_NOMEM;
  memcpy(tmp, path, plen);
  memcpy(tmp + plen, ".tmp.XXXXXX", 12);
  int fd = mkstemp(tmp);
  if (fd < 0) { free(tmp); return SMX_E_IO; }
  sink s = { fdopen(fd, "wb"), 0xcbf29ce484222325ull, 0 };
  if (!s.f) { close(fd); unlink(tmp); free(tmp); return SMX_E_IO; }
  put(&s, &h, sizeof h);
  const void *arr[] = { m->W, m->b, m->count, m->gmean, m->whiten, m->wmu, m->u, m->ns, m->rows };
  part p[9];
  size_t np = parts_of(&h, p);
  for (size_t i = 0; i < np; i++) put(&s, arr[i], p[i].esize * (size_t)p[i].count);
  uint64_t sum = s.h;
  if (!s.bad && fwrite(&sum, 8, 1, s.f) != 1) s.bad = 1;
  if (fflush(s.f) != 0 || fsync(fileno(s.f)) != 0) s.bad = 1;
  int e = errno;
  if (fclose(s.f) != 0) s.bad = 1;
  if (!s.bad && rename(tmp, path) != 0) s.bad = 1;
  if (s.bad) {
    e = errno ? errno : e;
    unlink(tmp);
    errno = e;
  }
  free(tmp);
  return s.bad ? SMX_E_IO : SMX_OK;
}

static int mul_ok(uint64_t a, uint64_t b, uint64_t *r) {
  if (a && b > UINT64_MAX / a) return 0;
  *r = a * b;
  return 1;
}

/* The header's sizes describe a model create() could have made. */
static int header_ok(const hdr *h, uint64_t file_size, part *p, size_t *np) {
  if (memcmp(h->magic, MAGIC, 8) || h->version != VERSION) return 0;
  if (h->methods & ~(uint32_t)SMX_FEAT_ALL || !h->methods) return 0;
  /* these bounds keep every array's element count below 2^61 (parts_of multiplies without checks) */
  if (h->F == 0 || h->F > (1u << 20) || h->C > (1u << 24) || h->H > (1u << 24) || h->N == 0 ||
      h->N > ((uint64_t)1 << 40) || h->rank > h->F || h->D >= h->F)
    return 0;
  if (HAS(h->methods, SMX_FEAT_MAHALANOBIS) && (h->C == 0 || h->rank == 0 || h->rank > h->F)) return 0;
  if (HAS_VIM(h->methods) && (h->D == 0 || h->D >= h->F)) return 0;
  if ((HAS_VIM(h->methods) || HAS(h->methods, SMX_FEAT_REACT)) && h->H == 0) return 0;
  if (h->C && h->H && h->H != h->C) return 0;
  if (HAS(h->methods, SMX_FEAT_KNN) && (h->k == 0 || h->k > h->N || h->knn_kind > SMX_KNN_IVF)) return 0;
  if (HAS(h->methods, SMX_FEAT_VIM) && !isfinite(h->alpha)) return 0;
  if (HAS(h->methods, SMX_FEAT_REACT) && !isfinite(h->thr)) return 0;
  *np = parts_of(h, p);
  uint64_t total = HEADER + 8;
  for (size_t i = 0; i < *np; i++) {
    uint64_t b;
    if (!mul_ok(p[i].count, p[i].esize, &b) || b > SIZE_MAX || total + b < total) return 0;
    total += b;
  }
  return total == file_size;
}

smx_status smx_feature_model_load(const char *path, int drop_missing, smx_feature_model **out) {
  if (!path || !out) return SMX_E_INVALID_ARG;
  FILE *f = fopen(path, "rb");
  if (!f) return SMX_E_IO;
  struct stat st;
  hdr h;
  part p[9];
  size_t np = 0;
  sink s = { f, 0xcbf29ce484222325ull, 0 };
  smx_feature_model *m = NULL;
  smx_status rc = SMX_E_PARSE;
  if (fstat(fileno(f), &st) != 0) { rc = SMX_E_IO; goto fail; }
  if (get(&s, &h, sizeof h) || !header_ok(&h, (uint64_t)st.st_size, p, &np)) goto fail;
  if (HAS(h.methods, SMX_FEAT_KNN) && !smx_feat_have_faiss() && !drop_missing) { rc = SMX_E_NOT_BUILT; goto fail; }
  m = calloc(1, sizeof *m);
  if (!m) { rc = SMX_E_NOMEM; goto fail; }
  m->F = h.F; m->C = h.C; m->S = h.C ? h.C : 1; m->H = h.H; m->N = h.N; m->k = h.k; m->D = h.D; m->rank = h.rank;
  m->knn_kind = (smx_knn_index)h.knn_kind; m->cov = (smx_cov_policy)h.cov;
  m->ivf_lists = h.lists; m->ivf_probe = h.probe;
  m->pct = h.pct; m->alpha = h.alpha; m->thr = h.thr; m->shrink = h.shrink;
  m->methods = h.methods;
  void **arr[] = { (void **)&m->W, (void **)&m->b, (void **)&m->count, (void **)&m->gmean, (void **)&m->whiten,
                   (void **)&m->wmu, (void **)&m->u, (void **)&m->ns, (void **)&m->nbank };
  for (size_t i = 0; i < np; i++) {
    size_t bytes = p[i].esize * (size_t)p[i].count;
    if (!bytes) continue;
    *arr[i] = malloc(bytes);
    if (!*arr[i]) { rc = SMX_E_NOMEM; goto fail; }
    if (get(&s, *arr[i], bytes)) goto fail;
  }
  uint64_t sum;
  if (fread(&sum, 8, 1, f) != 1 || sum != s.h) goto fail;
  /* every value finite, as create and fit require of theirs (a NaN in the bank would reach FAISS's k-means) */
  for (size_t i = 0; i < np; i++) {
    if (i == 2) continue;   /* the counts are integers */
    size_t cnt = (size_t)p[i].count;
    for (size_t e = 0; e < cnt; e++) {
      double v = p[i].esize == 4 ? (double)((const float *)*arr[i])[e] : ((const double *)*arr[i])[e];
      if (!isfinite(v)) goto fail;
    }
  }
  fclose(f);
  f = NULL;
  if (HAS(m->methods, SMX_FEAT_KNN)) {
    if (!smx_feat_have_faiss()) {
      m->methods &= ~SMX_FEAT_BIT(SMX_FEAT_KNN);
      free(m->nbank);
      m->nbank = NULL;
    } else if ((rc = smx_feat_knn_build(m->nbank, (size_t)m->N, m->F, m->knn_kind, m->ivf_lists, m->ivf_probe,
                                        &m->knn))) {
      goto fail;
    } else {
      m->rows = smx_feat_knn_adopt(m->knn, &m->nbank);
    }
  }
  m->finished = 1;
  *out = m;
  return SMX_OK;
fail:
  if (f) fclose(f);
  smx_feature_model_destroy(m);
  return rc;
}
