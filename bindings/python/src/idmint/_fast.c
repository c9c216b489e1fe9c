/* SPDX-License-Identifier: Apache-2.0 */
/*
 * idmint._fast: the minting hot path of the Python binding, and the lock that
 * orders every call on a handle against its close and reopen. A ctypes call
 * costs about 450 ns; idmint_next() through this costs about 60 ns. The
 * library's functions arrive as addresses from ctypes, so nothing here links
 * libidmint or includes its header. Loading, errors and structs stay in Python.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <string.h>

typedef int (*next_fn)(void *m, uint64_t *id);
typedef int (*next_n_fn)(void *m, uint64_t *ids, size_t n);
typedef const char *(*errmsg_fn)(void);

typedef struct {
    PyObject ob_base; /* what PyObject_HEAD declares */
    void *handle;     /* the idmint handle; NULL once closed; changed under lock */
    next_fn next;
    next_n_fn next_n;
    errmsg_fn errmsg;
    PyThread_type_lock lock; /* held by every library call on handle */
} Core;

/*
 * Take the lock from a thread that holds the GIL. Waiting with the GIL held
 * would deadlock against a minting thread that holds the lock and wants the
 * GIL back, so a wait lets the GIL go.
 */
static void lock_take(Core *c)
{
    PyThreadState *ts;

    if (PyThread_acquire_lock(c->lock, NOWAIT_LOCK))
        return;
    ts = PyEval_SaveThread();
    PyThread_acquire_lock(c->lock, WAIT_LOCK);
    PyEval_RestoreThread(ts);
}

/*
 * After a failed call: hand the code, this thread's detail and the handle
 * the call used to recover(), which reopens (then we retry) or raises. The
 * detail is read first, since the next idmint call on this thread would
 * overwrite it. Returns 0 to retry, -1 with an exception set.
 */
static int recover(Core *c, PyObject *cb, int rc, void *used)
{
    const char *msg = c->errmsg();
    PyObject *detail = PyUnicode_DecodeUTF8(msg, (Py_ssize_t)strlen(msg), "replace");
    PyObject *res;

    if (detail == NULL)
        return -1;
    res = PyObject_CallFunction(cb, "iNK", rc, detail, (unsigned long long)(uintptr_t)used);
    if (res == NULL)
        return -1;
    Py_DECREF(res);
    return 0;
}

static PyObject *core_next(Core *c, PyObject *cb)
{
    for (;;) {
        uint64_t id = 0;
        void *used;
        int rc;
        /* The GIL goes first and the lock is taken without it, so a call
         * that blocks (a range refill waits up to deadline_ms) holds up
         * only this handle, never the interpreter. */
        PyThreadState *ts = PyEval_SaveThread();

        PyThread_acquire_lock(c->lock, WAIT_LOCK);
        used = c->handle;
        rc = c->next(used, &id);
        PyThread_release_lock(c->lock);
        PyEval_RestoreThread(ts);
        if (rc == 0)
            return PyLong_FromUnsignedLongLong(id);
        if (recover(c, cb, rc, used) != 0)
            return NULL;
    }
}

static PyObject *core_fill(Core *c, PyObject *const *args, Py_ssize_t nargs)
{
    uint64_t *ids;
    size_t n;

    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "fill(address, count, recover)");
        return NULL;
    }
    ids = PyLong_AsVoidPtr(args[0]);
    if (ids == NULL && PyErr_Occurred())
        return NULL;
    n = PyLong_AsSize_t(args[1]);
    if (n == (size_t)-1 && PyErr_Occurred())
        return NULL;
    for (;;) {
        void *used;
        int rc;
        PyThreadState *ts = PyEval_SaveThread();

        PyThread_acquire_lock(c->lock, WAIT_LOCK);
        used = c->handle;
        rc = c->next_n(used, ids, n);
        PyThread_release_lock(c->lock);
        PyEval_RestoreThread(ts);
        if (rc == 0)
            Py_RETURN_NONE;
        if (recover(c, args[2], rc, used) != 0)
            return NULL;
    }
}

static PyObject *core_enter(Core *c, PyObject *unused)
{
    (void)unused;
    lock_take(c);
    Py_INCREF(c);
    return (PyObject *)c;
}

static PyObject *core_exit(Core *c, PyObject *const *args, Py_ssize_t nargs)
{
    (void)args;
    (void)nargs;
    PyThread_release_lock(c->lock);
    Py_RETURN_NONE;
}

static PyObject *core_after_fork(Core *c, PyObject *unused)
{
    /* Another thread may have held the lock at fork(); in the child that
     * thread is gone and the lock would stay held. The old one is left
     * as it is: freeing a lock in an unknown state is not safe. */
    PyThread_type_lock fresh = PyThread_allocate_lock();

    (void)unused;
    if (fresh == NULL)
        return PyErr_NoMemory();
    c->lock = fresh;
    Py_RETURN_NONE;
}

static PyObject *core_get_handle(Core *c, void *closure)
{
    (void)closure;
    if (c->handle == NULL)
        Py_RETURN_NONE;
    return PyLong_FromVoidPtr(c->handle);
}

/* Set only by a thread holding the lock (the Python side's `with core:`). */
static int core_set_handle(Core *c, PyObject *value, void *closure)
{
    void *h = NULL;

    (void)closure;
    if (value == NULL) {
        PyErr_SetString(PyExc_AttributeError, "handle cannot be deleted");
        return -1;
    }
    if (value != Py_None) {
        h = PyLong_AsVoidPtr(value);
        if (h == NULL && PyErr_Occurred())
            return -1;
    }
    c->handle = h;
    return 0;
}

static int core_init(Core *c, PyObject *args, PyObject *kwds)
{
    unsigned long long next, next_n, errmsg;

    if (kwds != NULL && PyDict_GET_SIZE(kwds) != 0) {
        PyErr_SetString(PyExc_TypeError, "Core() takes no keyword arguments");
        return -1;
    }
    if (!PyArg_ParseTuple(args, "KKK", &next, &next_n, &errmsg))
        return -1;
    if (next == 0 || next_n == 0 || errmsg == 0) {
        PyErr_SetString(PyExc_ValueError, "Core() needs three function addresses");
        return -1;
    }
    if (c->lock == NULL && (c->lock = PyThread_allocate_lock()) == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    /* ISO C has no cast from an integer to a function pointer but through
     * uintptr_t; POSIX guarantees they round-trip (dlsym() relies on it). */
    c->next = (next_fn)(uintptr_t)next;
    c->next_n = (next_n_fn)(uintptr_t)next_n;
    c->errmsg = (errmsg_fn)(uintptr_t)errmsg;
    c->handle = NULL;
    return 0;
}

static void core_dealloc(Core *c)
{
    if (c->lock != NULL)
        PyThread_free_lock(c->lock);
    Py_TYPE(c)->tp_free((PyObject *)c);
}

static PyMethodDef core_methods[] = {
    {"next", (PyCFunction)core_next, METH_O, "next(recover) -> int: one ID."},
    {"fill", (PyCFunction)(void (*)(void))core_fill, METH_FASTCALL,
     "fill(address, count, recover): count IDs into the uint64 array at address."},
    {"__enter__", (PyCFunction)core_enter, METH_NOARGS, "Hold the handle's lock."},
    {"__exit__", (PyCFunction)(void (*)(void))core_exit, METH_FASTCALL, "Let it go."},
    {"after_fork", (PyCFunction)core_after_fork, METH_NOARGS,
     "In a fork child: a fresh lock in place of the inherited one."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef core_getset[] = {
    {"handle", (getter)core_get_handle, (setter)core_set_handle,
     "The idmint handle's address, or None.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject CoreType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "idmint._fast.Core",
    .tp_basicsize = sizeof(Core),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Core(next, next_n, errmsg): one idmint handle and its lock.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)core_init,
    .tp_dealloc = (destructor)core_dealloc,
    .tp_methods = core_methods,
    .tp_getset = core_getset,
};

static struct PyModuleDef fast_module = {
    PyModuleDef_HEAD_INIT,
    "idmint._fast",
    "The minting hot path of the idmint binding.",
    -1,
    NULL,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC PyInit__fast(void);

PyMODINIT_FUNC PyInit__fast(void)
{
    PyObject *m;

    if (PyType_Ready(&CoreType) < 0)
        return NULL;
    m = PyModule_Create(&fast_module);
    if (m == NULL)
        return NULL;
    Py_INCREF(&CoreType);
    if (PyModule_AddObject(m, "Core", (PyObject *)&CoreType) < 0) {
        Py_DECREF(&CoreType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
