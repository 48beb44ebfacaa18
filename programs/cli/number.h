/*
 * Number options, read the same way by every command: whole strings only,
 * finite values only, and one message for a refused temperature.
 */
#ifndef SMX_PROGRAMS_CLI_NUMBER_H
#define SMX_PROGRAMS_CLI_NUMBER_H

#include <stdint.h>

/* A whole-string finite number (subnormals included: strtod's ERANGE for them
 * is not an error); 0 if v is not one. */
int smx_cli_parse_number(const char *v, double *out);
/* A finite number in [lo, hi]; 0 if v is not one. */
int smx_cli_parse_double(const char *v, double lo, double hi, double *out);
/* A whole number in [lo, hi], without sign; 0 if v is not one. */
int smx_cli_parse_u64(const char *v, uint64_t lo, uint64_t hi, uint64_t *out);
/* The temperature rule of every command: any positive finite number. */
int smx_cli_parse_temperature(const char *v, double *out);
/* The one message for a refused temperature option; returns SMX_CLI_EXIT_USAGE. */
int smx_cli_temperature_error(const char *opt, const char *v);

#endif
