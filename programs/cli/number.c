/* Number options of the smx command: one reading for every command (number.h). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "cli/message.h"
#include "cli/number.h"

int smx_cli_parse_number(const char *v, double *out) {
  if (!v || !*v) return 0;
  char *end;
  errno = 0;
  double d = strtod(v, &end);
  if (*end || !isfinite(d)) return 0;
  /* strtod reports ERANGE for a result in the subnormal range too; such a
   * number is still exactly what was asked for, to the nearest double. Only
   * an underflow to zero of a nonzero literal is refused. */
  if (errno == ERANGE && d == 0.0) return 0;
  *out = d;
  return 1;
}

int smx_cli_parse_temperature(const char *v, double *out) {
  double t;
  if (!smx_cli_parse_number(v, &t) || !(t > 0.0)) return 0;
  *out = t;
  return 1;
}

int smx_cli_temperature_error(const char *opt, const char *v) {
  return smx_cli_usage_error("%s must be a positive finite number, not '%s'", opt, v ? v : "");
}

int smx_cli_parse_u64(const char *v, uint64_t lo, uint64_t hi, uint64_t *out) {
  if (!v || !*v || *v == '-' || *v == '+') return 0;
  char *end;
  errno = 0;
  unsigned long long n = strtoull(v, &end, 10);
  if (*end || errno || n < lo || n > hi) return 0;
  *out = n;
  return 1;
}

int smx_cli_parse_double(const char *v, double lo, double hi, double *out) {
  double d;
  if (!smx_cli_parse_number(v, &d) || !(d >= lo && d <= hi)) return 0;
  *out = d;
  return 1;
}
