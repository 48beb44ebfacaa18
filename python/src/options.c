/* Option parsing for the Python module: see options.h. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "options.h"

#include <sched.h>
#include <unistd.h>

#include <limits.h>
#include <math.h>
#include <string.h>

static int parse_temperature(const char *fn, PyObject *o, double *t) {
  *t = 1.0;
  if (!o) return 0;
  if (PyBool_Check(o) || !(PyFloat_Check(o) || PyLong_Check(o) || PyNumber_Check(o))) {
    PyErr_Format(PyExc_TypeError, "%s: temperature must be a real number, not %.100s", fn, Py_TYPE(o)->tp_name);
    return -1;
  }
  double v = PyFloat_AsDouble(o);
  if (v == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "%s: temperature must be a real number, not %.100s", fn, Py_TYPE(o)->tp_name);
    return -1;
  }
  if (!(v > 0.0) || isinf(v)) {
    PyErr_Format(PyExc_ValueError, "%s: temperature must be positive and finite, got %R", fn, o);
    return -1;
  }
  *t = v;
  return 0;
}

/* A str argument that must be one of `names` (NULL-terminated); *index gets its position. */
static int parse_choice(const char *fn, const char *what, PyObject *o, const char *const *names, const char *list,
                        int *index) {
  *index = 0;
  if (!o) return 0;
  if (!PyUnicode_Check(o)) {
    PyErr_Format(PyExc_TypeError, "%s: %s must be a str (one of %s), not %.100s", fn, what, list, Py_TYPE(o)->tp_name);
    return -1;
  }
  const char *s = PyUnicode_AsUTF8(o);
  if (!s) return -1;
  for (int i = 0; names[i]; i++) {
    if (strcmp(s, names[i]) == 0) {
      *index = i;
      return 0;
    }
  }
  PyErr_Format(PyExc_ValueError, "%s: %s must be one of %s, got %R", fn, what, list, o);
  return -1;
}

int smx_py_parse_int(const char *fn, const char *what, PyObject *o, long long *v, int *overflow) {
  if (PyBool_Check(o) || !PyIndex_Check(o)) {
    PyErr_Format(PyExc_TypeError, "%s: %s must be an int, not %.100s", fn, what, Py_TYPE(o)->tp_name);
    return -1;
  }
  PyObject *i = PyNumber_Index(o);
  if (!i) return -1;
  *overflow = 0;
  *v = PyLong_AsLongLongAndOverflow(i, overflow);
  Py_DECREF(i);
  if (*v == -1 && PyErr_Occurred()) return -1;
  if (*overflow) *v = *overflow > 0 ? LLONG_MAX : LLONG_MIN;
  return 0;
}

/* An int argument, saturated to long long. Returns 0 with *v set, or -1. */
static int parse_int(const char *fn, const char *what, PyObject *o, long long *v) {
  int overflow;
  return smx_py_parse_int(fn, what, o, v, &overflow);
}

int smx_py_parse_options(const char *fn, PyObject *temperature, PyObject *algo, PyObject *threads,
                         PyObject *masked_row, smx_options *opt) {
  static const char *const algos[] = {"auto", "three-pass", "two-pass", "online", NULL};
  static const smx_algo algo_values[] = {SMX_ALGO_AUTO, SMX_ALGO_THREE_PASS, SMX_ALGO_TWO_PASS, SMX_ALGO_ONLINE};
  static const char *const masks[] = {"zero", "nan", NULL};
  memset(opt, 0, sizeof *opt);
  int a, m;
  if (parse_temperature(fn, temperature, &opt->temperature) < 0) return -1;
  if (parse_choice(fn, "algo", algo, algos, "'auto', 'three-pass', 'two-pass', 'online'", &a) < 0) return -1;
  if (parse_choice(fn, "masked_row", masked_row, masks, "'zero', 'nan'", &m) < 0) return -1;
  opt->algo = algo_values[a];
  opt->flags = m == 1 ? SMX_FLAG_MASKED_ROW_NAN : 0;
  return smx_py_parse_threads(fn, threads, &opt->threads);
  return 0;
}

int smx_py_threads(long long t) {
  if (t > 0) return t > INT_MAX ? INT_MAX : (int)t;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 && n < INT_MAX ? (int)n : 1;
}

int smx_py_parse_threads(const char *fn, PyObject *o, int *threads) {
  long long t = 0;
  if (o && o != Py_None && parse_int(fn, "threads", o, &t) < 0) return -1;
  if (t < 0 || t > INT_MAX) {
    PyErr_Format(PyExc_ValueError, "%s: threads must be >= 0 and fit an int (0: every core this process may "
                 "use; 1: the calling thread only), got %R", fn, o);
    return -1;
  }
  *threads = smx_py_threads(t);
  return 0;
}

int smx_py_parse_axis(const char *fn, PyObject *axis, int ndim, int *out) {
  long long a = -1;
  if (axis && (PyBool_Check(axis) || !PyIndex_Check(axis))) {
    PyErr_Format(PyExc_TypeError, "%s: axis must be an int or None, not %.100s", fn, Py_TYPE(axis)->tp_name);
    return -1;
  }
  if (axis && parse_int(fn, "axis", axis, &a) < 0) return -1;
  if (a < -(long long)ndim || a >= ndim) {
    PyErr_Format(PyExc_ValueError, "%s: axis %lld is out of range for an array of %d dimension%s", fn, a, ndim,
                 ndim == 1 ? "" : "s");
    return -1;
  }
  *out = (int)(a < 0 ? a + ndim : a);
  return 0;
}

PyObject *smx_py_raise_status(const char *fn, smx_status s) {
  PyObject *type = s == SMX_E_INVALID_ARG ? PyExc_ValueError
                   : s == SMX_E_NOMEM     ? PyExc_MemoryError
                                          : PyExc_RuntimeError;
  PyErr_Format(type, "%s: %s (smx status %d)", fn, smx_status_string(s), (int)s);
  return NULL;
}
