/*
 * Keyword arguments -> smx_options, with the checks and messages of the
 * Python module (TypeError for a wrong type, ValueError for a wrong value).
 */
#ifndef SMX_PY_OPTIONS_H
#define SMX_PY_OPTIONS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "smx/smx.h"

/* Fills *opt from temperature, algo, threads and masked_row (any may be NULL:
 * the default). Returns 0, or -1 with an exception set; fn names the caller. */
int smx_py_parse_options(const char *fn, PyObject *temperature, PyObject *algo, PyObject *threads,
                         PyObject *masked_row, smx_options *opt);

/* An int argument (not bool, not float) into *v, saturated, *overflow nonzero where it was (PyLong's sign).
 * Returns 0, or -1 with a TypeError naming fn and what. */
int smx_py_parse_int(const char *fn, const char *what, PyObject *o, long long *v, int *overflow);

/* The module's one threads rule: 0 (the default) is every core this process may run on (its CPU
 * affinity), as torch's default; 1 the calling thread only; n > 1 up to n threads. Results never depend
 * on it. smx_py_threads resolves a count (t < 0 is treated as 0); smx_py_parse_threads reads the keyword
 * (NULL or None: the default), TypeError / ValueError naming fn. */
int smx_py_threads(long long t);
int smx_py_parse_threads(const char *fn, PyObject *o, int *threads);

/* axis (NULL: -1; None is handled by the caller) checked against ndim and
 * normalised to [0, ndim). */
int smx_py_parse_axis(const char *fn, PyObject *axis, int ndim, int *out);

/* Raises the exception for a library status: ValueError (invalid argument),
 * MemoryError, else RuntimeError, with smx_status_string's text. Returns NULL. */
PyObject *smx_py_raise_status(const char *fn, smx_status s);

#endif
