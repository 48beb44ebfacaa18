/*
 * Positional size arguments of the benchmarks: a whole positive number, or
 * the default when absent. Anything else (--help, a typo) prints the usage
 * and exits 2, rather than running a shape of 0 and printing ratios of
 * nothing.
 */
#ifndef SMX_BENCH_ARGS_H
#define SMX_BENCH_ARGS_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

static inline size_t bench_size_arg(int argc, char **argv, int i, size_t def, const char *usage) {
  if (i >= argc) return def;
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(argv[i], &end, 10);
  if (errno || end == argv[i] || *end || v == 0 || argv[i][0] == '-') {
    fprintf(stderr, "usage: %s %s\n(%s: expected a positive whole number)\n", argv[0], usage, argv[i]);
    exit(2);
  }
  return (size_t)v;
}

#endif
