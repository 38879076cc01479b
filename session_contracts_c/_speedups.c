/*
 * session_contracts_c._speedups: the census of the canonical-JSON fast path, in C.
 *
 * Public C API only: dicts are read with PyDict_Next, lists with PySequence_Fast_ITEMS,
 * str with the PyUnicode_* accessors, ints with PyLong_As*; no struct of CPython's
 * internals is read and no private (_Py) function called, so a new interpreter
 * release cannot silently change what it reads.
 *
 * Both canonical forms (docs/hashing.md) are written by orjson with sorted keys.
 * orjson also writes what is not a JSON value here (tuples, enums, UUIDs,
 * fragments) and writes NaN as null, so a census of the value must vouch for it
 * first.  In Python that census costs as much as orjson itself; here it is one
 * walk over the objects, reading only their types, their keys' widths and the
 * floats.  No Python code runs during the walk (exact types only: no __eq__,
 * no __hash__, no __iter__), so the value cannot change under it.
 *
 * The pure-Python census in session_contracts/jsontext/canonical.py is the specification of what this
 * module answers; tests/unit/test_speedups.py holds the two equal.
 *
 * harn_dumps (below) goes one step further for Harn's form: it writes the bytes
 * in the same walk, and its specification is orjson itself.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <string.h>

#define MAX_LEVELS_ALLOWED 1000
/* The walk waits on memory, not on arithmetic: ask for the objects ahead. */
#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(p) __builtin_prefetch((p))
#else
#define PREFETCH(p) ((void)0)
#endif
#define LIST_PREFETCH_AHEAD 8

typedef struct {
    int jcs;            /* count float notations and find clashing objects */
    int max_levels;     /* a container this deep may not hold anything */
    Py_ssize_t dot_zero;      /* integral floats below 1e16: orjson "56.0", JCS "56" */
    Py_ssize_t negative_zero; /* -0.0 (among dot_zero): JCS "0" */
    Py_ssize_t exponent;      /* 1e16 <= |x| < 1e21 and 1e-6 <= |x| < 1e-5 */
    Py_ssize_t integral;      /* every integral float (inside clashing objects too) */
    PyObject *clashing; /* list of objects whose key orders differ (or NULL) */
    PyObject *dirty;    /* id of each container above a clashing object -> [(slot, child)] */
} Scan;

/* 1: plain; 0: not plain; -1: a Python error is set. */
static int scan_value(Scan *s, PyObject *v, int level, int counting, int *clash_below);

static void classify_float(Scan *s, double x)
{
    double a = fabs(x);
    if (x == floor(x)) {
        s->integral++;
        if (a >= 1e16) {
            if (a < 1e21) {
                s->exponent++;
            }
        }
        else {
            s->dot_zero++;
            if (x == 0.0 && signbit(x)) {
                s->negative_zero++;
            }
        }
    }
    else if (a >= 1e-6 && a < 1e-5) {
        s->exponent++;
    }
}

/* Whether the key holds a character in U+E000..U+FFFF (*e000) or above U+FFFF (*astral). */
static int key_ranges(PyObject *key, int *e000, int *astral)
{
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(key) < 0) {
        return -1;
    }
#endif
    int kind = PyUnicode_KIND(key);
    if (kind == PyUnicode_1BYTE_KIND) {
        return 0;
    }
    Py_ssize_t n = PyUnicode_GET_LENGTH(key);
    if (kind == PyUnicode_2BYTE_KIND) {
        const Py_UCS2 *p = PyUnicode_2BYTE_DATA(key);
        for (Py_ssize_t i = 0; i < n; i++) {
            if (p[i] >= 0xE000) {
                *e000 = 1;
                return 0;
            }
        }
        return 0;
    }
    const Py_UCS4 *p = PyUnicode_4BYTE_DATA(key);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (p[i] > 0xFFFF) {
            *astral = 1;
        }
        else if (p[i] >= 0xE000) {
            *e000 = 1;
        }
    }
    return 0;
}

/* Iteration over a dict's members: PyDict_Next, the public API, and nothing else
 * (no table layout of CPython's is read, so no interpreter release can break it). */
typedef struct {
    PyObject *dict;
    Py_ssize_t pos;
} DictIter;

static inline void dict_iter_init(DictIter *it, PyObject *o)
{
    it->dict = o;
    it->pos = 0;
}

static inline int dict_iter_next(DictIter *it, PyObject **key, PyObject **value)
{
    return PyDict_Next(it->dict, &it->pos, key, value);
}

/* Note that child (at slot: a key or an index) of container has a clashing
 * object at or below it: *edits collects (slot, child) pairs for the container. */
static int note_edit(PyObject **edits, PyObject *slot, PyObject *child)
{
    if (*edits == NULL) {
        *edits = PyList_New(0);
        if (*edits == NULL) {
            return -1;
        }
    }
    PyObject *pair = PyTuple_Pack(2, slot, child);
    if (pair == NULL) {
        return -1;
    }
    int r = PyList_Append(*edits, pair);
    Py_DECREF(pair);
    return r;
}

/* Record the edits of a container above a clashing object: dirty[id(container)] = edits. */
static int keep_edits(Scan *s, PyObject *container, PyObject *edits)
{
    if (s->dirty == NULL) {
        s->dirty = PyDict_New();
        if (s->dirty == NULL) {
            return -1;
        }
    }
    PyObject *id = PyLong_FromVoidPtr(container);
    if (id == NULL) {
        return -1;
    }
    int r = PyDict_SetItem(s->dirty, id, edits);
    Py_DECREF(id);
    return r;
}

static int scan_dict(Scan *s, PyObject *v, int level, int counting, int *clash_below)
{
    if (PyDict_GET_SIZE(v) == 0) {
        return 1;
    }
    if (level >= s->max_levels) {
        return 0;
    }
    DictIter it;
    PyObject *key, *child;
    int e000 = 0, astral = 0;
    dict_iter_init(&it, v);
    while (dict_iter_next(&it, &key, &child)) {
        PREFETCH(child);
        if (!PyUnicode_CheckExact(key)) {
            return 0;
        }
        if (s->jcs && counting && key_ranges(key, &e000, &astral) < 0) {
            return -1;
        }
    }
    int clashing = e000 && astral;
    if (clashing) {
        if (s->clashing == NULL) {
            s->clashing = PyList_New(0);
            if (s->clashing == NULL) {
                return -1;
            }
        }
        if (PyList_Append(s->clashing, v) < 0) {
            return -1;
        }
        *clash_below = 1;
    }
    PyObject *edits = NULL;
    dict_iter_init(&it, v);
    while (dict_iter_next(&it, &key, &child)) {
        int below = 0;
        int r = scan_value(s, child, level + 1, counting && !clashing, &below);
        if (r == 1 && below && note_edit(&edits, key, child) < 0) {
            r = -1;
        }
        if (r != 1) {
            Py_XDECREF(edits);
            return r;
        }
    }
    if (edits != NULL) {
        *clash_below = 1;
        int r = clashing ? 0 : keep_edits(s, v, edits);
        Py_DECREF(edits);
        if (r < 0) {
            return -1;
        }
    }
    return 1;
}

static int scan_list(Scan *s, PyObject *v, int level, int counting, int *clash_below)
{
    Py_ssize_t n = PyList_GET_SIZE(v);
    if (n == 0) {
        return 1;
    }
    if (level >= s->max_levels) {
        return 0;
    }
    PyObject *edits = NULL;
    for (Py_ssize_t i = 0; i < n && i < LIST_PREFETCH_AHEAD; i++) {
        PREFETCH(PyList_GET_ITEM(v, i));
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (i + LIST_PREFETCH_AHEAD < n) {
            PREFETCH(PyList_GET_ITEM(v, i + LIST_PREFETCH_AHEAD));
        }
        int below = 0;
        PyObject *child = PyList_GET_ITEM(v, i);
        int r = scan_value(s, child, level + 1, counting, &below);
        if (r == 1 && below) {
            PyObject *index = PyLong_FromSsize_t(i);
            r = index == NULL ? -1 : note_edit(&edits, index, child) < 0 ? -1 : 1;
            Py_XDECREF(index);
        }
        if (r != 1) {
            Py_XDECREF(edits);
            return r;
        }
    }
    if (edits != NULL) {
        *clash_below = 1;
        int r = keep_edits(s, v, edits);
        Py_DECREF(edits);
        if (r < 0) {
            return -1;
        }
    }
    return 1;
}

static int scan_value(Scan *s, PyObject *v, int level, int counting, int *clash_below)
{
    PyTypeObject *t = Py_TYPE(v);
    if (t == &PyUnicode_Type || t == &PyLong_Type || t == &PyBool_Type || v == Py_None) {
        return 1;
    }
    if (t == &PyFloat_Type) {
        double x = PyFloat_AS_DOUBLE(v);
        if (!isfinite(x)) {
            return 0;
        }
        if (s->jcs) {
            if (counting) {
                classify_float(s, x);
            }
            else if (x == floor(x)) {
                s->integral++;
            }
        }
        return 1;
    }
    if (t == &PyDict_Type) {
        return scan_dict(s, v, level, counting, clash_below);
    }
    if (t == &PyList_Type) {
        return scan_list(s, v, level, counting, clash_below);
    }
    return 0;
}


/* ------------------------------------------------------------------ breadth first
 *
 * The usual walk: level by level over an array of the values of that level.
 * Every value of a level is independent of the others, so the memory they live
 * in is asked for well ahead (headers HEADER_AHEAD values ahead, a dict's table
 * or a list's items BODY_AHEAD ahead) and many reads are under way at once; a
 * depth-first walk waits for each level of each container in turn.  It allocates
 * only its arrays (PyMem, which never collects garbage).  It counts every float and
 * only notes whether some object's keys clash; when one does, the depth-first
 * walk above runs instead, which knows which floats lie inside clashing objects
 * and which containers lie above them.
 */

typedef struct {
    PyObject **items;
    Py_ssize_t size;
    Py_ssize_t capacity;
} Level;

#define HEADER_AHEAD 24
#define BODY_AHEAD 12

static int level_reserve(Level *l, Py_ssize_t more)
{
    if (l->size + more <= l->capacity) {
        return 0;
    }
    Py_ssize_t capacity = l->capacity ? l->capacity : 1024;
    while (capacity < l->size + more) {
        if (capacity > PY_SSIZE_T_MAX / 2 / (Py_ssize_t)sizeof(PyObject *)) {
            PyErr_NoMemory();
            return -1;
        }
        capacity *= 2;
    }
    PyObject **items = PyMem_Realloc(l->items, (size_t)capacity * sizeof(PyObject *));
    if (items == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    l->items = items;
    l->capacity = capacity;
    return 0;
}

static void prefetch_body(PyObject *o)
{
    if (Py_TYPE(o) == &PyList_Type) {
        PREFETCH(PySequence_Fast_ITEMS(o));
    }
}



/* Push the values of dict o onto next (which has room); 1 plain keys, 0 not, -1 error. */
static int dict_children(PyObject *o, int jcs, Level *next, int *e000, int *astral)
{
    DictIter it;
    PyObject *key, *child;
    dict_iter_init(&it, o);
    while (dict_iter_next(&it, &key, &child)) {
        if (!PyUnicode_CheckExact(key)) {
            return 0;
        }
        if (jcs && key_ranges(key, e000, astral) < 0) {
            return -1;
        }
        next->items[next->size++] = child;
    }
    return 1;
}

#define NOTHING_BELOW 2

/* Room in next for the size children of a container at level: 1 when made; NOTHING_BELOW
 * for an empty container; 0 (not plain) when the container is too deep to hold anything;
 * -1 on an error. */
static int room_for_children(Scan *s, Level *next, Py_ssize_t size, int level)
{
    if (size == 0) {
        return NOTHING_BELOW;
    }
    if (level >= s->max_levels) {
        return 0;
    }
    return level_reserve(next, size) < 0 ? -1 : 1;
}

/* 1: plain; 0: not plain; -1: error.  Sets *clash when some object's keys clash (jcs). */
static int scan_breadth_first(Scan *s, PyObject *root, int *clash)
{
    Level current = {NULL, 0, 0}, next = {NULL, 0, 0};
    int result = 1;
    if (level_reserve(&current, 1) < 0) {
        return -1;
    }
    current.items[current.size++] = root;
    for (int level = 1; current.size > 0 && result == 1; level++) {
        next.size = 0;
        PyObject **items = current.items;
        Py_ssize_t n = current.size;
        for (Py_ssize_t i = 0; i < n && i < HEADER_AHEAD; i++) {
            PREFETCH(items[i]);
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            if (i + HEADER_AHEAD < n) {
                PREFETCH(items[i + HEADER_AHEAD]);
            }
            if (i + BODY_AHEAD < n) {
                prefetch_body(items[i + BODY_AHEAD]);
            }
            PyObject *o = items[i];
            PyTypeObject *t = Py_TYPE(o);
            if (t == &PyUnicode_Type || t == &PyLong_Type || t == &PyBool_Type || o == Py_None) {
                continue;
            }
            if (t == &PyFloat_Type) {
                double x = PyFloat_AS_DOUBLE(o);
                if (!isfinite(x)) {
                    result = 0;
                    break;
                }
                if (s->jcs) {
                    classify_float(s, x);
                }
                continue;
            }
            if (t != &PyList_Type && t != &PyDict_Type) {
                result = 0;
                break;
            }
            Py_ssize_t size = t == &PyList_Type ? PyList_GET_SIZE(o) : PyDict_GET_SIZE(o);
            int room = room_for_children(s, &next, size, level);
            if (room == NOTHING_BELOW) {
                continue;
            }
            if (room != 1) {
                result = room;
                break;
            }
            if (t == &PyList_Type) {
                PyObject **list_items = PySequence_Fast_ITEMS(o);
                for (Py_ssize_t j = 0; j < size; j++) {
                    PyObject *item = list_items[j];
                    PyTypeObject *it = Py_TYPE(item);
                    if (it == &PyUnicode_Type || it == &PyLong_Type || it == &PyBool_Type ||
                        item == Py_None) {
                        continue;
                    }
                    next.items[next.size++] = item;
                }
                continue;
            }
            int e000 = 0, astral = 0;
            result = dict_children(o, s->jcs, &next, &e000, &astral);
            if (result != 1) {
                break;
            }
            if (e000 && astral) {
                *clash = 1;
            }
        }
        Level swap = current;
        current = next;
        next = swap;
    }
    PyMem_Free(current.items);
    PyMem_Free(next.items);
    return result;
}


PyDoc_STRVAR(scan_doc,
"scan(value, jcs, max_levels, /)\n--\n\n"
"None if some value is not a plain dict (str keys), list, str, int, float, bool\n"
"or None, a float is not finite, or a container max_levels deep holds anything.\n"
"Otherwise (dot_zero, negative_zero, exponent, clashing, dirty): with jcs, the\n"
"counts of floats orjson writes in another notation than ECMAScript (outside\n"
"clashing objects), the objects whose keys sort differently by code point and\n"
"by UTF-16 (outermost only; a list, or None), and for each container above\n"
"them, by id, the (key or index, child) pairs leading to them (a dict, or\n"
"None), and the count of integral floats anywhere.  Without jcs:\n"
"(0, 0, 0, None, None, 0).");

/* A levels (or depth) argument in 1 .. MAX_LEVELS_ALLOWED; 0 with an error set otherwise. */
static int levels_argument(PyObject *value, const char *name)
{
    long levels = PyLong_AsLong(value);
    if (levels == -1 && PyErr_Occurred()) {
        return 0;
    }
    if (levels < 1 || levels > MAX_LEVELS_ALLOWED) {
        PyErr_Format(PyExc_ValueError, "%s must be between 1 and %d", name, MAX_LEVELS_ALLOWED);
        return 0;
    }
    return (int)levels;
}

static PyObject *speedups_scan(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "scan() takes exactly 3 arguments");
        return NULL;
    }
    int jcs = PyObject_IsTrue(args[1]);
    if (jcs < 0) {
        return NULL;
    }
    int max_levels = levels_argument(args[2], "max_levels");
    if (max_levels == 0) {
        return NULL;
    }
    Scan s = {jcs, max_levels, 0, 0, 0, 0, NULL, NULL};
    int clash = 0;
    int r = scan_breadth_first(&s, args[0], &clash);
    if (r == 1 && clash) {
        Scan again = {jcs, max_levels, 0, 0, 0, 0, NULL, NULL};
        int clash_below = 0;
        s = again;
        /* The depth-first walk allocates the edits it reports (tuples, lists, a
         * dict), and an allocation may start a collection, whose finalizers run
         * Python code that could change the value mid-walk.  No collection, then. */
        int collecting = PyGC_Disable();
        r = scan_value(&s, args[0], 1, 1, &clash_below);
        if (collecting) {
            PyGC_Enable();
        }
    }
    if (r != 1) {
        Py_XDECREF(s.clashing);
        Py_XDECREF(s.dirty);
        if (r < 0) {
            return NULL;
        }
        Py_RETURN_NONE;
    }
    PyObject *clashing = s.clashing ? s.clashing : Py_NewRef(Py_None);
    PyObject *dirty = s.dirty ? s.dirty : Py_NewRef(Py_None);
    return Py_BuildValue("(nnnNNn)", s.dot_zero, s.negative_zero, s.exponent, clashing, dirty,
                         s.integral);
}

PyDoc_STRVAR(strip_dot_zero_doc,
"strip_dot_zero(out, dot_zero, negative_zero, /)\n--\n\n"
"out with every '.0' followed by ',', ']' or '}' removed, and the '-' of\n"
"every '-0.0' token too: orjson's integral floats in ECMAScript notation.\n"
"None unless out holds exactly dot_zero such patterns, negative_zero of them\n"
"'-0.0' tokens: then some pattern is inside a string and the caller must\n"
"tell tokens from text another way.");

static PyObject *speedups_strip_dot_zero(PyObject *module, PyObject *const *args,
                                         Py_ssize_t nargs)
{
    if (nargs != 3 || !PyBytes_CheckExact(args[0])) {
        PyErr_SetString(PyExc_TypeError, "strip_dot_zero(bytes, int, int)");
        return NULL;
    }
    Py_ssize_t expected = PyLong_AsSsize_t(args[1]);
    if (expected == -1 && PyErr_Occurred()) {
        return NULL;
    }
    Py_ssize_t expected_negative = PyLong_AsSsize_t(args[2]);
    if (expected_negative == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (expected < 0 || expected_negative < 0 || expected_negative > expected) {
        Py_RETURN_NONE;
    }
    const char *data = PyBytes_AS_STRING(args[0]);
    Py_ssize_t size = PyBytes_GET_SIZE(args[0]);
    /* cut[i]: where the i-th pattern's bytes start (the '.', or the '-' of a negative zero) */
    Py_ssize_t *cut = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(expected + 1));
    char *negative = PyMem_Malloc((size_t)(expected + 1));
    if (cut == NULL || negative == NULL) {
        PyMem_Free(cut);
        PyMem_Free(negative);
        return PyErr_NoMemory();
    }
    Py_ssize_t found = 0, found_negative = 0;
    const char *p = data;
    const char *end = data + size;
    while (p < end) {
        const char *dot = memchr(p, '.', (size_t)(end - p));
        if (dot == NULL || dot + 2 >= end) {
            break;
        }
        p = dot + 1;
        if (dot[1] != '0' || (dot[2] != ',' && dot[2] != ']' && dot[2] != '}')) {
            continue;
        }
        if (found == expected) {
            found++;
            break;
        }
        Py_ssize_t at = dot - data;
        int is_negative = at >= 3 && dot[-1] == '0' && dot[-2] == '-' &&
                          (dot[-3] == ':' || dot[-3] == ',' || dot[-3] == '[');
        negative[found] = (char)is_negative;
        cut[found] = is_negative ? at - 2 : at;
        found_negative += is_negative;
        found++;
    }
    if (found != expected || found_negative != expected_negative) {
        PyMem_Free(cut);
        PyMem_Free(negative);
        Py_RETURN_NONE;
    }
    PyObject *result = PyBytes_FromStringAndSize(NULL, size - 2 * expected - expected_negative);
    if (result == NULL) {
        PyMem_Free(cut);
        PyMem_Free(negative);
        return NULL;
    }
    char *w = PyBytes_AS_STRING(result);
    Py_ssize_t done = 0;
    for (Py_ssize_t i = 0; i < found; i++) {
        memcpy(w, data + done, (size_t)(cut[i] - done));
        w += cut[i] - done;
        if (negative[i]) {
            *w++ = '0';  /* "-0.0" becomes "0" */
            done = cut[i] + 4;
        }
        else {
            done = cut[i] + 2;
        }
    }
    memcpy(w, data + done, (size_t)(size - done));
    PyMem_Free(cut);
    PyMem_Free(negative);
    return result;
}


/* ------------------------------------------------------------------ reading census
 *
 * What the strict reader's fast path must know of a value orjson parsed
 * (session_contracts/jsontext/strict.py): how many colons orjson would write for it
 * (one per member, plus every colon inside a key or a string), whether some value
 * lies max_depth containers down, and whether some float is 1e18 or more (an
 * integer literal beyond 64 bits reads as such a double).
 */

typedef struct {
    int max_depth;
    Py_ssize_t colons;
    int big_float;
    int integral_float;
} Reading;

static Py_ssize_t colons_in(PyObject *text)
{
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(text) < 0) {
        return -1;
    }
#endif
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    Py_ssize_t count = 0;
    if (kind == PyUnicode_1BYTE_KIND) {
        const char *p = (const char *)PyUnicode_1BYTE_DATA(text);
        const char *end = p + n;
        while (p < end && (p = memchr(p, ':', (size_t)(end - p))) != NULL) {
            count++;
            p++;
        }
        return count;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        count += PyUnicode_READ(kind, PyUnicode_DATA(text), i) == ':';
    }
    return count;
}

/* 1: fine; 0: too deep or not a plain value; -1: error. */
static int read_value(Reading *r, PyObject *v, int level)
{
    PyTypeObject *t = Py_TYPE(v);
    if (t == &PyUnicode_Type) {
        Py_ssize_t c = colons_in(v);
        if (c < 0) {
            return -1;
        }
        r->colons += c;
        return 1;
    }
    if (t == &PyLong_Type || t == &PyBool_Type || v == Py_None) {
        return 1;
    }
    if (t == &PyFloat_Type) {
        double x = PyFloat_AS_DOUBLE(v);
        if (!isfinite(x)) {
            return 0;
        }
        if (fabs(x) >= 1e18) {
            r->big_float = 1;
        }
        if (x == floor(x)) {
            r->integral_float = 1;
        }
        return 1;
    }
    if (t == &PyList_Type) {
        Py_ssize_t n = PyList_GET_SIZE(v);
        if (n > 0 && level >= r->max_depth) {
            return 0;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            int ok = read_value(r, PyList_GET_ITEM(v, i), level + 1);
            if (ok != 1) {
                return ok;
            }
        }
        return 1;
    }
    if (t == &PyDict_Type) {
        Py_ssize_t n = PyDict_GET_SIZE(v);
        if (n > 0 && level >= r->max_depth) {
            return 0;
        }
        r->colons += n;
        DictIter it;
        PyObject *key, *child;
        dict_iter_init(&it, v);
        while (dict_iter_next(&it, &key, &child)) {
            if (!PyUnicode_CheckExact(key)) {
                return 0;
            }
            Py_ssize_t c = colons_in(key);
            if (c < 0) {
                return -1;
            }
            r->colons += c;
            int ok = read_value(r, child, level + 1);
            if (ok != 1) {
                return ok;
            }
        }
        return 1;
    }
    return 0;
}

PyDoc_STRVAR(reading_census_doc,
"reading_census(value, max_depth, /)\n--\n\n"
"None if some value lies max_depth containers down (or is not plain JSON);\n"
"else (colons, big_float, integral_float): the colons orjson writes for value\n"
"(one per member and every ':' inside a key or string), whether a float is 1e18\n"
"or more and whether a float is integral (such as 5.0).");

static PyObject *speedups_reading_census(PyObject *module, PyObject *const *args,
                                         Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "reading_census() takes exactly 2 arguments");
        return NULL;
    }
    int max_depth = levels_argument(args[1], "max_depth");
    if (max_depth == 0) {
        return NULL;
    }
    Reading r = {max_depth, 0, 0, 0};
    int ok = read_value(&r, args[0], 1);
    if (ok < 0) {
        return NULL;
    }
    if (ok == 0) {
        Py_RETURN_NONE;
    }
    return Py_BuildValue("(nOO)", r.colons, r.big_float ? Py_True : Py_False,
                         r.integral_float ? Py_True : Py_False);
}

/* ------------------------------------------------------------------ Harn's writer
 *
 * harn_dumps writes Harn's canonical JSON (session_contracts/jsontext/harn_canonical.py)
 * in the same walk that vouches for the value: the census followed by orjson
 * read every value twice, and on documents of many small values the first read
 * cost a third of orjson's own time.  Its contract is orjson's bytes
 * (OPT_SORT_KEYS) for every value it accepts; what it cannot vouch for it
 * refuses (None), and the caller's exact path names the problem.  Floats are
 * not formatted here: each leaves a hole, and the caller's float writer
 * (orjson.dumps) writes them all as one list after the walk, so their text is
 * orjson's by construction, never a second implementation of it.
 *
 * Like the census, the walk runs no Python code and allocates nothing the
 * garbage collector tracks (a collection runs finalizers, which could change
 * the value under the walk): the output and the floats with their holes live in
 * PyMem arrays, and the list handed to the float writer and the bytes returned
 * are made only once the walk is over.  Copying the output into the bytes
 * splices the floats' texts in on the way.
 *
 * The output buffer is kept for the next call (one, up to SPARE_LIMIT bytes):
 * malloc hands out a buffer of many megabytes as a fresh mapping each time,
 * and faulting its pages in cost about a sixth of the whole write.
 */

#define WRITER_INITIAL_CAPACITY 4096
#define SPARE_LIMIT ((Py_ssize_t)64 << 20)
#define SMALL_DICT 16 /* members sorted in an array on the stack */

typedef struct {
    PyObject *number;    /* a new reference */
    Py_ssize_t hole;     /* where its text goes in the output */
    Py_ssize_t text_end; /* where its text ends in the float writer's answer */
} FloatHole;

typedef struct {
    char *buf;           /* PyMem */
    Py_ssize_t size;     /* bytes written */
    Py_ssize_t capacity;
    int max_levels;
    FloatHole *floats;
    Py_ssize_t float_count;
    Py_ssize_t float_capacity;
} Writer;

typedef struct {
    PyObject *key;
    PyObject *value;
} Member;

static int writer_grow(Writer *w, Py_ssize_t more)
{
    if (more > PY_SSIZE_T_MAX - w->size) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t need = w->size + more;
    Py_ssize_t capacity = w->capacity;
    while (capacity < need) {
        capacity = capacity > PY_SSIZE_T_MAX / 2 ? need : capacity * 2;
    }
    char *buf = PyMem_Realloc(w->buf, (size_t)capacity);
    if (buf == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    w->buf = buf;
    w->capacity = capacity;
    return 0;
}

#ifndef Py_GIL_DISABLED
/* The spare output buffer; NULL while a call holds it (the float writer may
 * call harn_dumps again, or let another thread do so). */
static char *spare_buf = NULL;
static Py_ssize_t spare_capacity = 0;
#endif

static int writer_open(Writer *w)
{
#ifndef Py_GIL_DISABLED
    if (spare_buf != NULL) {
        w->buf = spare_buf;
        w->capacity = spare_capacity;
        spare_buf = NULL;
        return 0;
    }
#endif
    w->buf = PyMem_Malloc(WRITER_INITIAL_CAPACITY);
    if (w->buf == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    w->capacity = WRITER_INITIAL_CAPACITY;
    return 0;
}

static void writer_close(Writer *w)
{
    for (Py_ssize_t i = 0; i < w->float_count; i++) {
        Py_DECREF(w->floats[i].number);
    }
    PyMem_Free(w->floats);
#ifndef Py_GIL_DISABLED
    if (spare_buf == NULL && w->capacity <= SPARE_LIMIT) {
        spare_buf = w->buf;
        spare_capacity = w->capacity;
        return;
    }
#endif
    PyMem_Free(w->buf);
}

static inline int writer_reserve(Writer *w, Py_ssize_t more)
{
    if (w->capacity - w->size >= more) {
        return 0;
    }
    return writer_grow(w, more);
}

static inline char *writer_cursor(Writer *w)
{
    return w->buf + w->size;
}

static inline int writer_put(Writer *w, const char *text, Py_ssize_t n)
{
    if (writer_reserve(w, n) < 0) {
        return -1;
    }
    memcpy(writer_cursor(w), text, (size_t)n);
    w->size += n;
    return 0;
}

static inline int writer_put_char(Writer *w, char c)
{
    if (writer_reserve(w, 1) < 0) {
        return -1;
    }
    w->buf[w->size++] = c;
    return 0;
}

/* serde_json's escapes: the short ones where JSON has them, \u00xx for the
 * other controls ('u'), nothing for every other byte (0). */
static const char ESCAPE[256] = {
    'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'b', 't', 'n', 'u', 'f', 'r', 'u', 'u',
    'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u',
    0, 0, '"', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, '\\', 0, 0, 0,
};
static const char HEX_DIGITS[] = "0123456789abcdef";

static inline char *escape_byte(char *o, unsigned char c, char e)
{
    *o++ = '\\';
    if (e == 'u') {
        o[0] = 'u';
        o[1] = '0';
        o[2] = '0';
        o[3] = HEX_DIGITS[c >> 4];
        o[4] = HEX_DIGITS[c & 15];
        return o + 5;
    }
    *o++ = e;
    return o;
}

#define BYTES_ONES 0x0101010101010101ULL
#define BYTES_HIGHS 0x8080808080808080ULL

/* Whether none of 8 bytes needs an escape: no byte below 0x20, no '"', no '\\'.
 * Each test says exactly whether some byte matches (the bit tricks' flags may
 * be wrong above the first match, never whether there is one), and a byte of
 * a multi-byte UTF-8 sequence (0x80 and up) never matches. */
static inline int word_is_plain(uint64_t x)
{
    uint64_t control = (x - BYTES_ONES * 0x20) & ~x & BYTES_HIGHS;
    uint64_t quote = x ^ (BYTES_ONES * '"');
    uint64_t backslash = x ^ (BYTES_ONES * '\\');
    quote = (quote - BYTES_ONES) & ~quote & BYTES_HIGHS;
    backslash = (backslash - BYTES_ONES) & ~backslash & BYTES_HIGHS;
    return (control | quote | backslash) == 0;
}

/* UTF-8 text, quoted and escaped; o has room for 6 bytes a code point, plus 2. */
static char *write_escaped_utf8(char *o, const unsigned char *p, Py_ssize_t n)
{
    const unsigned char *end = p + n;
    *o++ = '"';
    while (end - p >= 8) {
        uint64_t x;
        memcpy(&x, p, 8);
        if (word_is_plain(x)) {
            memcpy(o, p, 8);
            o += 8;
            p += 8;
            continue;
        }
        for (const unsigned char *stop = p + 8; p < stop; p++) {
            char e = ESCAPE[*p];
            if (e) {
                o = escape_byte(o, *p, e);
            }
            else {
                *o++ = (char)*p;
            }
        }
    }
    for (; p < end; p++) {
        char e = ESCAPE[*p];
        if (e) {
            o = escape_byte(o, *p, e);
        }
        else {
            *o++ = (char)*p;
        }
    }
    *o++ = '"';
    return o;
}

/* Code points to UTF-8, quoted and escaped; NULL at a surrogate (a lone one:
 * a str holds a pair as one astral code point, never as two surrogates, and
 * orjson refuses any surrogate as text that is not UTF-8). */
#define ENCODE_CODE_POINT(c)                                     \
    if ((c) < 0x80) {                                            \
        char e = ESCAPE[(c)];                                    \
        if (e) {                                                 \
            o = escape_byte(o, (unsigned char)(c), e);           \
        }                                                        \
        else {                                                   \
            *o++ = (char)(c);                                    \
        }                                                        \
    }                                                            \
    else if ((c) < 0x800) {                                      \
        *o++ = (char)(0xC0 | ((c) >> 6));                        \
        *o++ = (char)(0x80 | ((c)&0x3F));                        \
    }                                                            \
    else if ((c) < 0x10000) {                                    \
        if ((c) >= 0xD800 && (c) <= 0xDFFF) {                    \
            return NULL;                                         \
        }                                                        \
        *o++ = (char)(0xE0 | ((c) >> 12));                       \
        *o++ = (char)(0x80 | (((c) >> 6) & 0x3F));               \
        *o++ = (char)(0x80 | ((c)&0x3F));                        \
    }                                                            \
    else {                                                       \
        *o++ = (char)(0xF0 | ((c) >> 18));                       \
        *o++ = (char)(0x80 | (((c) >> 12) & 0x3F));              \
        *o++ = (char)(0x80 | (((c) >> 6) & 0x3F));               \
        *o++ = (char)(0x80 | ((c)&0x3F));                        \
    }

static char *write_encoded_ucs1(char *o, const Py_UCS1 *p, Py_ssize_t n)
{
    *o++ = '"';
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = p[i];
        ENCODE_CODE_POINT(c)
    }
    *o++ = '"';
    return o;
}

static char *write_encoded_ucs2(char *o, const Py_UCS2 *p, Py_ssize_t n)
{
    *o++ = '"';
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = p[i];
        ENCODE_CODE_POINT(c)
    }
    *o++ = '"';
    return o;
}

static char *write_encoded_ucs4(char *o, const Py_UCS4 *p, Py_ssize_t n)
{
    *o++ = '"';
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = p[i];
        ENCODE_CODE_POINT(c)
    }
    *o++ = '"';
    return o;
}

/* 1: written; 0: a lone surrogate; -1: an error. */
static int write_text(Writer *w, PyObject *s)
{
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(s) < 0) {
        return -1;
    }
#endif
    Py_ssize_t n = PyUnicode_GET_LENGTH(s);
    /* No code point takes more than 6 bytes: \u00xx, or 4 bytes of UTF-8. */
    if (n > (PY_SSIZE_T_MAX - 2) / 6) {
        PyErr_NoMemory();
        return -1;
    }
    if (writer_reserve(w, 6 * n + 2) < 0) {
        return -1;
    }
    char *start = writer_cursor(w);
    char *o;
    if (PyUnicode_IS_ASCII(s)) {
        o = write_escaped_utf8(start, PyUnicode_1BYTE_DATA(s), n);
    }
    else {
        switch (PyUnicode_KIND(s)) {
        case PyUnicode_1BYTE_KIND:
            o = write_encoded_ucs1(start, PyUnicode_1BYTE_DATA(s), n);
            break;
        case PyUnicode_2BYTE_KIND:
            o = write_encoded_ucs2(start, PyUnicode_2BYTE_DATA(s), n);
            break;
        default:
            o = write_encoded_ucs4(start, PyUnicode_4BYTE_DATA(s), n);
            break;
        }
        if (o == NULL) {
            return 0;
        }
    }
    w->size += o - start;
    return 1;
}

#define SHORT_TEXT 16

/* write_text, inlined for the short ASCII str most keys and many values are:
 * there the call and the word loop cost more than the bytes. */
static Py_ALWAYS_INLINE inline int write_str(Writer *w, PyObject *s)
{
    if (PyUnicode_IS_ASCII(s) && PyUnicode_GET_LENGTH(s) <= SHORT_TEXT) {
        if (writer_reserve(w, 6 * SHORT_TEXT + 2) < 0) {
            return -1;
        }
        const Py_UCS1 *p = PyUnicode_1BYTE_DATA(s);
        const Py_UCS1 *end = p + PyUnicode_GET_LENGTH(s);
        char *o = writer_cursor(w);
        *o++ = '"';
        for (; p < end; p++) {
            char e = ESCAPE[*p];
            if (e) {
                o = escape_byte(o, *p, e);
            }
            else {
                *o++ = (char)*p;
            }
        }
        *o++ = '"';
        w->size = o - w->buf;
        return 1;
    }
    return write_text(w, s);
}

static const char DIGIT_PAIRS[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* The sign and magnitude of an int: 1; 0: outside [-2**63, 2**64 - 1], where
 * orjson stops; -1: an error. */
static inline int int_parts(PyObject *v, unsigned long long *magnitude, int *negative)
{
    int overflow;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow == 0) {
        if (x == -1 && PyErr_Occurred()) {
            return -1;
        }
        *negative = x < 0;
        *magnitude = x < 0 ? 0ULL - (unsigned long long)x : (unsigned long long)x;
        return 1;
    }
    if (overflow < 0) {
        return 0;
    }
    /* Past 2**63 - 1 (rare): PyLong_AsUnsignedLongLong raises OverflowError past
     * 2**64 - 1, which is cleared here (orjson stops there too). */
    unsigned long long u = PyLong_AsUnsignedLongLong(v);
    if (u == (unsigned long long)-1 && PyErr_Occurred()) {
        if (!PyErr_ExceptionMatches(PyExc_OverflowError)) {
            return -1;
        }
        PyErr_Clear();
        return 0;
    }
    *negative = 0;
    *magnitude = u;
    return 1;
}

/* 1: written; 0: out of range; -1: an error. */
static inline int write_int(Writer *w, PyObject *v)
{
    unsigned long long magnitude;
    int negative;
    int r = int_parts(v, &magnitude, &negative);
    if (r != 1) {
        return r;
    }
    if (writer_reserve(w, 21) < 0) {
        return -1;
    }
    char *o = writer_cursor(w);
    *o = '-';
    o += negative;
    /* Digits written backwards from the end of the number, two at a time; the
     * count first, so no temporary and no variable-length copy. */
    int count = 1;
    for (unsigned long long rest = magnitude; rest >= 10 && count < 20; rest /= 10) {
        count++;
    }
    char *p = o + count;
    while (magnitude >= 100) {
        unsigned pair = (unsigned)(magnitude % 100);
        magnitude /= 100;
        p -= 2;
        memcpy(p, DIGIT_PAIRS + 2 * pair, 2);
    }
    if (magnitude >= 10) {
        memcpy(p - 2, DIGIT_PAIRS + 2 * magnitude, 2);
    }
    else {
        p[-1] = (char)('0' + magnitude);
    }
    w->size += count + negative;
    return 1;
}

/* 1: a hole left; 0: not finite; -1: an error. */
static int write_float_hole(Writer *w, PyObject *v)
{
    if (!isfinite(PyFloat_AS_DOUBLE(v))) {
        return 0;
    }
    if (w->float_count == w->float_capacity) {
        Py_ssize_t capacity = w->float_capacity ? w->float_capacity * 2 : 64;
        if (capacity > PY_SSIZE_T_MAX / (Py_ssize_t)sizeof(FloatHole)) {
            PyErr_NoMemory();
            return -1;
        }
        FloatHole *floats = PyMem_Realloc(w->floats, (size_t)capacity * sizeof(FloatHole));
        if (floats == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        w->floats = floats;
        w->float_capacity = capacity;
    }
    w->floats[w->float_count].number = Py_NewRef(v);
    w->floats[w->float_count].hole = w->size;
    w->floats[w->float_count].text_end = 0;
    w->float_count++;
    return 1;
}

/* Python's order of exact str (code points); it cannot fail for them. */
static inline int key_compare(PyObject *a, PyObject *b)
{
    if (PyUnicode_KIND(a) == PyUnicode_1BYTE_KIND && PyUnicode_KIND(b) == PyUnicode_1BYTE_KIND) {
        /* Keys are short: a loop beats a call to memcmp. */
        const Py_UCS1 *p = PyUnicode_1BYTE_DATA(a), *q = PyUnicode_1BYTE_DATA(b);
        Py_ssize_t na = PyUnicode_GET_LENGTH(a), nb = PyUnicode_GET_LENGTH(b);
        Py_ssize_t n = na < nb ? na : nb;
        for (Py_ssize_t i = 0; i < n; i++) {
            if (p[i] != q[i]) {
                return p[i] < q[i] ? -1 : 1;
            }
        }
        return na < nb ? -1 : na > nb;
    }
    return PyUnicode_Compare(a, b);
}

static int member_compare(const void *a, const void *b)
{
    return key_compare(((const Member *)a)->key, ((const Member *)b)->key);
}

static int write_dict(Writer *w, PyObject *v, int level);
static int write_list(Writer *w, PyObject *v, int level);
static inline int write_item(Writer *w, PyObject *v, int level);

static int write_dict(Writer *w, PyObject *v, int level)
{
    Py_ssize_t n = PyDict_GET_SIZE(v);
    if (n == 0) {
        return writer_put(w, "{}", 2) < 0 ? -1 : 1;
    }
    if (level >= w->max_levels) {
        return 0;
    }
    Member small[SMALL_DICT];
    Member *members = small;
    if (n > SMALL_DICT) {
        members = PyMem_Malloc((size_t)n * sizeof(Member));
        if (members == NULL) {
            PyErr_NoMemory();
            return -1;
        }
    }
    int r = 1;
    Py_ssize_t count = 0;
    DictIter it;
    PyObject *key, *value;
    dict_iter_init(&it, v);
    while (dict_iter_next(&it, &key, &value)) {
        PREFETCH(value);
        if (!PyUnicode_CheckExact(key) || count == n) {
            r = 0;
            goto done;
        }
#if PY_VERSION_HEX < 0x030C0000
        if (PyUnicode_READY(key) < 0) {
            r = -1;
            goto done;
        }
#endif
        if (n <= SMALL_DICT) {
            /* Insertion sort as the members arrive: few compares for a few keys,
             * one per key when they come sorted. */
            Py_ssize_t at = count;
            while (at > 0 && key_compare(members[at - 1].key, key) > 0) {
                members[at] = members[at - 1];
                at--;
            }
            members[at].key = key;
            members[at].value = value;
        }
        else {
            members[count].key = key;
            members[count].value = value;
        }
        count++;
    }
    if (count != n) {
        r = 0;
        goto done;
    }
    if (n > SMALL_DICT) {
        qsort(members, (size_t)n, sizeof(Member), member_compare);
    }
    if (writer_put_char(w, '{') < 0) {
        r = -1;
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (i > 0 && writer_put_char(w, ',') < 0) {
            r = -1;
            goto done;
        }
        r = write_str(w, members[i].key);
        if (r != 1) {
            goto done;
        }
        if (writer_put_char(w, ':') < 0) {
            r = -1;
            goto done;
        }
        r = write_item(w, members[i].value, level + 1);
        if (r != 1) {
            goto done;
        }
    }
    r = writer_put_char(w, '}') < 0 ? -1 : 1;
done:
    if (members != small) {
        PyMem_Free(members);
    }
    return r;
}

static int write_list(Writer *w, PyObject *v, int level)
{
    Py_ssize_t n = PyList_GET_SIZE(v);
    if (n == 0) {
        return writer_put(w, "[]", 2) < 0 ? -1 : 1;
    }
    if (level >= w->max_levels) {
        return 0;
    }
    PyObject **items = PySequence_Fast_ITEMS(v);
    for (Py_ssize_t i = 0; i < n && i < LIST_PREFETCH_AHEAD; i++) {
        PREFETCH(items[i]);
    }
    if (writer_put_char(w, '[') < 0) {
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (i + LIST_PREFETCH_AHEAD < n) {
            PREFETCH(items[i + LIST_PREFETCH_AHEAD]);
        }
        if (i > 0 && writer_put_char(w, ',') < 0) {
            return -1;
        }
        int r = write_item(w, items[i], level + 1);
        if (r != 1) {
            return r;
        }
    }
    return writer_put_char(w, ']') < 0 ? -1 : 1;
}

/* 1: written; 0: refused (the caller returns None); -1: an error.  Inlined
 * into the container loops: most values are scalars, and a call per scalar
 * costs as much as writing it. */
static Py_ALWAYS_INLINE inline int write_item(Writer *w, PyObject *v, int level)
{
    PyTypeObject *t = Py_TYPE(v);
    if (t == &PyUnicode_Type) {
        return write_str(w, v);
    }
    if (t == &PyLong_Type) {
        return write_int(w, v);
    }
    if (t == &PyDict_Type) {
        return write_dict(w, v, level);
    }
    if (t == &PyList_Type) {
        return write_list(w, v, level);
    }
    if (t == &PyFloat_Type) {
        return write_float_hole(w, v);
    }
    if (t == &PyBool_Type || v == Py_None) {
        if (writer_reserve(w, 5) < 0) {
            return -1;
        }
        char *o = writer_cursor(w);
        if (v == Py_True) {
            memcpy(o, "true", 4);
            w->size += 4;
        }
        else if (v == Py_False) {
            memcpy(o, "false", 5);
            w->size += 5;
        }
        else {
            memcpy(o, "null", 4);
            w->size += 4;
        }
        return 1;
    }
    return 0;
}

/* Where each float's text ends in texts (b"[t1,t2,...]", the float writer's
 * answer): 1; 0 unless it holds exactly one non-empty text per float.  A float's
 * text never holds a comma, so the commas are the boundaries; memchr finds them
 * many bytes at a time. */
static int find_float_texts(FloatHole *floats, Py_ssize_t count, const char *texts,
                            Py_ssize_t size)
{
    if (size < 2 || texts[0] != '[' || texts[size - 1] != ']') {
        return 0;
    }
    const char *p = texts + 1, *stop = texts + size - 1;
    for (Py_ssize_t i = 0; i < count; i++) {
        const char *end = memchr(p, ',', (size_t)(stop - p));
        if (end == NULL) {
            if (i != count - 1) {
                return 0;
            }
            end = stop;
        }
        else if (i == count - 1) {
            return 0;
        }
        if (end == p) {
            return 0;
        }
        floats[i].text_end = end - texts;
        p = end + 1;
    }
    return 1;
}

/* The bytes written; with floats, ask float_writer for their texts and put
 * each where its hole is on the way.  NULL: an error. */
static PyObject *writer_finish(Writer *w, PyObject *float_writer)
{
    Py_ssize_t count = w->float_count;
    if (count == 0) {
        return PyBytes_FromStringAndSize(w->buf, w->size);
    }
    PyObject *list = PyList_New(count);
    if (list == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyList_SET_ITEM(list, i, w->floats[i].number); /* the list owns them now */
    }
    w->float_count = 0;
    PyObject *texts = PyObject_CallOneArg(float_writer, list);
    Py_DECREF(list);
    if (texts == NULL) {
        return NULL;
    }
    if (!PyBytes_Check(texts) ||
        !find_float_texts(w->floats, count, PyBytes_AS_STRING(texts), PyBytes_GET_SIZE(texts))) {
        Py_DECREF(texts);
        PyErr_SetString(PyExc_ValueError,
                        "float_writer must return b'[...]' holding one text per float");
        return NULL;
    }
    const char *t = PyBytes_AS_STRING(texts);
    PyObject *out = PyBytes_FromStringAndSize(NULL, w->size + PyBytes_GET_SIZE(texts) - 2 -
                                                        (count - 1));
    if (out == NULL) {
        Py_DECREF(texts);
        return NULL;
    }
    char *o = PyBytes_AS_STRING(out);
    Py_ssize_t done = 0, start = 1;
    for (Py_ssize_t i = 0; i < count; i++) {
        Py_ssize_t hole = w->floats[i].hole, end = w->floats[i].text_end;
        memcpy(o, w->buf + done, (size_t)(hole - done));
        o += hole - done;
        memcpy(o, t + start, (size_t)(end - start));
        o += end - start;
        done = hole;
        start = end + 1;
    }
    memcpy(o, w->buf + done, (size_t)(w->size - done));
    Py_DECREF(texts);
    return out;
}

PyDoc_STRVAR(harn_dumps_doc,
"harn_dumps(value, max_levels, float_writer, /)\n--\n\n"
"Harn's canonical JSON of value: the bytes orjson.dumps(value, option=OPT_SORT_KEYS)\n"
"writes, in one walk that also checks the value.  None (never an error) unless\n"
"value holds only exact dict (exact str keys), list, str (no lone surrogate),\n"
"int in [-2**63, 2**64 - 1], bool, None and finite float, and no non-empty\n"
"container max_levels deep (as scan counts).  Floats are written by\n"
"float_writer(list_of_floats), called once with every float in order, which\n"
"must return b'[t1,t2,...]' (orjson.dumps does); its errors propagate.");

static PyObject *speedups_harn_dumps(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "harn_dumps() takes exactly 3 arguments");
        return NULL;
    }
    int max_levels = levels_argument(args[1], "max_levels");
    if (max_levels == 0) {
        return NULL;
    }
    if (!PyCallable_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "float_writer must be callable");
        return NULL;
    }
    Writer w = {NULL, 0, 0, max_levels, NULL, 0, 0};
    if (writer_open(&w) < 0) {
        return NULL;
    }
    PyObject *out = NULL;
    int r = write_item(&w, args[0], 1);
    if (r == 1) {
        out = writer_finish(&w, args[2]);
    }
    else if (r == 0) {
        out = Py_NewRef(Py_None);
    }
    writer_close(&w);
    return out;
}

static PyMethodDef speedups_methods[] = {
    {"scan", (PyCFunction)(void (*)(void))speedups_scan, METH_FASTCALL, scan_doc},
    {"reading_census", (PyCFunction)(void (*)(void))speedups_reading_census, METH_FASTCALL,
     reading_census_doc},
    {"strip_dot_zero", (PyCFunction)(void (*)(void))speedups_strip_dot_zero, METH_FASTCALL,
     strip_dot_zero_doc},
    {"harn_dumps", (PyCFunction)(void (*)(void))speedups_harn_dumps, METH_FASTCALL,
     harn_dumps_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef speedups_module = {
    PyModuleDef_HEAD_INIT,
    "session_contracts_c._speedups",
    "The census of the canonical-JSON fast path and Harn's writer, in C (see jsontext/canonical.py).",
    -1,
    speedups_methods,
};

PyMODINIT_FUNC PyInit__speedups(void)
{
    return PyModule_Create(&speedups_module);
}
