/*
 * session_contracts._linescan: which of a fixed set of byte strings occur in a line.
 *
 * check's secret screen asks, for every captured line, which literals of the
 * redaction policy's detectors occur in it (conformance/judge/captured.py).
 * An RE2 set answers that too, but its DFA costs some twenty instructions a
 * byte.  Here a needle of one byte is found with memchr; a longer one is
 * compared only where the line holds one of the pairs of adjacent bytes that
 * start a needle (a bitmap of the pairs, 8 KB, whose rank gives each pair its
 * list of needles).  Where the processor has AVX2, the positions are first
 * screened 32 at a time on the first three bytes of each needle (its first two
 * and any third, for a needle of two): each such fingerprint is put in one of
 * sixteen buckets, and a position passes when some bucket holds the low and the
 * high nibble of each of its three bytes (six 16-entry tables a group of eight
 * buckets, Hyperscan's "shufti"/"Teddy").  On captured recap lines about one
 * position in a hundred passes, to be tested exactly like every position of
 * the byte-by-byte loop used without AVX2.
 *
 * A "folded" needle (lowercase) is searched as in the line with its ASCII
 * letters lowered, exactly ``needle in line.lower()`` for bytes: its lowercase
 * ASCII letters match either case, every other byte only itself.
 *
 * The RE2 set stays as the fallback where this module is not built;
 * tests/unit/test_linescan.py holds the three ways (AVX2, byte by byte, RE2) equal.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HAVE_AVX2_SCREEN 1
#else
#define HAVE_AVX2_SCREEN 0
#endif

#define PAIRS 65536
#define GROUPS 2 /* of eight buckets: one byte of bits each */
#define BUCKETS (8 * GROUPS)
#define WIDTH 3  /* bytes of a fingerprint */
/* Past this many fingerprints the buckets pass nearly every position: the
 * byte-by-byte loop is as fast, and the screen is not built. */
#define SCREEN_MAX_PRINTS 256

/* Whether found() screens with AVX2: the processor has it, and the tests have
 * not turned it off (_use_avx2) to compare the two loops. */
static int use_avx2 = 0;

/* The screen's tables: for each group of eight buckets and each nibble of a
 * fingerprint's bytes (low, then high, of the first, second and third byte),
 * the buckets holding a fingerprint with that nibble there. */
typedef struct {
    unsigned char table[GROUPS][2 * WIDTH][16];
} Buckets;

typedef struct {
    PyObject_HEAD
    Py_ssize_t count;       /* needles */
    unsigned char **bytes;  /* each needle (lowercase when folded) */
    Py_ssize_t *length;
    unsigned char *folded;
    uint64_t pair_bits[PAIRS / 64];
    /* the rank of a pair among those set: pairs set in the words before */
    uint32_t word_rank[PAIRS / 64];
    Py_ssize_t pair_count;  /* distinct pairs set */
    /* needles (of two bytes or more) by the rank of their first two bytes, as a
     * line may write them: entry_first[r] .. entry_first[r + 1] index into ids */
    uint32_t *entry_first;
    uint32_t *entry_ids;
    int screened;  /* the buckets are built */
    Buckets buckets;
} NeedleSet;

static inline unsigned char lower_ascii(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c;
}

static inline int bit_count(uint64_t word)
{
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_popcountll(word);
#else
    int count = 0;
    for (; word; word &= word - 1) {
        count++;
    }
    return count;
#endif
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

static inline int pair_is_set(const NeedleSet *self, unsigned pair)
{
    return (int)((self->pair_bits[pair >> 6] >> (pair & 63)) & 1);
}

static inline uint32_t pair_rank(const NeedleSet *self, unsigned pair)
{
    uint64_t below = self->pair_bits[pair >> 6] & (((uint64_t)1 << (pair & 63)) - 1);
    return self->word_rank[pair >> 6] + (uint32_t)bit_count(below);
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
    PyMem_Free(self->entry_first);
    PyMem_Free(self->entry_ids);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Calls visit(pair) for each pair needle i may start with, as a line may write it. */
#define FOR_EACH_PAIR(self, i, pair, body)                                              \
    do {                                                                                \
        unsigned char a_[2], b_[2];                                                     \
        int na_ = variants((self)->bytes[i][0], (self)->folded[i], a_);                 \
        int nb_ = variants((self)->bytes[i][1], (self)->folded[i], b_);                 \
        for (int x_ = 0; x_ < na_; x_++) {                                              \
            for (int y_ = 0; y_ < nb_; y_++) {                                          \
                unsigned pair = (unsigned)a_[x_] | ((unsigned)b_[y_] << 8);             \
                body;                                                                   \
            }                                                                           \
        }                                                                               \
    } while (0)

/* How many fingerprints bucket b passes: the product of its six nibble sets' sizes. */
static long bucket_size(const Buckets *b, int bucket)
{
    long size = 1;
    for (int at = 0; at < 2 * WIDTH; at++) {
        int count = 0;
        for (int nibble = 0; nibble < 16; nibble++) {
            count += (b->table[bucket / 8][at][nibble] >> (bucket % 8)) & 1;
        }
        size *= count;
    }
    return size;
}

/* Puts a fingerprint (known: its first `known` bytes, any byte after them) in a bucket. */
static void bucket_add(Buckets *b, int bucket, const unsigned char print[WIDTH], int known)
{
    unsigned char bit = (unsigned char)(1u << (bucket % 8));
    for (int at = 0; at < WIDTH; at++) {
        for (int nibble = 0; nibble < 16; nibble++) {
            int low = at >= known || (print[at] & 15) == nibble;
            int high = at >= known || (print[at] >> 4) == nibble;
            b->table[bucket / 8][2 * at][nibble] |= low ? bit : 0;
            b->table[bucket / 8][2 * at + 1][nibble] |= high ? bit : 0;
        }
    }
}

/* Into the bucket it grows least (greedy: the search stays exact whatever the
 * choice, only the screen's passes vary). */
static void bucket_place(Buckets *b, const unsigned char print[WIDTH], int known)
{
    int best = 0;
    long best_growth = -1;
    for (int bucket = 0; bucket < BUCKETS; bucket++) {
        Buckets trial = *b;
        bucket_add(&trial, bucket, print, known);
        long growth = bucket_size(&trial, bucket) - bucket_size(b, bucket);
        if (best_growth < 0 || growth < best_growth) {
            best = bucket;
            best_growth = growth;
        }
    }
    bucket_add(b, best, print, known);
}

/* Every fingerprint of every needle of two bytes or more, as a line may write
 * it; the needles of two bytes first (they fill a bucket's third byte). */
static void build_buckets(NeedleSet *self)
{
    memset(&self->buckets, 0, sizeof(Buckets));
    long prints = 0;
    for (Py_ssize_t i = 0; i < self->count; i++) {
        if (self->length[i] >= 2) {
            long variants_of = 1;
            for (int at = 0; at < WIDTH && at < self->length[i]; at++) {
                unsigned char options[2];
                variants_of *= variants(self->bytes[i][at], self->folded[i], options);
            }
            prints += variants_of;
        }
    }
    if (prints > SCREEN_MAX_PRINTS) {
        return;
    }
    for (int shorter = 1; shorter >= 0; shorter--) {
        for (Py_ssize_t i = 0; i < self->count; i++) {
            Py_ssize_t size = self->length[i];
            if (size < 2 || (size == 2) != shorter) {
                continue;
            }
            int known = size < WIDTH ? (int)size : WIDTH;
            unsigned char options[WIDTH][2];
            int counts[WIDTH] = {1, 1, 1};
            for (int at = 0; at < known; at++) {
                counts[at] = variants(self->bytes[i][at], self->folded[i], options[at]);
            }
            for (int x = 0; x < counts[0]; x++) {
                for (int y = 0; y < counts[1]; y++) {
                    for (int z = 0; z < counts[2]; z++) {
                        unsigned char print[WIDTH] = {options[0][x], options[1][y],
                                                      known > 2 ? options[2][z] : 0};
                        bucket_place(&self->buckets, print, known);
                    }
                }
            }
        }
    }
    self->screened = 1;
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
    if (!self->bytes || !self->length || !self->folded) {
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
            FOR_EACH_PAIR(self, i, pair, {
                self->pair_bits[pair >> 6] |= (uint64_t)1 << (pair & 63);
                entries++;
            });
        }
    }
    Py_DECREF(seq);
    uint32_t rank = 0;
    for (Py_ssize_t word = 0; word < PAIRS / 64; word++) {
        self->word_rank[word] = rank;
        rank += (uint32_t)bit_count(self->pair_bits[word]);
    }
    self->pair_count = rank;
    /* counts -> offsets, then fill */
    self->entry_first = PyMem_Calloc((size_t)rank + 1, sizeof(uint32_t));
    self->entry_ids = PyMem_Malloc((size_t)(entries ? entries : 1) * sizeof(uint32_t));
    uint32_t *fill = PyMem_Calloc((size_t)rank + 1, sizeof(uint32_t));
    if (self->entry_first == NULL || self->entry_ids == NULL || fill == NULL) {
        PyMem_Free(fill);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (self->length[i] >= 2) {
            FOR_EACH_PAIR(self, i, pair, { self->entry_first[pair_rank(self, pair) + 1]++; });
        }
    }
    for (uint32_t r = 0; r < rank; r++) {
        self->entry_first[r + 1] += self->entry_first[r];
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (self->length[i] >= 2) {
            FOR_EACH_PAIR(self, i, pair, {
                uint32_t r = pair_rank(self, pair);
                self->entry_ids[self->entry_first[r] + fill[r]++] = (uint32_t)i;
            });
        }
    }
    PyMem_Free(fill);
    build_buckets(self);
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

/* One search of a line: what is found so far. */
typedef struct {
    const NeedleSet *set;
    const unsigned char *s;
    Py_ssize_t n;
    unsigned char *found;  /* per needle */
    unsigned char *done;   /* per pair: every needle it starts is found */
    Py_ssize_t left;       /* needles of two bytes or more not found yet */
} Search;

/* The needles that start at position p (p + 1 < n); nonzero once none is left. */
static inline int visit(Search *search, Py_ssize_t p)
{
    const NeedleSet *self = search->set;
    unsigned pair = (unsigned)search->s[p] | ((unsigned)search->s[p + 1] << 8);
    if (!pair_is_set(self, pair)) {
        return 0;
    }
    uint32_t rank = pair_rank(self, pair);
    if (search->done[rank]) {
        return 0;
    }
    int all = 1;
    for (uint32_t k = self->entry_first[rank]; k < self->entry_first[rank + 1]; k++) {
        uint32_t id = self->entry_ids[k];
        if (search->found[id]) {
            continue;
        }
        if (self->length[id] <= search->n - p && matches_at(self, id, search->s + p)) {
            search->found[id] = 1;
            search->left--;
        }
        else {
            all = 0;
        }
    }
    search->done[rank] = (unsigned char)all;
    return search->left == 0;
}

static void search_bytewise(Search *search, Py_ssize_t from)
{
    for (Py_ssize_t p = from; p + 1 < search->n; p++) {
        if (visit(search, p)) {
            return;
        }
    }
}

#if HAVE_AVX2_SCREEN
#define TABLE(g, at) \
    _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)self->buckets.table[g][at]))
#define GROUP_PASSES(g)                                                                   \
    _mm256_and_si256(                                                                     \
        _mm256_and_si256(                                                                 \
            _mm256_and_si256(_mm256_shuffle_epi8(t##g##0, low0),                          \
                             _mm256_shuffle_epi8(t##g##1, high0)),                        \
            _mm256_and_si256(_mm256_shuffle_epi8(t##g##2, low1),                          \
                             _mm256_shuffle_epi8(t##g##3, high1))),                       \
        _mm256_and_si256(_mm256_shuffle_epi8(t##g##4, low2),                              \
                         _mm256_shuffle_epi8(t##g##5, high2)))

__attribute__((target("avx2"))) static void search_avx2(Search *search)
{
    const NeedleSet *self = search->set;
    const unsigned char *s = search->s;
    Py_ssize_t n = search->n;
    const __m256i t00 = TABLE(0, 0), t01 = TABLE(0, 1), t02 = TABLE(0, 2), t03 = TABLE(0, 3),
                  t04 = TABLE(0, 4), t05 = TABLE(0, 5);
    const __m256i t10 = TABLE(1, 0), t11 = TABLE(1, 1), t12 = TABLE(1, 2), t13 = TABLE(1, 3),
                  t14 = TABLE(1, 4), t15 = TABLE(1, 5);
    const __m256i nibble = _mm256_set1_epi8(0x0f);
    const __m256i zero = _mm256_setzero_si256();
    Py_ssize_t p = 0;
    /* positions p .. p + 31, their fingerprints' third bytes ending at p + 33 */
    for (; p + 34 <= n; p += 32) {
        __m256i first = _mm256_loadu_si256((const __m256i *)(s + p));
        __m256i second = _mm256_loadu_si256((const __m256i *)(s + p + 1));
        __m256i third = _mm256_loadu_si256((const __m256i *)(s + p + 2));
        __m256i low0 = _mm256_and_si256(first, nibble);
        __m256i high0 = _mm256_and_si256(_mm256_srli_epi16(first, 4), nibble);
        __m256i low1 = _mm256_and_si256(second, nibble);
        __m256i high1 = _mm256_and_si256(_mm256_srli_epi16(second, 4), nibble);
        __m256i low2 = _mm256_and_si256(third, nibble);
        __m256i high2 = _mm256_and_si256(_mm256_srli_epi16(third, 4), nibble);
        __m256i buckets = _mm256_or_si256(GROUP_PASSES(0), GROUP_PASSES(1));
        uint32_t passes = ~(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(buckets, zero));
        while (passes) {
            if (visit(search, p + __builtin_ctz(passes))) {
                return;
            }
            passes &= passes - 1;
        }
    }
    search_bytewise(search, p);
}
#undef TABLE
#undef GROUP_PASSES
#endif

/* found(line: bytes) -> tuple of the indices of the needles the line holds, ascending */
static PyObject *needle_set_found(NeedleSet *self, PyObject *arg)
{
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) {
        return NULL;
    }
    Search search = {self, view.buf, view.len, NULL, NULL, 0};
    search.found = PyMem_Calloc((size_t)(self->count ? self->count : 1), 1);
    search.done = PyMem_Calloc((size_t)self->pair_count + 1, 1);
    if (search.found == NULL || search.done == NULL) {
        PyMem_Free(search.found);
        PyMem_Free(search.done);
        PyBuffer_Release(&view);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t id = 0; id < self->count; id++) {
        if (self->length[id] == 1) {
            search.found[id] = (unsigned char)single_byte_found(self, id, search.s, search.n);
        }
        else {
            search.left++;
        }
    }
    if (search.left > 0) {
#if HAVE_AVX2_SCREEN
        if (use_avx2 && self->screened) {
            search_avx2(&search);
        }
        else {
            search_bytewise(&search, 0);
        }
#else
        search_bytewise(&search, 0);
#endif
    }
    PyBuffer_Release(&view);
    Py_ssize_t total = 0;
    for (Py_ssize_t id = 0; id < self->count; id++) {
        total += search.found[id];
    }
    PyObject *out = PyTuple_New(total);
    if (out != NULL) {
        Py_ssize_t at = 0;
        for (Py_ssize_t id = 0; id < self->count; id++) {
            if (search.found[id]) {
                PyObject *index = PyLong_FromSsize_t(id);
                if (index == NULL) {
                    Py_CLEAR(out);
                    break;
                }
                PyTuple_SET_ITEM(out, at++, index);
            }
        }
    }
    PyMem_Free(search.found);
    PyMem_Free(search.done);
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

/* opening_count(raw) -> the bytes '{' and '[' in raw: a bound on its nesting
 * that the journal's quick check reads for each row (one pass, not two). */
static PyObject *opening_count(PyObject *module, PyObject *arg)
{
    (void)module;
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) {
        return NULL;
    }
    const unsigned char *s = view.buf;
    Py_ssize_t count = 0;
    for (Py_ssize_t i = 0; i < view.len; i++) {
        count += (s[i] == '{') + (s[i] == '[');
    }
    PyBuffer_Release(&view);
    return PyLong_FromSsize_t(count);
}

/* _use_avx2(flag) -> whether found() screened with AVX2 before: the tests turn
 * it off to hold the byte-by-byte loop to the same answers.  The flag only
 * takes where the processor has AVX2. */
static PyObject *set_use_avx2(PyObject *module, PyObject *arg)
{
    int flag = PyObject_IsTrue(arg);
    if (flag < 0) {
        return NULL;
    }
    int before = use_avx2;
#if HAVE_AVX2_SCREEN
    use_avx2 = flag && __builtin_cpu_supports("avx2");
#endif
    return PyBool_FromLong(before);
}

static PyMethodDef linescan_methods[] = {
    {"colon_facts", colon_facts, METH_O,
     "colon_facts(raw) -> (count of ':' bytes, whether the bytes \\u003 occur)"},
    {"opening_count", opening_count, METH_O,
     "opening_count(raw) -> how many bytes of raw are '{' or '['"},
    {"_use_avx2", set_use_avx2, METH_O,
     "_use_avx2(flag) -> whether found() screened with AVX2 before (for the tests)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef linescan_module = {
    PyModuleDef_HEAD_INIT, "_linescan",
    "Byte scans of a JSON line: the secret screen's needles, the strict reader's colons.",
    -1, linescan_methods,
};

PyMODINIT_FUNC PyInit__linescan(void)
{
#if HAVE_AVX2_SCREEN
    __builtin_cpu_init();
    use_avx2 = __builtin_cpu_supports("avx2");
#endif
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
