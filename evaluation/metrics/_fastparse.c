/*
 * Fast reader for large, regular run and qrels files (optional accelerator).
 *
 * parse(files, kinds) tokenizes every file, interns question ids and documents/answers in
 * two tables shared by all files, and returns
 *     (qid_strings, item_strings, [per file: (qid_ids, item_ids, values, ranks, tag) or None])
 * where qid_ids/item_ids are int32 buffers, values float64 (qrels grade / run score, NaN if
 * absent) and ranks int64 (QA runs only).  kind 0 = TREC qrels "qid iter docno grade",
 * kind 1 = TREC run "qid Q0 docno rank score tag [ignored...]", kind 2 = QA TSV
 * "qid<TAB>rank<TAB>answer[<TAB>score]".
 *
 * It accepts only a strict subset of what the Python parsers accept (plain ASCII
 * separators, plain decimal numbers, UTF-8); for anything else a file's entry is None and
 * the caller uses the Python parser, which also produces the error messages.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct { const char *p; Py_ssize_t n; } Span;

typedef struct { int32_t id1; uint32_t tag; } Slot;  /* id + 1 (0 = empty), hash tag */

typedef struct {
    Span *keys;      /* interned strings, by id */
    Slot *slots;
    uint64_t *hashes;
    Py_ssize_t count, cap_keys, nslots;
} Interner;

static int intern_init(Interner *t, Py_ssize_t hint) {
    Py_ssize_t n = 1024;
    while (n < hint * 2) n <<= 1;
    t->nslots = n;
    t->slots = calloc((size_t)n, sizeof(Slot));
    t->cap_keys = hint > 16 ? hint : 16;
    t->keys = malloc((size_t)t->cap_keys * sizeof(Span));
    t->hashes = malloc((size_t)t->cap_keys * sizeof(uint64_t));
    t->count = 0;
    return t->slots && t->keys && t->hashes ? 0 : -1;
}

static void intern_free(Interner *t) { free(t->slots); free(t->keys); free(t->hashes); }

static uint64_t hash_bytes(const char *p, Py_ssize_t n) {
    uint64_t h = 1469598103934665603ULL;
    for (Py_ssize_t i = 0; i < n; i++) { h ^= (unsigned char)p[i]; h *= 1099511628211ULL; }
    h ^= h >> 33; h *= 0xff51afd7ed558ccdULL; h ^= h >> 33;  /* mix all bits down */
    return h;
}

static int intern_grow(Interner *t) {
    Py_ssize_t n = t->nslots * 2;
    Slot *slots = calloc((size_t)n, sizeof(Slot));
    if (!slots) return -1;
    for (Py_ssize_t id = 0; id < t->count; id++) {
        Py_ssize_t i = (Py_ssize_t)(t->hashes[id] & (uint64_t)(n - 1));
        while (slots[i].id1) i = (i + 1) & (n - 1);
        slots[i].id1 = (int32_t)(id + 1);
        slots[i].tag = (uint32_t)(t->hashes[id] >> 32);
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = n;
    return 0;
}

/* id of the string, adding it if new; -1 on memory failure */
static int32_t intern(Interner *t, const char *p, Py_ssize_t n) {
    uint64_t h = hash_bytes(p, n);
    Py_ssize_t mask = t->nslots - 1, i = (Py_ssize_t)(h & (uint64_t)mask);
    uint32_t tag = (uint32_t)(h >> 32);
    while (t->slots[i].id1) {
        if (t->slots[i].tag == tag) {
            int32_t id = t->slots[i].id1 - 1;
            if (t->keys[id].n == n && memcmp(t->keys[id].p, p, (size_t)n) == 0) return id;
        }
        i = (i + 1) & mask;
    }
    if (t->count >= INT32_MAX - 1) return -1;
    if (t->count == t->cap_keys) {
        Py_ssize_t cap = t->cap_keys * 2;
        Span *k = realloc(t->keys, (size_t)cap * sizeof(Span));
        if (!k) return -1;
        t->keys = k;
        uint64_t *hs = realloc(t->hashes, (size_t)cap * sizeof(uint64_t));
        if (!hs) return -1;
        t->hashes = hs;
        t->cap_keys = cap;
    }
    int32_t id = (int32_t)t->count++;
    t->keys[id].p = p; t->keys[id].n = n; t->hashes[id] = h;
    t->slots[i].id1 = id + 1;
    t->slots[i].tag = tag;
    if (t->count * 2 > t->nslots && intern_grow(t) < 0) return -1;
    return id;
}

/* Unicode whitespace that Python's str.split()/strip() would treat as a separator; such
 * text goes to the Python parser. */
static int has_odd_space(const unsigned char *p, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char c = p[i];
        if (c == 0 || c == 0x0b || c == 0x0c || (c >= 0x1c && c <= 0x1f) || c == '\r') return 1;
        if (c == 0xc2 && i + 1 < n && (p[i + 1] == 0x85 || p[i + 1] == 0xa0)) return 1;
        if (c == 0xe1 && i + 2 < n && p[i + 1] == 0x9a && p[i + 2] == 0x80) return 1;
        if (c == 0xe2 && i + 2 < n) {
            unsigned char a = p[i + 1], b = p[i + 2];
            if (a == 0x80 && ((b >= 0x80 && b <= 0x8a) || b == 0xa8 || b == 0xa9 || b == 0xaf))
                return 1;
            if (a == 0x81 && b == 0x9f) return 1;
        }
        if (c == 0xe3 && i + 2 < n && p[i + 1] == 0x80 && p[i + 2] == 0x80) return 1;
    }
    return 0;
}

/* strict decimal: [+-]?digits[.digits]?([eE][+-]?digits)? ; 0 = ok */
static int parse_number(const char *p, Py_ssize_t n, double *out) {
    Py_ssize_t i = 0, digits = 0;
    char buf[64];
    if (n <= 0 || n >= 63) return -1;
    if (p[i] == '+' || p[i] == '-') i++;
    while (i < n && p[i] >= '0' && p[i] <= '9') { i++; digits++; }
    if (i < n && p[i] == '.') { i++; while (i < n && p[i] >= '0' && p[i] <= '9') { i++; digits++; } }
    if (!digits) return -1;
    if (i < n && (p[i] == 'e' || p[i] == 'E')) {
        Py_ssize_t e = 0; i++;
        if (i < n && (p[i] == '+' || p[i] == '-')) i++;
        while (i < n && p[i] >= '0' && p[i] <= '9') { i++; e++; }
        if (!e) return -1;
    }
    if (i != n) return -1;
    memcpy(buf, p, (size_t)n); buf[n] = 0;
    *out = strtod(buf, NULL);
    return isfinite(*out) ? 0 : -1;
}

/* [+-]?digits -> integer (qrels grade) */
static int parse_int(const char *p, Py_ssize_t n, long long *out) {
    Py_ssize_t i = 0; long long v = 0; int neg = 0;
    if (n <= 0 || n > 18) return -1;
    if (p[0] == '+' || p[0] == '-') { neg = p[0] == '-'; i++; }
    if (i == n) return -1;
    for (; i < n; i++) { if (p[i] < '0' || p[i] > '9') return -1; v = v * 10 + (p[i] - '0'); }
    *out = neg ? -v : v;
    return 0;
}

/* positive rank: \+?0*[1-9]\d* */
static int parse_rank(const char *p, Py_ssize_t n, long long *out) {
    long long v;
    if (n > 0 && p[0] == '-') return -1;
    if (parse_int(p, n, &v) < 0 || v < 1) return -1;
    *out = v;
    return 0;
}

typedef struct { int32_t *q, *item; double *val; long long *rank; Py_ssize_t n, cap; } Cols;

static int cols_push(Cols *c, int32_t q, int32_t item, double val, long long rank) {
    if (c->n == c->cap) {
        Py_ssize_t cap = c->cap ? c->cap * 2 : 4096;
        int32_t *a = realloc(c->q, (size_t)cap * 4);
        if (!a) return -1;
        c->q = a;
        int32_t *b = realloc(c->item, (size_t)cap * 4);
        if (!b) return -1;
        c->item = b;
        double *v = realloc(c->val, (size_t)cap * 8);
        if (!v) return -1;
        c->val = v;
        long long *r = realloc(c->rank, (size_t)cap * 8);
        if (!r) return -1;
        c->rank = r;
        c->cap = cap;
    }
    c->q[c->n] = q; c->item[c->n] = item; c->val[c->n] = val; c->rank[c->n] = rank; c->n++;
    return 0;
}

static void cols_free(Cols *c) { free(c->q); free(c->item); free(c->val); free(c->rank); }

#define MAXF 8
/* 1 = parsed, 0 = irregular (use Python), -1 = memory error */
static int parse_file(const char *data, Py_ssize_t size, int kind, Interner *qt, Interner *it,
                      Cols *out, Span *tag) {
    Py_ssize_t pos = 0;
    tag->p = NULL; tag->n = 0;
    if (size >= 3 && (unsigned char)data[0] == 0xef && (unsigned char)data[1] == 0xbb &&
        (unsigned char)data[2] == 0xbf) pos = 3;
    while (pos < size) {
        const char *line = data + pos;
        const char *nl = memchr(line, '\n', (size_t)(size - pos));
        Py_ssize_t len = nl ? nl - line : size - pos;
        pos += len + 1;
        if (len > 0 && line[len - 1] == '\r') len--;
        if (len > 65536) return 0;
        Py_ssize_t i = 0;
        while (i < len && (line[i] == ' ' || line[i] == '\t')) i++;
        if (i == len) continue;                              /* blank */
        if (has_odd_space((const unsigned char *)line, len)) return 0;
        Span f[MAXF]; int nf = 0;
        if (kind == 2) {                                     /* tab-separated, no padding */
            Py_ssize_t start = 0;
            for (Py_ssize_t j = 0; j <= len; j++) {
                if (j == len || line[j] == '\t') {
                    if (nf == MAXF) return 0;
                    f[nf].p = line + start; f[nf].n = j - start; nf++;
                    start = j + 1;
                }
            }
            if (nf < 3 || nf > 4) return 0;
            for (int k = 0; k < nf; k++) {
                if (f[k].n && (f[k].p[0] == ' ' || f[k].p[f[k].n - 1] == ' ')) return 0;
            }
            if (!f[0].n || !f[2].n) return 0;
        } else {
            if (line[i] == '#') continue;                    /* comment */
            Py_ssize_t j = 0;
            while (j < len) {
                while (j < len && (line[j] == ' ' || line[j] == '\t')) j++;
                if (j == len) break;
                Py_ssize_t s = j;
                while (j < len && line[j] != ' ' && line[j] != '\t') j++;
                if (nf < MAXF) { f[nf].p = line + s; f[nf].n = j - s; }
                nf++;
            }
            if (kind == 0 && nf != 4) return 0;
            if (kind == 1 && nf < 6) return 0;
        }
        double val = NAN; long long rank = 0, g;
        int32_t q, item;
        if (kind == 0) {
            if (parse_int(f[3].p, f[3].n, &g) < 0) return 0;
            val = (double)g;
            item = intern(it, f[2].p, f[2].n);
        } else if (kind == 1) {
            if (parse_number(f[4].p, f[4].n, &val) < 0) return 0;
            item = intern(it, f[2].p, f[2].n);
            if (!tag->p) *tag = f[5];
        } else {
            if (parse_rank(f[1].p, f[1].n, &rank) < 0) return 0;
            if (nf == 4 && f[3].n && parse_number(f[3].p, f[3].n, &val) < 0) return 0;
            item = intern(it, f[2].p, f[2].n);
        }
        q = intern(qt, f[0].p, f[0].n);
        if (q < 0 || item < 0) return -1;
        if (cols_push(out, q, item, val, rank) < 0) return -1;
    }
    return out->n > 0 ? 1 : 0;
}

static PyObject *strings_of(Interner *t) {
    PyObject *list = PyList_New(t->count);
    if (!list) return NULL;
    for (Py_ssize_t i = 0; i < t->count; i++) {
        PyObject *s = PyUnicode_DecodeUTF8(t->keys[i].p, t->keys[i].n, "strict");
        if (!s) { Py_DECREF(list); return NULL; }
        PyList_SET_ITEM(list, i, s);
    }
    return list;
}

static PyObject *parse(PyObject *self, PyObject *args) {
    PyObject *files, *kinds;
    if (!PyArg_ParseTuple(args, "O!O!", &PyList_Type, &files, &PyList_Type, &kinds)) return NULL;
    Py_ssize_t nfiles = PyList_GET_SIZE(files);
    if (PyList_GET_SIZE(kinds) != nfiles) {
        PyErr_SetString(PyExc_ValueError, "one kind per file");
        return NULL;
    }
    Py_ssize_t total = 0;
    for (Py_ssize_t k = 0; k < nfiles; k++) {
        if (!PyBytes_Check(PyList_GET_ITEM(files, k))) {
            PyErr_SetString(PyExc_TypeError, "files must be bytes");
            return NULL;
        }
        total += PyBytes_GET_SIZE(PyList_GET_ITEM(files, k));
    }
    Interner qt, it;
    /* start small and grow: a table sized for the worst case spreads a few distinct
     * strings over many cache lines */
    if (intern_init(&qt, 1024) < 0 || intern_init(&it, 1 << 15) < 0) return PyErr_NoMemory();
    PyObject *results = PyList_New(nfiles), *ret = NULL;
    int failed = 0;
    for (Py_ssize_t k = 0; k < nfiles && results; k++) {
        PyObject *b = PyList_GET_ITEM(files, k);
        int kind = (int)PyLong_AsLong(PyList_GET_ITEM(kinds, k));
        Cols c = {0}; Span tag;
        int ok;
        Py_BEGIN_ALLOW_THREADS
        ok = parse_file(PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b), kind, &qt, &it, &c, &tag);
        Py_END_ALLOW_THREADS
        if (ok < 0) { cols_free(&c); failed = 1; PyErr_NoMemory(); break; }
        if (ok == 0) { cols_free(&c); Py_INCREF(Py_None); PyList_SET_ITEM(results, k, Py_None); continue; }
        PyObject *tagobj = tag.p ? PyUnicode_DecodeUTF8(tag.p, tag.n, "strict") : Py_NewRef(Py_None);
        if (!tagobj) { PyErr_Clear(); tagobj = Py_NewRef(Py_None); }
        PyObject *tup = Py_BuildValue("(y#y#y#y#N)", (char *)c.q, c.n * 4, (char *)c.item, c.n * 4,
                                      (char *)c.val, c.n * 8, (char *)c.rank, c.n * 8, tagobj);
        cols_free(&c);
        if (!tup) { failed = 1; break; }
        PyList_SET_ITEM(results, k, tup);
    }
    if (!failed && results) {
        PyObject *qs = strings_of(&qt), *items = qs ? strings_of(&it) : NULL;
        if (qs && items) {
            ret = Py_BuildValue("(NNN)", qs, items, results);
            results = NULL;
        } else {
            Py_XDECREF(qs);
            if (PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {  /* not UTF-8: Python path */
                PyErr_Clear();
                ret = Py_NewRef(Py_None);
            }
        }
    }
    Py_XDECREF(results);
    intern_free(&qt); intern_free(&it);
    return ret;
}

static PyMethodDef methods[] = {
    {"parse", parse, METH_VARARGS, "Tokenize and intern regular run/qrels files."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fastparse", NULL, -1, methods};

PyMODINIT_FUNC PyInit__fastparse(void) { return PyModule_Create(&module); }
