// Shims for CPython macros that Swift cannot import (object constants,
// type checks, initialisers). Everything else is the plain C API.
#ifndef APIMACRO_CPYTHON_SHIM_H
#define APIMACRO_CPYTHON_SHIM_H

// pyconfig.h turns on _GNU_SOURCE and _XOPEN_SOURCE before it includes the
// C library. Swift's Glibc module reads the same headers without them, and
// some structs differ (fd_set names its member __fds_bits or fds_bits), so
// the two modules would disagree. Include the C library first, as Glibc sees it.
#include <sys/types.h>
#include <sys/select.h>
#include <sys/time.h>
#include <sys/stat.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <wchar.h>

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <frameobject.h>
// PyMarshal_ReadObjectFromString: the code cache reads its files without importing `marshal`.
#include <marshal.h>

static inline PyObject *apimacro_None(void) { return Py_None; }
static inline PyObject *apimacro_True(void) { return Py_True; }
static inline PyObject *apimacro_False(void) { return Py_False; }
static inline PyObject *apimacro_NotImplemented(void) { return Py_NotImplemented; }

static inline PyObject *apimacro_Exc_TypeError(void) { return PyExc_TypeError; }
static inline PyObject *apimacro_Exc_ValueError(void) { return PyExc_ValueError; }
static inline PyObject *apimacro_Exc_RuntimeError(void) { return PyExc_RuntimeError; }
static inline PyObject *apimacro_Exc_OverflowError(void) { return PyExc_OverflowError; }
static inline PyObject *apimacro_Exc_KeyboardInterrupt(void) { return PyExc_KeyboardInterrupt; }
static inline PyObject *apimacro_Exc_KeyError(void) { return PyExc_KeyError; }
static inline PyObject *apimacro_Exc_AttributeError(void) { return PyExc_AttributeError; }
static inline PyObject *apimacro_Exc_SystemExit(void) { return PyExc_SystemExit; }
static inline PyObject *apimacro_Exc_BaseException(void) { return PyExc_BaseException; }
static inline PyObject *apimacro_Exc_Exception(void) { return PyExc_Exception; }
static inline PyObject *apimacro_Exc_StopIteration(void) { return PyExc_StopIteration; }

static inline int apimacro_IsNone(PyObject *o) { return o == Py_None; }
static inline int apimacro_BoolCheck(PyObject *o) { return PyBool_Check(o); }
static inline int apimacro_LongCheck(PyObject *o) { return PyLong_Check(o); }
static inline int apimacro_FloatCheck(PyObject *o) { return PyFloat_Check(o); }
static inline int apimacro_UnicodeCheck(PyObject *o) { return PyUnicode_Check(o); }
static inline int apimacro_BytesCheck(PyObject *o) { return PyBytes_Check(o); }
static inline int apimacro_ByteArrayCheck(PyObject *o) { return PyByteArray_Check(o); }
static inline int apimacro_ListCheck(PyObject *o) { return PyList_Check(o); }
static inline int apimacro_TupleCheck(PyObject *o) { return PyTuple_Check(o); }
static inline int apimacro_DictCheck(PyObject *o) { return PyDict_Check(o); }
static inline int apimacro_CallableCheck(PyObject *o) { return PyCallable_Check(o); }
static inline int apimacro_ExceptionInstanceCheck(PyObject *o) { return PyExceptionInstance_Check(o); }

static inline PyTypeObject *apimacro_Type(PyObject *o) { return Py_TYPE(o); }
static inline const char *apimacro_TypeName(PyObject *o) { return Py_TYPE(o)->tp_name; }
static inline Py_ssize_t apimacro_RefCount(PyObject *o) { return Py_REFCNT(o); }

/// Borrowed items; bounds are the caller's job (checked in Swift).
static inline PyObject *apimacro_ListGetItem(PyObject *o, Py_ssize_t i) { return PyList_GET_ITEM(o, i); }
static inline void apimacro_ListSetItem(PyObject *o, Py_ssize_t i, PyObject *v) { PyList_SET_ITEM(o, i, v); }
static inline PyObject *apimacro_TupleGetItem(PyObject *o, Py_ssize_t i) { return PyTuple_GET_ITEM(o, i); }
static inline void apimacro_TupleSetItem(PyObject *o, Py_ssize_t i, PyObject *v) { PyTuple_SET_ITEM(o, i, v); }

static inline PyModuleDef_Base apimacro_ModuleDefHeadInit(void) {
    PyModuleDef_Base base = PyModuleDef_HEAD_INIT;
    return base;
}

static inline PyObject *apimacro_ModuleCreate(PyModuleDef *def) {
    return PyModule_Create2(def, PYTHON_API_VERSION);
}

static inline int apimacro_MethVarargsKeywords(void) { return METH_VARARGS | METH_KEYWORDS; }

#endif
