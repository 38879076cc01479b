/*
 * session_contracts._speedups: the census of the canonical-JSON fast path, in C.
 *
 * Both canonical forms (docs/hashing.md) are written by orjson with sorted keys.
 * orjson also writes what is not a JSON value here (tuples, enums, UUIDs,
 * fragments) and writes NaN as null, so a census of the value must vouch for it
 * first.  In Python that census costs as much as orjson itself; here it is one
 * walk over the objects, reading only their types, their keys' widths and the
 * floats.  No Python code runs during the walk (exact types only: no __eq__,
 * no __hash__, no __iter__), so the value cannot change under it.
 *
 * The pure-Python census in _canonical.py is the specification of what this
 * module answers; tests/test_speedups.py holds the two equal.
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

/* Dict tables.  PyDict_Next is a third of the walk's time; on CPython 3.11 and
 * 3.12 a table whose keys are all exact str (the kind json readers build) is
 * read directly.  The layout below is CPython's own (Include/internal/
 * pycore_dict.h, identical in 3.11 and 3.12); module initialisation checks it
 * against PyDict_Next on probe dicts and falls back to PyDict_Next if they
 * disagree.  Any other table (split, or keys of other types) uses PyDict_Next. */
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030D0000 && !defined(Py_LIMITED_API)
#define DIRECT_DICT_LAYOUT 1
typedef struct {
    Py_ssize_t dk_refcnt;
    uint8_t dk_log2_size;
    uint8_t dk_log2_index_bytes;
    uint8_t dk_kind;
    uint32_t dk_version;
    Py_ssize_t dk_usable;
    Py_ssize_t dk_nentries;
    char dk_indices[];
} KeysLayout;
typedef struct {
    PyObject *me_key;
    PyObject *me_value;
} UnicodeEntryLayout;
#define DICT_KEYS_UNICODE_KIND 1
#endif

static int direct_dict_layout = 0;

/* Iteration over a dict's members, directly where the layout allows. */
typedef struct {
    PyObject *dict;
    Py_ssize_t pos;
    Py_ssize_t n;
    void *entries; /* UnicodeEntryLayout *, or NULL: PyDict_Next */
} DictIter;

static inline void dict_iter_init(DictIter *it, PyObject *o)
{
    it->dict = o;
    it->pos = 0;
    it->n = 0;
    it->entries = NULL;
#ifdef DIRECT_DICT_LAYOUT
    PyDictObject *d = (PyDictObject *)o;
    KeysLayout *keys = (KeysLayout *)d->ma_keys;
    if (direct_dict_layout && d->ma_values == NULL && keys->dk_kind == DICT_KEYS_UNICODE_KIND) {
        it->entries = keys->dk_indices + ((size_t)1 << keys->dk_log2_index_bytes);
        it->n = keys->dk_nentries;
    }
#endif
}

static inline int dict_iter_next(DictIter *it, PyObject **key, PyObject **value)
{
#ifdef DIRECT_DICT_LAYOUT
    if (it->entries != NULL) {
        UnicodeEntryLayout *entries = (UnicodeEntryLayout *)it->entries;
        while (it->pos < it->n) {
            UnicodeEntryLayout *e = &entries[it->pos++];
            if (e->me_value != NULL) { /* NULL: a deleted member */
                *key = e->me_key;
                *value = e->me_value;
                return 1;
            }
        }
        return 0;
    }
#endif
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
    PyTypeObject *t = Py_TYPE(o);
    if (t == &PyDict_Type) {
        PREFETCH(((PyDictObject *)o)->ma_keys);
        if (((PyDictObject *)o)->ma_values != NULL) {
            PREFETCH(((PyDictObject *)o)->ma_values);
        }
    }
    else if (t == &PyList_Type) {
        PREFETCH(((PyListObject *)o)->ob_item);
    }
}



/* Push the values of dict o onto next (which has room); 1 plain keys, 0 not, -1 error. */
static int dict_children(PyObject *o, int jcs, Level *next, int *e000, int *astral)
{
    DictIter it;
    PyObject *key, *child;
    dict_iter_init(&it, o);
    int checked = it.entries != NULL; /* such a table holds only exact str keys */
    while (dict_iter_next(&it, &key, &child)) {
        if (!checked && !PyUnicode_CheckExact(key)) {
            return 0;
        }
        if (jcs && key_ranges(key, e000, astral) < 0) {
            return -1;
        }
        next->items[next->size++] = child;
    }
    return 1;
}

/* Whether direct reading gives what PyDict_Next gives, on dicts built and edited
 * as programs do (with deletions, growth past several table sizes). */
static int direct_dict_layout_agrees(void)
{
#ifdef DIRECT_DICT_LAYOUT
    int agrees = 1;
    for (int size = 0; size < 40 && agrees; size += 7) {
        PyObject *d = PyDict_New();
        if (d == NULL) {
            return -1;
        }
        for (int i = 0; i < size; i++) {
            PyObject *key = PyUnicode_FromFormat("k%d", i);
            PyObject *value = PyLong_FromLong(i);
            if (key == NULL || value == NULL || PyDict_SetItem(d, key, value) < 0) {
                Py_XDECREF(key);
                Py_XDECREF(value);
                Py_DECREF(d);
                return -1;
            }
            if (i % 3 == 1 && PyDict_DelItem(d, key) < 0) {
                Py_DECREF(key);
                Py_DECREF(value);
                Py_DECREF(d);
                return -1;
            }
            Py_DECREF(key);
            Py_DECREF(value);
        }
        Level got = {NULL, 0, 0};
        int e000 = 0, astral = 0;
        if (level_reserve(&got, size + 1) < 0) {
            Py_DECREF(d);
            return -1;
        }
        direct_dict_layout = 1;
        int r = dict_children(d, 0, &got, &e000, &astral);
        direct_dict_layout = 0;
        Py_ssize_t pos = 0, at = 0;
        PyObject *key, *value;
        agrees = r == 1;
        while (agrees && PyDict_Next(d, &pos, &key, &value)) {
            agrees = at < got.size && got.items[at] == value;
            at++;
        }
        agrees = agrees && at == got.size;
        PyMem_Free(got.items);
        Py_DECREF(d);
    }
    return agrees;
#else
    return 0;
#endif
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
            if (t == &PyList_Type) {
                Py_ssize_t size = PyList_GET_SIZE(o);
                if (size == 0) {
                    continue;
                }
                if (level >= s->max_levels) {
                    result = 0;
                    break;
                }
                if (level_reserve(&next, size) < 0) {
                    result = -1;
                    break;
                }
                PyObject **list_items = ((PyListObject *)o)->ob_item;
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
            if (t == &PyDict_Type) {
                Py_ssize_t size = PyDict_GET_SIZE(o);
                if (size == 0) {
                    continue;
                }
                if (level >= s->max_levels) {
                    result = 0;
                    break;
                }
                if (level_reserve(&next, size) < 0) {
                    result = -1;
                    break;
                }
                int e000 = 0, astral = 0;
                result = dict_children(o, s->jcs, &next, &e000, &astral);
                if (result != 1) {
                    break;
                }
                if (e000 && astral) {
                    *clash = 1;
                }
                continue;
            }
            result = 0;
            break;
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
    long max_levels = PyLong_AsLong(args[2]);
    if (max_levels == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (max_levels < 1 || max_levels > MAX_LEVELS_ALLOWED) {
        PyErr_SetString(PyExc_ValueError, "max_levels must be between 1 and 1000");
        return NULL;
    }
    Scan s = {jcs, (int)max_levels, 0, 0, 0, 0, NULL, NULL};
    int clash = 0;
    int r = scan_breadth_first(&s, args[0], &clash);
    if (r == 1 && clash) {
        Scan again = {jcs, (int)max_levels, 0, 0, 0, 0, NULL, NULL};
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
 * (session_contracts/_jsonload.py): how many colons orjson would write for it
 * (one per member, plus every colon inside a key or a string), whether some value
 * lies max_depth containers down, and whether some float is 1e18 or more (an
 * integer literal beyond 64 bits reads as such a double).
 */

typedef struct {
    int max_depth;
    Py_ssize_t colons;
    int big_float;
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
"else (colons, big_float): the colons orjson writes for value (one per member\n"
"and every ':' inside a key or string) and whether a float is 1e18 or more.");

static PyObject *speedups_reading_census(PyObject *module, PyObject *const *args,
                                         Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "reading_census() takes exactly 2 arguments");
        return NULL;
    }
    long max_depth = PyLong_AsLong(args[1]);
    if (max_depth == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (max_depth < 1 || max_depth > MAX_LEVELS_ALLOWED) {
        PyErr_SetString(PyExc_ValueError, "max_depth must be between 1 and 1000");
        return NULL;
    }
    Reading r = {(int)max_depth, 0, 0};
    int ok = read_value(&r, args[0], 1);
    if (ok < 0) {
        return NULL;
    }
    if (ok == 0) {
        Py_RETURN_NONE;
    }
    return Py_BuildValue("(nO)", r.colons, r.big_float ? Py_True : Py_False);
}

static PyMethodDef speedups_methods[] = {
    {"scan", (PyCFunction)(void (*)(void))speedups_scan, METH_FASTCALL, scan_doc},
    {"reading_census", (PyCFunction)(void (*)(void))speedups_reading_census, METH_FASTCALL,
     reading_census_doc},
    {"strip_dot_zero", (PyCFunction)(void (*)(void))speedups_strip_dot_zero, METH_FASTCALL,
     strip_dot_zero_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef speedups_module = {
    PyModuleDef_HEAD_INIT,
    "session_contracts._speedups",
    "The census of the canonical-JSON fast path, in C (see _canonical.py).",
    -1,
    speedups_methods,
};

PyMODINIT_FUNC PyInit__speedups(void)
{
    int agrees = direct_dict_layout_agrees();
    if (agrees < 0) {
        return NULL;
    }
    direct_dict_layout = agrees;
    PyObject *module = PyModule_Create(&speedups_module);
    if (module == NULL) {
        return NULL;
    }
    if (PyModule_AddIntConstant(module, "DIRECT_DICT_LAYOUT", agrees) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
