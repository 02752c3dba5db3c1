/* Exact NashConv in C: labkit/_evaluate_kernels.py's `best_response_values`, line for line, plus
   the on-policy values and the sum of the gains, as one Python call.

   A Kuhn poker evaluation is a few hundred floating-point operations; what costs is getting
   there (numba's argument handling, a numpy call for the on-policy values, Python in between).
   This is a CPython extension module so that one call reads the policy array through the buffer
   protocol and does everything else in C. The arithmetic is the numba kernel's, in the same order,
   built with -ffp-contract=off (no fused multiply-add); the on-policy values sum_z pi(z) u_i(z) are
   computed by numpy's own BLAS routine (cblas_dgemv, found by `labkit._nash_conv_native`) with the
   arguments numpy's `dot` passes it, so NashConv is bit for bit numpy's (tests/test_kernels.py). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* the parts of the packed index array (labkit._nash_conv_native.PARTS), then its floats */
#define NUM_PARTS 13
#define PART(index, k) ((index) + (index)[2 + (k)])
#define PART_END(index, k) ((index) + (index)[3 + (k)])

/* cblas_dgemv of a 64-bit-integer OpenBLAS (numpy's scipy-openblas64) */
typedef void (*dgemv_function)(int order, int trans, int64_t m, int64_t n, double alpha, const double *a,
                               int64_t lda, const double *x, int64_t incx, double beta, double *y, int64_t incy);
enum { ROW_MAJOR = 101, NO_TRANS = 111 };

typedef struct {
    Py_buffer index, work, returns;  /* held for the plan's life */
    Py_ssize_t I, A;                 /* the policy's shape */
    dgemv_function gemv;
} Plan;

static const char *PLAN_NAME = "labkit nash_conv plan";

static void plan_free(PyObject *capsule)
{
    Plan *plan = PyCapsule_GetPointer(capsule, PLAN_NAME);
    if (plan == NULL)
        return;
    PyBuffer_Release(&plan->index);
    PyBuffer_Release(&plan->work);
    PyBuffer_Release(&plan->returns);
    PyMem_Free(plan);
}

/* whether a buffer holds doubles (format "d"), or 8-byte integers ("q", or "l" where long has 8 bytes) */
static int holds(const Py_buffer *view, char kind)
{
    const char *f = view->format;
    if (f == NULL || view->itemsize != 8)
        return 0;
    if (kind == 'd')
        return strcmp(f, "d") == 0;
    return strcmp(f, "q") == 0 || (strcmp(f, "l") == 0 && sizeof(long) == 8);
}

/* a C-contiguous buffer of `count` items (any number if count < 0) of `kind` ('d' or 'q'), or an exception */
static int read_buffer(PyObject *object, Py_buffer *view, char kind, Py_ssize_t count, int writable,
                       const char *name)
{
    if (PyObject_GetBuffer(object, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0)) < 0)
        return -1;
    if (!holds(view, kind) || (count >= 0 && view->len != count * 8)) {
        PyErr_Format(PyExc_ValueError, "%s must be a C-contiguous array of %zd %s", name, count,
                     kind == 'd' ? "float64 numbers" : "int64 numbers");
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* plan(index, work, returns, I, A, gemv_address): the game's arrays, held until the plan is freed */
static PyObject *make_plan(PyObject *self, PyObject *args)
{
    PyObject *index, *work, *returns;
    Py_ssize_t I, A;
    unsigned long long gemv;
    if (!PyArg_ParseTuple(args, "OOOnnK", &index, &work, &returns, &I, &A, &gemv))
        return NULL;
    Plan *plan = PyMem_Calloc(1, sizeof(Plan));
    if (plan == NULL)
        return PyErr_NoMemory();
    if (read_buffer(index, &plan->index, 'q', -1, 0, "index") < 0)
        goto fail_index;
    const int64_t *ix = plan->index.buf;
    Py_ssize_t header = 2 + NUM_PARTS + 1;
    if (plan->index.len < header * 8 || I < 0 || A < 0 || ix[2 + NUM_PARTS] > plan->index.len / 8) {
        PyErr_SetString(PyExc_ValueError, "index must be a packed NashConv index (labkit._nash_conv_native.pack)");
        goto fail_work;
    }
    int64_t n = ix[0], Z = ix[1];
    /* out[:Z] the reach products, then n best-response values, I own reaches, two sequence tables
       of I A + 1, and n on-policy values */
    if (read_buffer(work, &plan->work, 'd', Z + n + I + 2 * (I * A + 1) + n, 1, "work") < 0)
        goto fail_work;
    if (read_buffer(returns, &plan->returns, 'd', n * Z, 0, "returns") < 0)
        goto fail_returns;
    plan->I = I;
    plan->A = A;
    plan->gemv = (dgemv_function)(uintptr_t)gemv;
    PyObject *capsule = PyCapsule_New(plan, PLAN_NAME, plan_free);
    if (capsule != NULL)
        return capsule;
    PyBuffer_Release(&plan->returns);
fail_returns:
    PyBuffer_Release(&plan->work);
fail_work:
    PyBuffer_Release(&plan->index);
fail_index:
    PyMem_Free(plan);
    return NULL;
}

/* NashConv of probs (I, A) on the plan's game; the order of every operation is the numba kernel's */
static double evaluate(const double *probs, const Plan *plan)
{
    const int64_t *index = plan->index.buf;
    const int64_t n = index[0], Z = index[1];
    const long I = plan->I, A = plan->A, S = I * A + 1;
    const int64_t *own_infoset = PART(index, 0), *own_parent_infoset = PART(index, 1),
                  *own_parent_seq = PART(index, 2), *last_seq = PART(index, 3), *player_levels = PART(index, 4),
                  *levels = PART(index, 5), *slots = PART(index, 6), *infoset_start = PART(index, 7),
                  *infoset_parent = PART(index, 8), *player_runs = PART(index, 9), *run_slot = PART(index, 10),
                  *run_end = PART(index, 11), *term_others = PART(index, 12);
    const int64_t num_own = PART_END(index, 0) - own_infoset;
    const int64_t num_runs = PART_END(index, 11) - run_end;
    const int64_t E = num_runs ? run_end[num_runs - 1] : 0;
    const double *floats = (const double *)(index + index[2 + NUM_PARTS]);
    const double *chance = floats, *term_chance = floats + Z, *term_payoff = floats + Z + E;
    double *out = plan->work.buf;
    double *prod = out, *values = out + Z, *reach = out + Z + n, *x = reach + I, *total = x + S, *on = total + S;
    /* 1. own reach of every infoset, parents first; the sequences' weights */
    for (long i = 0; i < I; i++)
        reach[i] = 1.0;
    for (int64_t k = 0; k < num_own; k++) {
        int64_t parent = own_parent_infoset[k];
        reach[own_infoset[k]] = reach[parent] * probs[own_parent_seq[k]];
    }
    x[0] = 1.0;
    for (long i = 0; i < I; i++)
        for (long a = 0; a < A; a++)
            x[1 + i * A + a] = reach[i] * probs[i * A + a];
    /* 2. pi(z) = x_0 x_1 ... x_{n-1} pi_c, left to right */
    for (int64_t z = 0; z < Z; z++) {
        double w = x[last_seq[z]];
        for (int64_t p = 1; p < n; p++)
            w *= x[last_seq[p * Z + z]];
        prod[z] = w * chance[z];
    }
    /* 3. best responses */
    for (long s = 0; s < S; s++)
        total[s] = 0.0;
    const int64_t W = n - 1;
    for (int64_t p = 0; p < n; p++) {
        int64_t start = player_runs[p] > 0 ? run_end[player_runs[p] - 1] : 0;
        for (int64_t g = player_runs[p]; g < player_runs[p + 1]; g++) {
            double acc = 0.0;
            for (int64_t e = start; e < run_end[g]; e++) {
                double w;
                if (W == 0) {
                    w = term_chance[e];
                } else {
                    w = x[term_others[e * W]];
                    for (int64_t j = 1; j < W; j++)
                        w *= x[term_others[e * W + j]];
                    w *= term_chance[e];
                }
                acc += w * term_payoff[e];
            }
            total[run_slot[g]] = acc;
            start = run_end[g];
        }
        for (int64_t level = player_levels[p]; level < player_levels[p + 1]; level++) {
            for (int64_t k = levels[2 * level]; k < levels[2 * level + 1]; k++) {
                double best = total[slots[infoset_start[k]]];
                for (int64_t s = infoset_start[k] + 1; s < infoset_start[k + 1]; s++) {
                    double y = total[slots[s]];
                    if (!(best >= y || best != best))   /* np.maximum: keeps the first of equals, NaN wins */
                        best = y;
                }
                total[infoset_parent[k]] += best;
            }
        }
        values[p] = total[0];
        for (int64_t g = player_runs[p]; g < player_runs[p + 1]; g++)
            total[run_slot[g]] = 0.0;
        for (int64_t level = player_levels[p]; level < player_levels[p + 1]; level++)
            for (int64_t k = levels[2 * level]; k < levels[2 * level + 1]; k++)
                total[infoset_parent[k]] = 0.0;
    }
    /* 4. on-policy values: numpy's `returns.dot(prod)` for an (n, Z) C-contiguous matrix, n, Z > 1
       (numpy clears the output, then calls gemv row-major, no transpose, lda = Z) */
    memset(on, 0, n * sizeof(double));
    plan->gemv(ROW_MAJOR, NO_TRANS, n, Z, 1.0, plan->returns.buf, Z, prod, 1, 0.0, on, 1);
    double nash_conv = 0.0;
    for (int64_t p = 0; p < n; p++)
        nash_conv += values[p] - on[p];
    return nash_conv;
}

/* nash_conv(probs, plan): a float, or None if probs is not a C-contiguous float64 (I, A) array
   (the caller then takes its general path) */
static PyObject *nash_conv(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "nash_conv(probs, plan) takes two arguments");
        return NULL;
    }
    const Plan *plan = PyCapsule_GetPointer(args[1], PLAN_NAME);
    if (plan == NULL)
        return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    int readable = view.ndim == 2 && view.shape[0] == plan->I && view.shape[1] == plan->A && holds(&view, 'd');
    double value = readable ? evaluate(view.buf, plan) : 0.0;
    PyBuffer_Release(&view);
    if (!readable)
        Py_RETURN_NONE;
    return PyFloat_FromDouble(value);
}

/* gemv(address, matrix, vector): the (m,) product by the BLAS routine at `address`, called as
   `evaluate` calls it (for the check that it is numpy's own, `labkit._nash_conv_native`) */
static PyObject *gemv(PyObject *self, PyObject *args)
{
    unsigned long long address;
    PyObject *matrix, *vector, *result;
    Py_ssize_t m, n;
    if (!PyArg_ParseTuple(args, "KOOnn", &address, &matrix, &vector, &m, &n))
        return NULL;
    Py_buffer a, x;
    if (read_buffer(matrix, &a, 'd', m * n, 0, "matrix") < 0)
        return NULL;
    if (read_buffer(vector, &x, 'd', n, 0, "vector") < 0) {
        PyBuffer_Release(&a);
        return NULL;
    }
    double *y = PyMem_Calloc(m > 0 ? m : 1, sizeof(double));
    if (y == NULL) {
        result = PyErr_NoMemory();
    } else {
        ((dgemv_function)(uintptr_t)address)(ROW_MAJOR, NO_TRANS, m, n, 1.0, a.buf, n, x.buf, 1, 0.0, y, 1);
        result = PyList_New(m);
        for (Py_ssize_t i = 0; result != NULL && i < m; i++)
            PyList_SET_ITEM(result, i, PyFloat_FromDouble(y[i]));
        PyMem_Free(y);
    }
    PyBuffer_Release(&a);
    PyBuffer_Release(&x);
    return result;
}

static PyMethodDef methods[] = {
    {"plan", make_plan, METH_VARARGS, "plan(index, work, returns, I, A, gemv_address) -> capsule"},
    {"nash_conv", (PyCFunction)(void (*)(void))nash_conv, METH_FASTCALL,
     "nash_conv(probs, plan) -> float, or None for an array it cannot read"},
    {"gemv", gemv, METH_VARARGS, "gemv(address, matrix, vector, m, n) -> list of m floats"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "labkit_nash_conv", NULL, -1, methods};

PyMODINIT_FUNC PyInit_labkit_nash_conv(void)
{
    return PyModule_Create(&module);
}
