/*
 * session_contracts._linescan: which of a fixed set of byte strings occur in a line.
 *
 * check's secret screen asks, for every captured line, which literals of the
 * redaction policy's detectors occur in it (conformance/judge/_captured.py).
 * An RE2 set answers that too, but its DFA costs some twenty instructions a
 * byte; this is a filter on each pair of adjacent bytes (a bitmap of the pairs
 * that start a needle, 8 KB) and a comparison only where the filter passes.
 * A needle of one byte is found with memchr.
 *
 * A "folded" needle (lowercase) is searched as in the line with its ASCII
 * letters lowered, exactly ``needle in line.lower()`` for bytes: its lowercase
 * ASCII letters match either case, every other byte only itself.
 *
 * The RE2 set stays as the fallback where this module is not built;
 * tests/test_speedups.py holds the two equal.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define PAIRS 65536

typedef struct {
    PyObject_HEAD
    Py_ssize_t count;       /* needles */
    unsigned char **bytes;  /* each needle (lowercase when folded) */
    Py_ssize_t *length;
    unsigned char *folded;
    uint64_t pair_bits[PAIRS / 64];
    /* needles (of two bytes or more) by their first two bytes, as a line may
     * write them: pair_first[pair] .. pair_first[pair + 1] index into pair_ids */
    uint32_t *pair_first;
    uint32_t *pair_ids;
} NeedleSet;

static inline unsigned char lower_ascii(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c;
}

/* The bytes a line may hold where a needle holds c. */
static int variants(unsigned char c, int folded, unsigned char out[2])
{
    out[0] = c;
    if (folded && c >= 'a' && c <= 'z') {
        out[1] = (unsigned char)(c - 32);
        return 2;
    }
    return 1;
}

static void needle_set_dealloc(NeedleSet *self)
{
    if (self->bytes != NULL) {
        for (Py_ssize_t i = 0; i < self->count; i++) {
            PyMem_Free(self->bytes[i]);
        }
    }
    PyMem_Free(self->bytes);
    PyMem_Free(self->length);
    PyMem_Free(self->folded);
    PyMem_Free(self->pair_first);
    PyMem_Free(self->pair_ids);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* NeedleSet([(needle: bytes, folded: bool), ...]) */
static int needle_set_init(NeedleSet *self, PyObject *args, PyObject *kwds)
{
    PyObject *items;
    static char *names[] = {"needles", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O:NeedleSet", names, &items)) {
        return -1;
    }
    if (self->bytes != NULL) {
        PyErr_SetString(PyExc_TypeError, "NeedleSet is built once");
        return -1;
    }
    PyObject *seq = PySequence_Fast(items, "needles must be a sequence");
    if (seq == NULL) {
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    self->count = n;
    self->bytes = PyMem_Calloc((size_t)(n ? n : 1), sizeof(unsigned char *));
    self->length = PyMem_Calloc((size_t)(n ? n : 1), sizeof(Py_ssize_t));
    self->folded = PyMem_Calloc((size_t)(n ? n : 1), 1);
    self->pair_first = PyMem_Calloc(PAIRS + 1, sizeof(uint32_t));
    if (!self->bytes || !self->length || !self->folded || !self->pair_first) {
        Py_DECREF(seq);
        PyErr_NoMemory();
        return -1;
    }
    memset(self->pair_bits, 0, sizeof(self->pair_bits));
    Py_ssize_t entries = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        const char *data;
        Py_ssize_t size;
        int folded;
        if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 2
            || PyBytes_AsStringAndSize(PyTuple_GET_ITEM(item, 0), (char **)&data, &size) < 0
            || (folded = PyObject_IsTrue(PyTuple_GET_ITEM(item, 1))) < 0) {
            if (!PyErr_Occurred()) {
                PyErr_SetString(PyExc_TypeError, "each needle is (bytes, bool)");
            }
            Py_DECREF(seq);
            return -1;
        }
        if (size == 0) {
            Py_DECREF(seq);
            PyErr_SetString(PyExc_ValueError, "a needle may not be empty");
            return -1;
        }
        self->bytes[i] = PyMem_Malloc((size_t)size);
        if (self->bytes[i] == NULL) {
            Py_DECREF(seq);
            PyErr_NoMemory();
            return -1;
        }
        memcpy(self->bytes[i], data, (size_t)size);
        self->length[i] = size;
        self->folded[i] = (unsigned char)folded;
        if (size >= 2) {
            unsigned char a[2], b[2];
            int na = variants(self->bytes[i][0], folded, a);
            int nb = variants(self->bytes[i][1], folded, b);
            for (int x = 0; x < na; x++) {
                for (int y = 0; y < nb; y++) {
                    unsigned pair = (unsigned)a[x] | ((unsigned)b[y] << 8);
                    self->pair_bits[pair >> 6] |= (uint64_t)1 << (pair & 63);
                    self->pair_first[pair + 1]++;
                    entries++;
                }
            }
        }
    }
    /* counts -> offsets, then fill */
    for (Py_ssize_t p = 0; p < PAIRS; p++) {
        self->pair_first[p + 1] += self->pair_first[p];
    }
    self->pair_ids = PyMem_Malloc((size_t)(entries ? entries : 1) * sizeof(uint32_t));
    uint32_t *fill = PyMem_Calloc(PAIRS, sizeof(uint32_t));
    if (self->pair_ids == NULL || fill == NULL) {
        PyMem_Free(fill);
        Py_DECREF(seq);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (self->length[i] < 2) {
            continue;
        }
        unsigned char a[2], b[2];
        int na = variants(self->bytes[i][0], self->folded[i], a);
        int nb = variants(self->bytes[i][1], self->folded[i], b);
        for (int x = 0; x < na; x++) {
            for (int y = 0; y < nb; y++) {
                unsigned pair = (unsigned)a[x] | ((unsigned)b[y] << 8);
                self->pair_ids[self->pair_first[pair] + fill[pair]++] = (uint32_t)i;
            }
        }
    }
    PyMem_Free(fill);
    Py_DECREF(seq);
    return 0;
}

static int matches_at(const NeedleSet *self, Py_ssize_t id, const unsigned char *at)
{
    const unsigned char *needle = self->bytes[id];
    Py_ssize_t size = self->length[id];
    if (!self->folded[id]) {
        return memcmp(at, needle, (size_t)size) == 0;
    }
    for (Py_ssize_t j = 0; j < size; j++) {
        if (lower_ascii(at[j]) != needle[j]) {
            return 0;
        }
    }
    return 1;
}

static int single_byte_found(const NeedleSet *self, Py_ssize_t id, const unsigned char *s,
                             Py_ssize_t n)
{
    unsigned char options[2];
    int count = variants(self->bytes[id][0], self->folded[id], options);
    for (int k = 0; k < count; k++) {
        if (memchr(s, options[k], (size_t)n) != NULL) {
            return 1;
        }
    }
    return 0;
}

/* found(line: bytes) -> tuple of the indices of the needles the line holds, ascending */
static PyObject *needle_set_found(NeedleSet *self, PyObject *arg)
{
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) {
        return NULL;
    }
    const unsigned char *s = view.buf;
    Py_ssize_t n = view.len;
    unsigned char *found = PyMem_Calloc((size_t)(self->count ? self->count : 1), 1);
    if (found == NULL) {
        PyBuffer_Release(&view);
        return PyErr_NoMemory();
    }
    Py_ssize_t longer = 0, left;
    for (Py_ssize_t id = 0; id < self->count; id++) {
        if (self->length[id] == 1) {
            found[id] = (unsigned char)single_byte_found(self, id, s, n);
        }
        else {
            longer++;
        }
    }
    left = longer;
    if (left > 0 && n >= 2) {
        const uint64_t *bits = self->pair_bits;
        unsigned previous = s[0];
        for (Py_ssize_t i = 1; i < n; i++) {
            unsigned current = s[i];
            unsigned pair = previous | (current << 8);
            previous = current;
            if (!((bits[pair >> 6] >> (pair & 63)) & 1)) {
                continue;
            }
            for (uint32_t k = self->pair_first[pair]; k < self->pair_first[pair + 1]; k++) {
                uint32_t id = self->pair_ids[k];
                if (!found[id] && self->length[id] <= n - (i - 1)
                    && matches_at(self, id, s + i - 1)) {
                    found[id] = 1;
                    left--;
                }
            }
            if (left == 0) {
                break;
            }
        }
    }
    PyBuffer_Release(&view);
    Py_ssize_t total = 0;
    for (Py_ssize_t id = 0; id < self->count; id++) {
        total += found[id];
    }
    PyObject *out = PyTuple_New(total);
    if (out != NULL) {
        Py_ssize_t at = 0;
        for (Py_ssize_t id = 0; id < self->count && out != NULL; id++) {
            if (found[id]) {
                PyObject *index = PyLong_FromSsize_t(id);
                if (index == NULL) {
                    Py_CLEAR(out);
                    break;
                }
                PyTuple_SET_ITEM(out, at++, index);
            }
        }
    }
    PyMem_Free(found);
    return out;
}

static PyMethodDef needle_set_methods[] = {
    {"found", (PyCFunction)needle_set_found, METH_O,
     "found(line) -> the indices of the needles the line holds, ascending"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject NeedleSetType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "session_contracts._linescan.NeedleSet",
    .tp_basicsize = sizeof(NeedleSet),
    .tp_dealloc = (destructor)needle_set_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "NeedleSet(needles: [(bytes, folded)]): which needles a line holds",
    .tp_methods = needle_set_methods,
    .tp_init = (initproc)needle_set_init,
    .tp_new = PyType_GenericNew,
};

/* colon_facts(raw) -> (count of b":", whether b"\\u003" occurs) for the strict reader */
static PyObject *colon_facts(PyObject *module, PyObject *arg)
{
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) {
        return NULL;
    }
    const unsigned char *s = view.buf, *end = s + view.len, *p = s;
    Py_ssize_t colons = 0;
    while (p < end && (p = memchr(p, ':', (size_t)(end - p))) != NULL) {
        colons++;
        p++;
    }
    int escaped = 0;
    for (p = s; p < end && (p = memchr(p, '\\', (size_t)(end - p))) != NULL; p++) {
        if (end - p >= 5 && memcmp(p, "\\u003", 5) == 0) {
            escaped = 1;
            break;
        }
    }
    PyBuffer_Release(&view);
    return Py_BuildValue("(nO)", colons, escaped ? Py_True : Py_False);
}

static PyMethodDef linescan_methods[] = {
    {"colon_facts", colon_facts, METH_O,
     "colon_facts(raw) -> (count of ':' bytes, whether the bytes \\u003 occur)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef linescan_module = {
    PyModuleDef_HEAD_INIT, "_linescan",
    "Byte scans of a JSON line: the secret screen's needles, the strict reader's colons.",
    -1, linescan_methods,
};

PyMODINIT_FUNC PyInit__linescan(void)
{
    if (PyType_Ready(&NeedleSetType) < 0) {
        return NULL;
    }
    PyObject *m = PyModule_Create(&linescan_module);
    if (m == NULL) {
        return NULL;
    }
    Py_INCREF(&NeedleSetType);
    if (PyModule_AddObject(m, "NeedleSet", (PyObject *)&NeedleSetType) < 0) {
        Py_DECREF(&NeedleSetType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
