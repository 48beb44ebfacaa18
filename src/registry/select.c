/*
 * Picks the registry configuration once: the best level the CPU and OS
 * support (cpuid + xgetbv; NEON on AArch64), capped by
 * SMX_MAX_ISA=scalar|avx2|avx512|avx512bf16|neon read at first use, or later
 * by smx_set_max_isa(). The enum's numbers are stable ABI, not an order
 * (NEON = 3 sits below AVX512BF16 = 4): levels are compared by rank().
 * The configuration pointer is atomic, so a cap set while
 * other threads compute is safe.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry/registry.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

static unsigned long long xgetbv0(void) {
  unsigned eax, edx;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return ((unsigned long long)edx << 32) | eax;
}

static smx_isa_level detect_cpu(void) {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return SMX_ISA_SCALAR;
  int osxsave = (c >> 27) & 1, fma = (c >> 12) & 1, avx = (c >> 28) & 1;
  if (!osxsave || !avx) return SMX_ISA_SCALAR;
  unsigned long long xcr0 = xgetbv0();
  if ((xcr0 & 0x6) != 0x6) return SMX_ISA_SCALAR;                  /* XMM and YMM state */
  if (__get_cpuid_max(0, NULL) < 7) return SMX_ISA_SCALAR;
  int f16c = (c >> 29) & 1;   /* leaf 1 ecx, read before leaf 7 overwrites c */
  __cpuid_count(7, 0, a, b, c, d);
  int avx2 = (b >> 5) & 1;
  int avx512f = (b >> 16) & 1, avx512dq = (b >> 17) & 1, avx512bw = (b >> 30) & 1, avx512vl = (b >> 31) & 1;
  smx_isa_level best = SMX_ISA_SCALAR;
  if (avx2 && fma && f16c) best = SMX_ISA_AVX2;
  if (best == SMX_ISA_AVX2 && avx512f && avx512dq && avx512bw && avx512vl && (xcr0 & 0xe6) == 0xe6)
    best = SMX_ISA_AVX512;                                         /* opmask and ZMM state */
  /* AVX512_BF16 (vdpbf16ps): leaf 7 subleaf 1, EAX bit 5; its state is the ZMM state checked above */
  if (best == SMX_ISA_AVX512) {
    __cpuid_count(7, 0, a, b, c, d);
    unsigned max_sub = a;
    if (max_sub >= 1) {
      __cpuid_count(7, 1, a, b, c, d);
      if ((a >> 5) & 1) best = SMX_ISA_AVX512BF16;
    }
  }
  return best;
}
#elif defined(SMX_HAVE_NEON_KERNELS)
/* Advanced SIMD, FMA included, is part of every AArch64 CPU */
static smx_isa_level detect_cpu(void) { return SMX_ISA_NEON; }
#else
static smx_isa_level detect_cpu(void) { return SMX_ISA_SCALAR; }
#endif

static const smx_registry *table_for(smx_isa_level level) {
#if defined(SMX_HAVE_NEON_KERNELS)
  /* one vector level on AArch64: any cap above scalar keeps NEON */
  return level == SMX_ISA_SCALAR ? &smx_registry_scalar : &smx_registry_neon;
#endif
  switch (level) {
#if defined(SMX_HAVE_X86_KERNELS)
    case SMX_ISA_AVX512BF16: return &smx_registry_avx512bf16;
    case SMX_ISA_AVX512: return &smx_registry_avx512;
    case SMX_ISA_AVX2: return &smx_registry_avx2;
#endif
    default: return &smx_registry_scalar;
  }
}

/* The order of the levels on this architecture: on x86 NEON is no cap (it ranks with the top, as its
 * number 3 did above AVX512 before AVX512BF16 came); on AArch64 every level above scalar is NEON. */
static int rank(smx_isa_level l) {
  switch (l) {
    case SMX_ISA_SCALAR: return 0;
    case SMX_ISA_AVX2: return 1;
    case SMX_ISA_AVX512: return 2;
    case SMX_ISA_AVX512BF16: return 3;
    default: return 4;   /* NEON */
  }
}
static smx_isa_level lower(smx_isa_level a, smx_isa_level b) { return rank(a) <= rank(b) ? a : b; }

static smx_isa_level cpu_level = SMX_ISA_SCALAR;
static _Atomic(const smx_registry *) current = NULL;

static smx_isa_level env_cap(void) {
  const char *e = getenv("SMX_MAX_ISA");
  if (!e || !*e) return SMX_ISA_NEON;   /* no cap (rank() puts it above every x86 level) */
  if (!strcmp(e, "scalar")) return SMX_ISA_SCALAR;
  if (!strcmp(e, "avx2")) return SMX_ISA_AVX2;
  if (!strcmp(e, "avx512")) return SMX_ISA_AVX512;
  if (!strcmp(e, "avx512bf16")) return SMX_ISA_AVX512BF16;
  if (!strcmp(e, "neon")) return SMX_ISA_NEON;
  /* an unknown value must not silently select the fastest path */
  fprintf(stderr, "smx: SMX_MAX_ISA=%s is not scalar, avx2, avx512, avx512bf16 or neon; using scalar\n", e);
  return SMX_ISA_SCALAR;
}

static void init_once(void) {
  cpu_level = detect_cpu();
#if !defined(SMX_HAVE_X86_KERNELS) && !defined(SMX_HAVE_NEON_KERNELS)
  cpu_level = SMX_ISA_SCALAR;
#endif
  smx_isa_level cap = env_cap();
  const smx_registry *expected = NULL;
  atomic_compare_exchange_strong(&current, &expected, table_for(lower(cap, cpu_level)));
}

#include <pthread.h>
static pthread_once_t once = PTHREAD_ONCE_INIT;

static const smx_registry *current_set(void) {
  const smx_registry *k = atomic_load_explicit(&current, memory_order_acquire);
  if (k) return k;
  pthread_once(&once, init_once);
  return atomic_load_explicit(&current, memory_order_acquire);
}

const smx_registry *smx_registry_current(void) { return current_set(); }

smx_isa_level smx_cpu_isa(void) {
  pthread_once(&once, init_once);
  return cpu_level;
}

smx_status smx_set_max_isa(smx_isa_level level) {
  if (level != SMX_ISA_SCALAR && level != SMX_ISA_AVX2 && level != SMX_ISA_AVX512 && level != SMX_ISA_NEON &&
      level != SMX_ISA_AVX512BF16)
    return SMX_E_INVALID_ARG;
  pthread_once(&once, init_once);
  atomic_store_explicit(&current, table_for(lower(level, cpu_level)), memory_order_release);
  return SMX_OK;
}

const char *smx_isa(void) { return current_set()->isa; }
