/*
 * Fast reader for large, regular run and qrels files (optional accelerator).
 *
 * parse(files, kinds) reads every file and returns
 *     (qid_strings, item_blob, item_offsets, item_topic, [per file: (qid_ids, item_ids,
 *      values, tag) or None])
 * kind 0 = TREC qrels "qid iter docno grade", kind 1 = TREC run "qid Q0 docno rank score tag
 * [ignored...]", kind 2 = QA TSV "qid<TAB>rank<TAB>answer[<TAB>score]".
 *
 * Question ids are interned in one table shared by all files.  Documents and answers are
 * interned *per question*: an item is one (question, string) pair, so a run's row and a
 * judgment are the same item exactly when they match, and each question's table stays
 * small enough to live in the cache.  The distinct item strings are returned as one UTF-8
 * blob with int64 offsets (item i is blob[off[i]:off[i+1]]) and the question of each item;
 * Python strings are made only on demand (take()).
 *
 * Every file's rows come back in the order the Python parsers give: qrels in file order;
 * runs grouped by question in order of first appearance, TREC runs by score descending,
 * then docno descending (trec_eval's order), QA runs by rank.  qid_ids/item_ids are int32
 * buffers, values float64 (qrels grade, run score; NaN when a QA run has none).
 *
 * It accepts only a strict subset of what the Python parsers accept (UTF-8 without the
 * characters the one text rule refuses -- refused_at --, plain ASCII separators, plain
 * decimal numbers, no duplicates); for anything else a file's entry is None and the caller
 * uses the Python parser, which also produces the error messages.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct { const char *p; Py_ssize_t n; } Span;

/* -- string store and hash tables ------------------------------------------------------- */

/* Distinct strings copied into one growing blob; string i is blob[off[i]:off[i+1]]. */
typedef struct {
    char *blob;
    int64_t *off;
    int32_t *topic;          /* question id of each item (items only) */
    Py_ssize_t count, cap, bytes, bcap;
} Store;

typedef struct { int32_t id1; uint32_t h; } Slot;   /* id + 1 (0 = empty), 32-bit hash */

typedef struct { Slot *slots; uint32_t mask; int32_t count; } Table;

static int store_init(Store *s, Py_ssize_t cap, Py_ssize_t bcap) {
    s->count = 0; s->cap = cap; s->bytes = 0; s->bcap = bcap;
    s->blob = malloc((size_t)bcap);
    s->off = malloc((size_t)(cap + 1) * sizeof(int64_t));
    s->topic = malloc((size_t)cap * sizeof(int32_t));
    if (!s->blob || !s->off || !s->topic) return -1;
    s->off[0] = 0;
    return 0;
}

/* room for cap strings of bcap bytes in all (never less than there is) */
static int store_reserve(Store *s, Py_ssize_t cap, Py_ssize_t bcap) {
    if (cap > s->cap) {
        int64_t *off = realloc(s->off, (size_t)(cap + 1) * sizeof(int64_t));
        if (!off) return -1;
        s->off = off;
        int32_t *tp = realloc(s->topic, (size_t)cap * sizeof(int32_t));
        if (!tp) return -1;
        s->topic = tp;
        s->cap = cap;
    }
    if (bcap > s->bcap) {
        char *b = realloc(s->blob, (size_t)bcap);
        if (!b) return -1;
        s->blob = b;
        s->bcap = bcap;
    }
    return 0;
}

static void store_free(Store *s) { free(s->blob); free(s->off); free(s->topic); }

static int32_t store_add(Store *s, const char *p, Py_ssize_t n, int32_t topic) {
    if (s->count >= INT32_MAX - 1) return -1;
    if (s->count == s->cap) {
        Py_ssize_t cap = s->cap * 2;
        int64_t *off = realloc(s->off, (size_t)(cap + 1) * sizeof(int64_t));
        if (!off) return -1;
        s->off = off;
        int32_t *tp = realloc(s->topic, (size_t)cap * sizeof(int32_t));
        if (!tp) return -1;
        s->topic = tp;
        s->cap = cap;
    }
    if (s->bytes + n > s->bcap) {
        Py_ssize_t bcap = s->bcap * 2;
        while (s->bytes + n > bcap) bcap *= 2;
        char *b = realloc(s->blob, (size_t)bcap);
        if (!b) return -1;
        s->blob = b;
        s->bcap = bcap;
    }
    memcpy(s->blob + s->bytes, p, (size_t)n);
    s->bytes += n;
    int32_t id = (int32_t)s->count++;
    s->off[id + 1] = s->bytes;
    s->topic[id] = topic;
    return id;
}

/* splitmix64's finalizer: every input bit moves every output bit */
static inline uint64_t mix64(uint64_t x) {
    x ^= x >> 30; x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27; x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* 32-bit hash of a string; each 8-byte word is mixed in full (answers that differ in one
 * byte of a multi-byte character, such as full-width digits, must not collide) */
static inline uint32_t hash_bytes(const char *p, Py_ssize_t n) {
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ (uint64_t)n;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = mix64(h ^ w);
        p += 8; n -= 8;
    }
    uint64_t w = 0;
    for (Py_ssize_t i = 0; i < n; i++) w |= (uint64_t)(unsigned char)p[i] << (8 * i);
    h = mix64(h ^ w ^ 0x5851f42d4c957f2dULL);
    return (uint32_t)(h ^ (h >> 32));
}

static int table_grow(Table *t) {
    uint32_t n = t->slots ? (t->mask + 1) * 2 : 16;
    Slot *slots = calloc(n, sizeof(Slot));
    if (!slots) return -1;
    if (t->slots) {
        for (uint32_t i = 0; i <= t->mask; i++) {
            if (!t->slots[i].id1) continue;
            uint32_t j = t->slots[i].h & (n - 1);
            while (slots[j].id1) j = (j + 1) & (n - 1);
            slots[j] = t->slots[i];
        }
        free(t->slots);
    }
    t->slots = slots;
    t->mask = n - 1;
    return 0;
}

/* id of the string in table t (adding it to the store if new); -1 on memory failure */
static int32_t intern(Table *t, Store *s, const char *p, Py_ssize_t n, int32_t topic) {
    if (!t->slots && table_grow(t) < 0) return -1;
    uint32_t h = hash_bytes(p, n), i = h & t->mask;
    while (t->slots[i].id1) {
        if (t->slots[i].h == h) {
            int32_t id = t->slots[i].id1 - 1;
            if (s->off[id + 1] - s->off[id] == n && memcmp(s->blob + s->off[id], p, (size_t)n) == 0)
                return id;
        }
        i = (i + 1) & t->mask;
    }
    int32_t id = store_add(s, p, n, topic);
    if (id < 0) return -1;
    t->slots[i].id1 = id + 1;
    t->slots[i].h = h;
    if ((uint64_t)++t->count * 10 > (uint64_t)(t->mask + 1) * 7 && table_grow(t) < 0) return -1;
    return id;
}

typedef struct {
    Store qs, items;
    Table qtable;
    Table *topics;          /* one item table per question id */
    Py_ssize_t ntopics_cap;
} Reader;

static int reader_init(Reader *r) {
    memset(r, 0, sizeof(*r));
    if (store_init(&r->qs, 1024, 1 << 14) < 0 || store_init(&r->items, 1 << 15, 1 << 20) < 0)
        return -1;
    r->ntopics_cap = 1024;
    r->topics = calloc((size_t)r->ntopics_cap, sizeof(Table));
    return r->topics ? 0 : -1;
}

static void reader_free(Reader *r) {
    store_free(&r->qs); store_free(&r->items);
    free(r->qtable.slots);
    if (r->topics) for (Py_ssize_t i = 0; i < r->ntopics_cap; i++) free(r->topics[i].slots);
    free(r->topics);
}

static int32_t intern_qid(Reader *r, const char *p, Py_ssize_t n) {
    int32_t q = intern(&r->qtable, &r->qs, p, n, -1);
    if (q >= 0 && q >= r->ntopics_cap) {
        Py_ssize_t cap = r->ntopics_cap * 2;
        Table *t = realloc(r->topics, (size_t)cap * sizeof(Table));
        if (!t) return -1;
        memset(t + r->ntopics_cap, 0, (size_t)(cap - r->ntopics_cap) * sizeof(Table));
        r->topics = t;
        r->ntopics_cap = cap;
    }
    return q;
}

/* -- validation and numbers ------------------------------------------------------------- */

/* strict UTF-8, as Python's decoder checks it (no overlongs, surrogates or > U+10FFFF) */
static int utf8_valid(const unsigned char *s, Py_ssize_t n) {
    Py_ssize_t i = 0;
    while (i < n) {
        if (i + 8 <= n) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            if (!(w & 0x8080808080808080ULL)) { i += 8; continue; }
        }
        unsigned char c = s[i];
        if (c < 0x80) { i++; continue; }
        if (c < 0xc2 || c > 0xf4) return 0;
        if (c < 0xe0) {
            if (i + 1 >= n || (s[i + 1] & 0xc0) != 0x80) return 0;
            i += 2;
        } else if (c < 0xf0) {
            if (i + 2 >= n || (s[i + 1] & 0xc0) != 0x80 || (s[i + 2] & 0xc0) != 0x80) return 0;
            if ((c == 0xe0 && s[i + 1] < 0xa0) || (c == 0xed && s[i + 1] >= 0xa0)) return 0;
            i += 3;
        } else {
            if (i + 3 >= n || (s[i + 1] & 0xc0) != 0x80 || (s[i + 2] & 0xc0) != 0x80 ||
                (s[i + 3] & 0xc0) != 0x80) return 0;
            if ((c == 0xf0 && s[i + 1] < 0x90) || (c == 0xf4 && s[i + 1] >= 0x90)) return 0;
            i += 4;
        }
    }
    return 1;
}

/* byte classes: 0 plain, 1 blank (space, tab), 2 a control character (NUL, a lone CR, odd
 * whitespace, DEL: Python would split, end a line or refuse there: the Python parser takes
 * the file), 3 lead byte of a possible Unicode space (odd_unicode_space) or of a character
 * the text rule refuses (refused_at) */
static unsigned char CLS[256];

/* the bytes a QA run's field reader stops at (a tab aside): 1 a control character or a CR
 * (steps aside), 2 a lead byte of a character the text rule may refuse (refused_at) */
static unsigned char QA_STOP[256];

static void init_classes(void) {
    for (int c = 0; c < 0x20; c++) QA_STOP[c] = 1;
    QA_STOP[0x7f] = 1;
    QA_STOP[0xc2] = 2; QA_STOP[0xe2] = 2; QA_STOP[0xef] = 2;
    for (int c = 0; c < 0x20; c++) CLS[c] = 2;
    CLS[0x7f] = 2;
    CLS[' '] = 1; CLS['\t'] = 1;
    CLS[0xc2] = 3; CLS[0xe1] = 3; CLS[0xe2] = 3; CLS[0xe3] = 3; CLS[0xef] = 3;
}

/* 8 bytes at p are all in [lo, 0x7f] (lo <= 0x80): nothing to look at there */
#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL
static inline int plain8(const unsigned char *p, unsigned lo) {
    uint64_t w;
    memcpy(&w, p, 8);
    return !((((w - ONES * lo) & ~w) | w) & HIGHS);
}

/* 0x80 in each byte of w that equals v, 0 in the others (exact: no borrow crosses bytes) */
#define LOWS 0x7f7f7f7f7f7f7f7fULL
static inline uint64_t bytes_equal8(uint64_t w, unsigned v) {
    uint64_t t = w ^ (ONES * v);
    return ~(((t & LOWS) + LOWS) | t | LOWS);
}

/* nothing to look at in the 8 bytes at p: no byte below 0x20 (a tab, NUL, CR or another
 * control character), no DEL, and nothing that may start a character the text rule
 * refuses: no 0xc2 (C1 controls), no 0xe2 0x80 (U+2028, U+2029), no 0xef 0xbb (U+FEFF),
 * and no 0xe2 or 0xef last (its next byte is in the next 8).  Other UTF-8 text passes
 * whole: full-width forms (0xef 0xbc, 0xef 0xbd), most symbols (0xe2 0x89: U+2260) and the
 * kana and kanji of Japanese answers.  (Big-endian machines look at each 0xe2 and 0xef.) */
static inline int plain_text8(const unsigned char *p) {
    uint64_t w;
    memcpy(&w, p, 8);
    if (((w - ONES * 0x20) & ~w & HIGHS) || p[7] == 0xef || p[7] == 0xe2) return 0;
    uint64_t odd = bytes_equal8(w, 0x7f) | bytes_equal8(w, 0xc2);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    odd |= (bytes_equal8(w, 0xef) << 8) & bytes_equal8(w, 0xbb);  /* 0xef, then 0xbb */
    odd |= (bytes_equal8(w, 0xe2) << 8) & bytes_equal8(w, 0x80);  /* 0xe2, then 0x80 */
#else
    odd |= bytes_equal8(w, 0xef) | bytes_equal8(w, 0xe2);
#endif
    return !odd;
}

/* The one text rule (evaluation/metrics/text_rules.py, CONTROL_CHARACTERS): the character
 * at p is refused -- every control character but tab, LF and CR (C0, DEL, C1: U+0080 to
 * U+009F), U+2028, U+2029, and U+FEFF (the byte-order mark opening a file is skipped by
 * filetok_init).  The Python line reader refuses the line, naming it: the C reader steps
 * aside for it.  (A lone CR is no character of a line here: callers step aside for it.) */
static inline int refused_at(const unsigned char *p, Py_ssize_t left) {
    unsigned char c = p[0];
    if (c < 0x20) return c != '\t' && c != '\n' && c != '\r';
    if (c == 0x7f) return 1;
    if (c == 0xc2) return left > 1 && p[1] >= 0x80 && p[1] <= 0x9f;
    if (left < 3) return 0;
    if (c == 0xe2) return p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9);
    if (c == 0xef) return p[1] == 0xbb && p[2] == 0xbf;
    return 0;
}

/* a character the text rule refuses, or a CR, among the n bytes at p */
static int any_refused(const unsigned char *p, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++)
        if (p[i] == '\r' || refused_at(p + i, n - i)) return 1;
    return 0;
}

/* U+0085, U+00A0, U+1680, U+2000-200A, U+2028, U+2029, U+202F, U+205F, U+3000 at p */
static int odd_unicode_space(const unsigned char *p, Py_ssize_t left) {
    unsigned char c = p[0];
    if (c == 0xc2) return left > 1 && (p[1] == 0x85 || p[1] == 0xa0);
    if (left < 3) return 0;
    if (c == 0xe1) return p[1] == 0x9a && p[2] == 0x80;
    if (c == 0xe2) {
        if (p[1] == 0x80) return (p[2] >= 0x80 && p[2] <= 0x8a) || p[2] == 0xa8 || p[2] == 0xa9 ||
                                 p[2] == 0xaf;
        return p[1] == 0x81 && p[2] == 0x9f;
    }
    return c == 0xe3 && p[1] == 0x80 && p[2] == 0x80;
}

/* the first or the last character of a field is whitespace for Python's str.strip() */
static int field_edge_space(const unsigned char *p, Py_ssize_t n) {
    if (CLS[p[0]] == 1 || CLS[p[0]] == 2 || (CLS[p[0]] == 3 && odd_unicode_space(p, n)))
        return 1;
    unsigned char c = p[n - 1];
    if (c < 0x80) return CLS[c] == 1 || CLS[c] == 2;
    Py_ssize_t s = n - 1;                                 /* the last character's lead byte */
    while (s > 0 && n - s < 4 && (p[s] & 0xc0) == 0x80) s--;
    return CLS[p[s]] == 3 && odd_unicode_space(p + s, n - s);
}

static const double POW10[23] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* strict decimal [+-]?digits[.digits]?([eE][+-]?digits)? as Python's float() reads it:
 * exact (Clinger's fast path) when the digits fit in 53 bits and |exponent| <= 22, else
 * strtod; 0 = ok */
static int parse_number(const char *p, Py_ssize_t n, double *out) {
    Py_ssize_t i = 0, digits = 0;
    uint64_t m = 0;
    int nd = 0, neg = 0, inexact = 0;
    long dexp = 0;
    if (n <= 0 || n >= 63) return -1;
    if (p[i] == '+' || p[i] == '-') { neg = p[i] == '-'; i++; }
    for (; i < n && p[i] >= '0' && p[i] <= '9'; i++, digits++) {
        if (m || p[i] != '0') {
            if (nd < 19) { m = m * 10 + (uint64_t)(p[i] - '0'); nd++; }
            else { inexact = 1; dexp++; }
        }
    }
    if (i < n && p[i] == '.') {
        for (i++; i < n && p[i] >= '0' && p[i] <= '9'; i++, digits++) {
            if (m || p[i] != '0') {
                if (nd < 19) { m = m * 10 + (uint64_t)(p[i] - '0'); nd++; dexp--; }
                else inexact = 1;
            } else {
                dexp--;
            }
        }
    }
    if (!digits) return -1;
    if (i < n && (p[i] == 'e' || p[i] == 'E')) {
        Py_ssize_t e = 0; long ev = 0; int eneg = 0;
        i++;
        if (i < n && (p[i] == '+' || p[i] == '-')) { eneg = p[i] == '-'; i++; }
        for (; i < n && p[i] >= '0' && p[i] <= '9'; i++, e++)
            if (ev < 100000) ev = ev * 10 + (p[i] - '0');
        if (!e) return -1;
        dexp += eneg ? -ev : ev;
    }
    if (i != n) return -1;
    if (m == 0) { *out = neg ? -0.0 : 0.0; return 0; }
    if (!inexact && m < (1ULL << 53) && dexp >= -22 && dexp <= 22) {
        double v = (double)m;
        v = dexp < 0 ? v / POW10[-dexp] : v * POW10[dexp];
        *out = neg ? -v : v;
        return 0;
    }
    char buf[64];
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

/* rank: \+?0*[1-9]\d* up to MAX_RANK of parsers.py */
#define MAX_RANK 1000000000LL
static int parse_rank(const char *p, Py_ssize_t n, long long *out) {
    long long v;
    if (n > 0 && p[0] == '-') return -1;
    if (parse_int(p, n, &v) < 0 || v < 1 || v > MAX_RANK) return -1;
    *out = v;
    return 0;
}

/* -- rows ------------------------------------------------------------------------------- */

typedef struct { int32_t *q, *item; double *val; long long *rank; Py_ssize_t n, cap; int ranked; } Cols;

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
        if (c->ranked) {                                 /* ranks: QA runs only */
            long long *r = realloc(c->rank, (size_t)cap * 8);
            if (!r) return -1;
            c->rank = r;
        }
        c->cap = cap;
    }
    c->q[c->n] = q; c->item[c->n] = item; c->val[c->n] = val;
    if (c->ranked) c->rank[c->n] = rank;
    c->n++;
    return 0;
}

/* room for cap rows */
static int cols_reserve(Cols *c, Py_ssize_t cap) {
    if (cap <= c->cap) return 0;
    int32_t *a = realloc(c->q, (size_t)cap * 4);
    if (!a) return -1;
    c->q = a;
    int32_t *b = realloc(c->item, (size_t)cap * 4);
    if (!b) return -1;
    c->item = b;
    double *v = realloc(c->val, (size_t)cap * 8);
    if (!v) return -1;
    c->val = v;
    if (c->ranked) {
        long long *r = realloc(c->rank, (size_t)cap * 8);
        if (!r) return -1;
        c->rank = r;
    }
    c->cap = cap;
    return 0;
}

static void cols_free(Cols *c) { free(c->q); free(c->item); free(c->val); free(c->rank); }

#define MAXF 8

/* One file being tokenized into rows: files are read a question block at a time, in
 * turn (every file's block of a question, then the next question), so that a question's
 * item table and strings are still in the cache when the next file's rows look them up. */
typedef struct {
    const char *data;
    Py_ssize_t size, pos;
    int kind, status;        /* status: 2 more to read, 1 done, 0 irregular, -1 memory */
    Cols c;
    Span tag;
    int32_t last_q;
    const char *last_qp;
    Py_ssize_t last_qn;
    int pending;             /* a row read but not yet taken (it starts the next block) */
    Span f[MAXF];
    double val;
    long long rank;
} FileTok;

static void filetok_init(FileTok *st, const char *data, Py_ssize_t size, int kind) {
    memset(st, 0, sizeof(*st));
    st->data = data; st->size = size; st->kind = kind; st->status = 2; st->last_q = -1;
    st->c.ranked = kind == 2;
    if (size >= 3 && (unsigned char)data[0] == 0xef && (unsigned char)data[1] == 0xbb &&
        (unsigned char)data[2] == 0xbf) st->pos = 3;
}

/* the number of lines of a file (at most its rows) */
static Py_ssize_t count_lines(const char *data, Py_ssize_t size) {
    Py_ssize_t n = 1;
    for (const char *p = data, *end = data + size; (p = memchr(p, '\n', (size_t)(end - p))); p++) n++;
    return n;
}

/* one line into fields f, val and rank: 1 a row, 2 nothing (blank, comment), 0 irregular */
static int tokenize_line(FileTok *st, const char *line, Py_ssize_t len, Span *f, double *valp,
                         long long *rankp) {
    int kind = st->kind;
    Span *tag = &st->tag;
    if (len > 65536) return 0;
    const unsigned char *ul = (const unsigned char *)line;
    int nf = 0;
    if (kind == 2) {                                     /* tab-separated, no padding */
        Py_ssize_t start = 0, j = 0;
        while (j < len && (ul[j] == ' ' || ul[j] == '\t')) j++;
        if (j == len) return 2;                          /* blank */
        Py_ssize_t check = 0;                        /* bytes below it are plain */
        for (j = 0; j <= len; j++) {
            if (j >= check && j + 8 <= len) {            /* 8 plain bytes (no tab)? */
                if (plain_text8(ul + j)) { j += 7; continue; }
                check = j + 8;
            }
            if (j == len || ul[j] == '\t') {
                if (nf == MAXF) return 0;
                f[nf].p = line + start; f[nf].n = j - start; nf++;
                start = j + 1;
            } else if (QA_STOP[ul[j]] == 1 || (QA_STOP[ul[j]] && refused_at(ul + j, len - j))) {
                return 0;                    /* a lone CR ends a line; a refused character */
            }
        }
        if (nf < 3 || nf > 4) return 0;
        /* Python strips every field: whitespace at an edge (a space, an odd ASCII or a
         * Unicode space) needs the line reader; inside a field it is text */
        for (int k = 0; k < nf; k++) {
            if (f[k].n && (field_edge_space((const unsigned char *)f[k].p, f[k].n))) return 0;
        }
        if (!f[0].n || !f[2].n) return 0;
    } else {
        Py_ssize_t j = 0;
        while (j < len) {
            while (j < len && CLS[ul[j]] == 1) j++;
            if (j == len) break;
            Py_ssize_t s = j;
            for (; j < len; j++) {
                unsigned char c = CLS[ul[j]];
                if (!c) continue;
                if (c == 1) break;
                if (c == 2 || odd_unicode_space(ul + j, len - j) || refused_at(ul + j, len - j))
                    return 0;
            }
            if (nf == 0 && line[s] == '#') {             /* comment line */
                /* refused there too (and a lone CR starts a line that may be a row) */
                if (any_refused(ul + s, len - s)) return 0;
                break;
            }
            if (nf < MAXF) { f[nf].p = line + s; f[nf].n = j - s; }
            nf++;
        }
        if (nf == 0) return 2;                           /* blank or comment */
        if (kind == 0 && nf != 4) return 0;
        if (kind == 1 && nf < 6) return 0;
    }
    double val = NAN; long long rank = 0, g;
    if (kind == 0) {
        if (parse_int(f[3].p, f[3].n, &g) < 0) return 0;
        val = (double)g;
    } else if (kind == 1) {
        if (parse_number(f[4].p, f[4].n, &val) < 0) return 0;
        if (!tag->p) *tag = f[5];
    } else {
        if (parse_rank(f[1].p, f[1].n, &rank) < 0) return 0;
        if (nf == 4 && f[3].n && parse_number(f[3].p, f[3].n, &val) < 0) return 0;
    }
    *valp = val;
    *rankp = rank;
    return 1;
}

/* Tokenize rows of one file until its next question block starts (status 2: call again)
 * or the file ends (status 1 parsed, 0 irregular: use Python, -1 memory error). */
static void tokenize_block(FileTok *st, Reader *r) {
    Py_ssize_t taken = 0;
    for (;;) {
        Span *f = st->f;
        if (st->pending) {
            st->pending = 0;
        } else {
            if (st->pos >= st->size) { st->status = st->c.n > 0 ? 1 : 0; return; }
            const char *line = st->data + st->pos;
            const char *nl = memchr(line, '\n', (size_t)(st->size - st->pos));
            Py_ssize_t len = nl ? nl - line : st->size - st->pos;
            st->pos += len + 1;
            /* UTF-8 checked line by line, while the line is in the cache (a character
             * never spans a newline: 0x0a is no continuation byte) */
            if (!utf8_valid((const unsigned char *)line, len)) { st->status = 0; return; }
            if (len > 0 && line[len - 1] == '\r') len--;
            int got = tokenize_line(st, line, len, f, &st->val, &st->rank);
            if (got == 0) { st->status = 0; return; }
            if (got == 2) continue;
        }
        int32_t q;
        if (st->last_q >= 0 && f[0].n == st->last_qn &&
            memcmp(f[0].p, st->last_qp, (size_t)f[0].n) == 0) {
            q = st->last_q;                              /* rows come grouped by question */
        } else {
            if (taken) { st->pending = 1; return; }      /* the next block: another turn */
            q = intern_qid(r, f[0].p, f[0].n);
            if (q < 0) { st->status = -1; return; }
            st->last_q = q; st->last_qp = f[0].p; st->last_qn = f[0].n;
        }
        int32_t item = intern(&r->topics[q], &r->items, f[2].p, f[2].n, q);
        if (item < 0 || cols_push(&st->c, q, item, st->val, st->rank) < 0) {
            st->status = -1;
            return;
        }
        taken++;
    }
}

/* -- ordering --------------------------------------------------------------------------- */

typedef struct { const Cols *c; const Store *items; int kind; } Order;

/* < 0 when row a comes before row b */
static inline int row_cmp(const Order *o, int32_t a, int32_t b) {
    if (o->kind == 2) return (o->c->rank[a] > o->c->rank[b]) - (o->c->rank[a] < o->c->rank[b]);
    double x = o->c->val[a], y = o->c->val[b];
    if (x != y) return x > y ? -1 : 1;                   /* score descending */
    const Store *s = o->items;
    int32_t ia = o->c->item[a], ib = o->c->item[b];
    int64_t na = s->off[ia + 1] - s->off[ia], nb = s->off[ib + 1] - s->off[ib];
    int d = memcmp(s->blob + s->off[ia], s->blob + s->off[ib], (size_t)(na < nb ? na : nb));
    if (!d) d = (na > nb) - (na < nb);
    return -d;                                           /* then docno descending */
}

static void merge_sort(const Order *o, int32_t *a, int32_t *tmp, Py_ssize_t n) {
    if (n <= 16) {
        for (Py_ssize_t i = 1; i < n; i++) {
            int32_t v = a[i];
            Py_ssize_t j = i;
            while (j > 0 && row_cmp(o, a[j - 1], v) > 0) { a[j] = a[j - 1]; j--; }
            a[j] = v;
        }
        return;
    }
    Py_ssize_t h = n / 2;
    merge_sort(o, a, tmp, h);
    merge_sort(o, a + h, tmp, n - h);
    if (row_cmp(o, a[h - 1], a[h]) <= 0) return;
    memcpy(tmp, a, (size_t)h * sizeof(int32_t));
    Py_ssize_t i = 0, j = h, k = 0;
    while (i < h && j < n) a[k++] = row_cmp(o, a[j], tmp[i]) < 0 ? a[j++] : tmp[i++];
    while (i < h) a[k++] = tmp[i++];
}

/* The order of a file's rows (see the header); 0 = a duplicate (the Python parser reports
 * it), 1 = ok, -1 = memory error.  `stamp` marks items seen in this file. */
static int order_rows(const Cols *c, int kind, const Store *items, int32_t *seen_item,
                      int32_t stamp, Py_ssize_t nq, int32_t **perm_out) {
    Py_ssize_t n = c->n;
    int32_t *perm = malloc((size_t)(n ? n : 1) * sizeof(int32_t));
    int32_t *slot = malloc((size_t)(nq ? nq : 1) * sizeof(int32_t));   /* topic -> block # */
    int32_t *tmp = NULL;
    int ok = -1;
    if (!perm || !slot) goto done;
    if (kind == 0) {                                     /* qrels: file order, no repeats */
        for (Py_ssize_t i = 0; i < n; i++) {
            int32_t it = c->item[i];
            if (seen_item[it] == stamp) { ok = 0; goto done; }
            seen_item[it] = stamp;
            perm[i] = (int32_t)i;
        }
        ok = 1;
        goto done;
    }
    for (Py_ssize_t i = 0; i < nq; i++) slot[i] = -1;
    /* group by question, in order of first appearance (a stable counting sort) */
    int32_t nblocks = 0, contiguous = 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        int32_t q = c->q[i];
        if (slot[q] < 0) slot[q] = nblocks++;
        else if (q != c->q[i - 1]) contiguous = 0;
    }
    if (contiguous) {
        for (Py_ssize_t i = 0; i < n; i++) perm[i] = (int32_t)i;
    } else {
        Py_ssize_t *start = calloc((size_t)nblocks + 1, sizeof(Py_ssize_t));
        if (!start) goto done;
        for (Py_ssize_t i = 0; i < n; i++) start[slot[c->q[i]] + 1]++;
        for (int32_t b = 0; b < nblocks; b++) start[b + 1] += start[b];
        for (Py_ssize_t i = 0; i < n; i++) perm[start[slot[c->q[i]]]++] = (int32_t)i;
        free(start);
    }
    tmp = malloc((size_t)(n ? n : 1) * sizeof(int32_t));
    if (!tmp) goto done;
    Order o = {c, items, kind};
    for (Py_ssize_t s = 0; s < n;) {
        Py_ssize_t e = s + 1;
        while (e < n && c->q[perm[e]] == c->q[perm[s]]) e++;
        if (kind == 1) {                                 /* a docno once per topic */
            for (Py_ssize_t i = s; i < e; i++) {
                int32_t it = c->item[perm[i]];
                if (seen_item[it] == stamp) { ok = 0; goto done; }
                seen_item[it] = stamp;
            }
        }
        int sorted = 1;
        for (Py_ssize_t i = s + 1; i < e && sorted; i++)
            if (row_cmp(&o, perm[i - 1], perm[i]) > 0) sorted = 0;
        if (!sorted) merge_sort(&o, perm + s, tmp, e - s);
        if (kind == 2) {                                 /* a rank once per question */
            for (Py_ssize_t i = s + 1; i < e; i++)
                if (c->rank[perm[i]] == c->rank[perm[i - 1]]) { ok = 0; goto done; }
        }
        s = e;
    }
    ok = 1;
done:
    free(slot); free(tmp);
    if (ok == 1) *perm_out = perm; else free(perm);
    return ok;
}

/* -- module functions ------------------------------------------------------------------- */

/* Memory the reader allocated, handed to Python without a copy: read-only through the
 * buffer protocol (np.frombuffer), freed with the object. */
typedef struct { PyObject_HEAD void *data; Py_ssize_t size; } BufferObject;

static void buffer_dealloc(BufferObject *self) {
    free(self->data);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int buffer_getbuffer(BufferObject *self, Py_buffer *view, int flags) {
    return PyBuffer_FillInfo(view, (PyObject *)self, self->data, self->size, 1, flags);
}

static PyBufferProcs buffer_procs = {(getbufferproc)buffer_getbuffer, NULL};

static PyTypeObject BufferType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "_fastparse.Buffer",
    .tp_basicsize = sizeof(BufferObject),
    .tp_dealloc = (destructor)buffer_dealloc,
    .tp_as_buffer = &buffer_procs,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Read-only memory filled by the reader.",
};

/* a Buffer owning data (freed here if the object cannot be made) */
static PyObject *buffer_of(void *data, Py_ssize_t size) {
    BufferObject *b = PyObject_New(BufferObject, &BufferType);
    if (!b) { free(data); return NULL; }
    b->data = data;
    b->size = size;
    return (PyObject *)b;
}

static PyObject *parse(PyObject *self, PyObject *args) {
    PyObject *files, *kinds;
    if (!PyArg_ParseTuple(args, "O!O!", &PyList_Type, &files, &PyList_Type, &kinds)) return NULL;
    Py_ssize_t nfiles = PyList_GET_SIZE(files);
    if (PyList_GET_SIZE(kinds) != nfiles) {
        PyErr_SetString(PyExc_ValueError, "one kind per file");
        return NULL;
    }
    int *kind_of = malloc((size_t)(nfiles ? nfiles : 1) * sizeof(int));
    if (!kind_of) return PyErr_NoMemory();
    for (Py_ssize_t k = 0; k < nfiles; k++) {
        kind_of[k] = (int)PyLong_AsLong(PyList_GET_ITEM(kinds, k));
        if (!PyBytes_Check(PyList_GET_ITEM(files, k)) || kind_of[k] < 0 || kind_of[k] > 2) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "files must be bytes, kinds 0, 1 or 2");
            free(kind_of);
            return NULL;
        }
    }
    Reader r;
    if (reader_init(&r) < 0) { reader_free(&r); free(kind_of); return PyErr_NoMemory(); }
    PyObject *results = PyList_New(nfiles), *ret = NULL;
    int32_t *seen_item = NULL;
    int failed = 0;
    FileTok *tok = calloc((size_t)(nfiles ? nfiles : 1), sizeof(FileTok));
    int32_t **perms = calloc((size_t)(nfiles ? nfiles : 1), sizeof(int32_t *));
    if (!tok || !perms) { failed = 1; PyErr_NoMemory(); }
    if (!failed && results) {
        Py_BEGIN_ALLOW_THREADS
        /* room for every row and string at once (pages never written cost nothing):
         * no copies as the columns and the string store grow */
        Py_ssize_t lines = 0, bytes = 0;
        for (Py_ssize_t k = 0; k < nfiles && !failed; k++) {
            PyObject *b = PyList_GET_ITEM(files, k);
            filetok_init(&tok[k], PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b), kind_of[k]);
            Py_ssize_t n = count_lines(PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b));
            if (cols_reserve(&tok[k].c, n) < 0) failed = 1;
            lines += n;
            bytes += PyBytes_GET_SIZE(b);
        }
        if (!failed && store_reserve(&r.items, lines, bytes + 1) < 0) failed = 1;
        /* a question block of every file in turn (see FileTok) */
        for (int more = 1; more && !failed;) {
            more = 0;
            for (Py_ssize_t k = 0; k < nfiles; k++) {
                if (tok[k].status != 2) continue;
                tokenize_block(&tok[k], &r);
                if (tok[k].status == -1) { failed = 1; break; }
                more |= tok[k].status == 2;
            }
        }
        if (!failed) {
            seen_item = calloc((size_t)(r.items.count ? r.items.count : 1), sizeof(int32_t));
            if (!seen_item) failed = 1;
        }
        for (Py_ssize_t k = 0; k < nfiles && !failed; k++) {
            FileTok *st = &tok[k];
            if (st->status != 1) continue;
            Cols *c = &st->c;
            int ok = order_rows(c, st->kind, &r.items, seen_item, (int32_t)k + 1, r.qs.count,
                                &perms[k]);
            if (ok == 0) { st->status = 0; continue; }
            if (ok < 0) { failed = 1; break; }
            int32_t *perm = perms[k];                    /* rows in their order */
            int32_t *tq = malloc((size_t)c->n * 4), *ti = malloc((size_t)c->n * 4);
            double *tv = malloc((size_t)c->n * 8);
            if (!tq || !ti || !tv) {
                free(tq); free(ti); free(tv);
                failed = 1;
                break;
            }
            for (Py_ssize_t i = 0; i < c->n; i++) {
                tq[i] = c->q[perm[i]]; ti[i] = c->item[perm[i]]; tv[i] = c->val[perm[i]];
            }
            free(c->q); free(c->item); free(c->val);
            c->q = tq; c->item = ti; c->val = tv;
            free(perm);
            perms[k] = NULL;
        }
        Py_END_ALLOW_THREADS
        if (failed) PyErr_NoMemory();
    }
    for (Py_ssize_t k = 0; k < nfiles && results && !failed; k++) {
        FileTok *st = &tok[k];
        Cols *c = &st->c;
        if (st->status != 1) {
            PyList_SET_ITEM(results, k, Py_NewRef(Py_None));
            continue;
        }
        Span tag = st->tag;
        PyObject *tagobj = tag.p ? PyUnicode_DecodeUTF8(tag.p, tag.n, "strict") : Py_NewRef(Py_None);
        if (!tagobj) { PyErr_Clear(); tagobj = Py_NewRef(Py_None); }
        /* the Buffers own the columns now */
        PyObject *tup = Py_BuildValue("(NNNN)", buffer_of(c->q, c->n * 4), buffer_of(c->item, c->n * 4),
                                      buffer_of(c->val, c->n * 8), tagobj);
        c->q = NULL; c->item = NULL; c->val = NULL;
        if (!tup) { failed = 1; break; }
        PyList_SET_ITEM(results, k, tup);
    }
    if (tok) for (Py_ssize_t k = 0; k < nfiles; k++) cols_free(&tok[k].c);
    if (perms) for (Py_ssize_t k = 0; k < nfiles; k++) free(perms[k]);
    free(tok); free(perms);
    free(seen_item);
    free(kind_of);
    if (!failed && results) {
        PyObject *qs = PyList_New(r.qs.count);
        for (Py_ssize_t i = 0; qs && i < r.qs.count; i++) {
            PyObject *s = PyUnicode_DecodeUTF8(r.qs.blob + r.qs.off[i],
                                               (Py_ssize_t)(r.qs.off[i + 1] - r.qs.off[i]), "strict");
            if (!s) { Py_CLEAR(qs); break; }
            PyList_SET_ITEM(qs, i, s);
        }
        if (qs) {
            ret = Py_BuildValue("(NNNNN)", qs, buffer_of(r.items.blob, r.items.bytes),
                                buffer_of(r.items.off, (r.items.count + 1) * 8),
                                buffer_of(r.items.topic, r.items.count * 4), results);
            r.items.blob = NULL; r.items.off = NULL; r.items.topic = NULL;  /* given away */
            results = NULL;
        }
    }
    Py_XDECREF(results);
    reader_free(&r);
    return ret;
}

/* take(blob, offsets, ids) -> list of the strings that ids (an int64 buffer) name */
static PyObject *take(PyObject *self, PyObject *args) {
    Py_buffer blob, off, ids;
    if (!PyArg_ParseTuple(args, "y*y*y*", &blob, &off, &ids)) return NULL;
    PyObject *list = NULL;
    Py_ssize_t noff = off.len / 8 - 1;
    const int64_t *o = off.buf;
    const char *b = blob.buf;
    Py_ssize_t n = ids.len / 8;
    list = PyList_New(n);
    for (Py_ssize_t i = 0; list && i < n; i++) {
        int64_t id = ((const int64_t *)ids.buf)[i];
        if (id < 0 || id >= noff) {
            PyErr_SetString(PyExc_IndexError, "string id out of range");
            Py_CLEAR(list);
            break;
        }
        PyObject *s = PyUnicode_DecodeUTF8(b + o[id], (Py_ssize_t)(o[id + 1] - o[id]), "strict");
        if (!s) { Py_CLEAR(list); break; }
        PyList_SET_ITEM(list, i, s);
    }
    PyBuffer_Release(&blob); PyBuffer_Release(&off); PyBuffer_Release(&ids);
    return list;
}

/* ASCII characters that Python's str.split() treats as whitespace, and those that
 * normalize.py strips from the edges of a key (whitespace and Unicode category P*) */
static unsigned char ASCII_SPACE[128], ASCII_EDGE[128];

static void init_ascii(void) {
    const char *space = "\t\n\v\f\r\x1c\x1d\x1e\x1f ";
    const char *punct = "!\"#%&'()*,-./:;?@[\\]_{}";
    for (const char *c = space; *c; c++) ASCII_SPACE[(unsigned char)*c] = ASCII_EDGE[(unsigned char)*c] = 1;
    for (const char *c = punct; *c; c++) ASCII_EDGE[(unsigned char)*c] = 1;
}

/* ascii_keys(strings) -> list: the "normalized" matching key of each ASCII string, as
 * normalize.normalize_answer computes it (lower case, runs of whitespace -> one space,
 * whitespace and punctuation stripped from the ends); None for other strings, which
 * Python normalizes (NFKC and case folding). */
static PyObject *ascii_keys(PyObject *self, PyObject *arg) {
    PyObject *seq = PySequence_Fast(arg, "ascii_keys needs a sequence of strings");
    if (!seq) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    PyObject *out = PyList_New(n);
    char *buf = NULL;
    Py_ssize_t cap = 0;
    for (Py_ssize_t i = 0; out && i < n; i++) {
        PyObject *s = items[i];
        if (!PyUnicode_Check(s) || !PyUnicode_IS_ASCII(s)) {
            PyList_SET_ITEM(out, i, Py_NewRef(Py_None));
            continue;
        }
        const unsigned char *p = PyUnicode_1BYTE_DATA(s);
        Py_ssize_t len = PyUnicode_GET_LENGTH(s), w = 0;
        if (len > cap) {
            char *nb = realloc(buf, (size_t)len * 2 + 16);
            if (!nb) { Py_CLEAR(out); PyErr_NoMemory(); break; }
            buf = nb;
            cap = len * 2 + 16;
        }
        int gap = 0;
        for (Py_ssize_t j = 0; j < len; j++) {
            unsigned char c = p[j];
            if (ASCII_SPACE[c]) { gap = w > 0; continue; }
            if (gap) { buf[w++] = ' '; gap = 0; }
            buf[w++] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
        }
        Py_ssize_t a = 0, b = w;
        while (a < b && ASCII_EDGE[(unsigned char)buf[a]]) a++;
        while (b > a && ASCII_EDGE[(unsigned char)buf[b - 1]]) b--;
        PyObject *key = (b - a == len && memcmp(buf + a, p, (size_t)len) == 0)
                        ? Py_NewRef(s) : PyUnicode_DecodeASCII(buf + a, b - a, "strict");
        if (!key) { Py_CLEAR(out); break; }
        PyList_SET_ITEM(out, i, key);
    }
    free(buf);
    Py_DECREF(seq);
    return out;
}

/* -- matching keys of the items, in C ----------------------------------------------------- */

/* the next code point of valid UTF-8 at *p (< end); advances *p.  The blob was checked
 * when read; a broken sequence reads as U+FFFD-free 0x110000 (no table entry: Python) */
static inline uint32_t next_cp(const unsigned char **pp, const unsigned char *end) {
    const unsigned char *p = *pp;
    uint32_t c = p[0];
    if (c < 0x80) { *pp = p + 1; return c; }
    if (c >= 0xc2 && c < 0xe0 && p + 1 < end) { *pp = p + 2; return ((c & 0x1f) << 6) | (p[1] & 0x3f); }
    if (c >= 0xe0 && c < 0xf0 && p + 2 < end) {
        *pp = p + 3;
        return ((c & 0x0f) << 12) | ((uint32_t)(p[1] & 0x3f) << 6) | (p[2] & 0x3f);
    }
    if (c >= 0xf0 && c < 0xf5 && p + 3 < end) {
        *pp = p + 4;
        return ((c & 0x07) << 18) | ((uint32_t)(p[1] & 0x3f) << 12) | ((uint32_t)(p[2] & 0x3f) << 6) |
               (p[3] & 0x3f);
    }
    *pp = end;
    return 0x110000;
}

#define NCP 0x110000

/* code_points(blob) -> int32 buffer: the distinct non-ASCII code points of a UTF-8 blob,
 * ascending (what normalize.py must describe before match_items can key the items) */
static PyObject *code_points(PyObject *self, PyObject *args) {
    Py_buffer blob;
    if (!PyArg_ParseTuple(args, "y*", &blob)) return NULL;
    unsigned char *seen = calloc(NCP + 1, 1);
    int32_t *out = NULL;
    Py_ssize_t n = 0;
    if (seen) {
        Py_BEGIN_ALLOW_THREADS
        const unsigned char *p = blob.buf, *end = p + blob.len;
        while (p < end) {
            if (end - p >= 8 && plain8(p, 0)) { p += 8; continue; }
            if (*p < 0x80) { p++; continue; }
            seen[next_cp(&p, end)] = 1;
        }
        for (Py_ssize_t c = 0x80; c < NCP; c++) n += seen[c];
        out = malloc((size_t)(n ? n : 1) * sizeof(int32_t));
        if (out) {
            Py_ssize_t k = 0;
            for (Py_ssize_t c = 0x80; c < NCP; c++) if (seen[c]) out[k++] = (int32_t)c;
        }
        Py_END_ALLOW_THREADS
    }
    free(seen);
    PyBuffer_Release(&blob);
    if (!out) return PyErr_NoMemory();
    return buffer_of(out, n * (Py_ssize_t)sizeof(int32_t));
}

typedef struct {
    int32_t *repl_at;        /* code point -> 1 + start in repl (0: no entry, -1: not simple) */
    uint32_t *repl;          /* replacements, each ended by NCP */
    unsigned char *flags;    /* output code point -> 1 whitespace, 2 edge (whitespace or P*) */
    Py_ssize_t longest;      /* the longest replacement (at least 1: ASCII) */
} CharMap;

static void charmap_free(CharMap *m) { free(m->repl_at); free(m->repl); free(m->flags); }

/* from table: a list of (code point, replacement str or None) and two strs of the
 * non-ASCII output characters that are whitespace and that are edge characters */
static int charmap_init(CharMap *m, PyObject *table, PyObject *spaces, PyObject *edges) {
    memset(m, 0, sizeof(*m));
    m->longest = 1;
    Py_ssize_t n = PyList_GET_SIZE(table), total = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *t = PyList_GET_ITEM(table, i);
        if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 2) {
            PyErr_SetString(PyExc_TypeError, "table: (code point, str or None) pairs");
            return -1;
        }
        PyObject *r = PyTuple_GET_ITEM(t, 1);
        if (r != Py_None) {
            if (!PyUnicode_Check(r)) { PyErr_SetString(PyExc_TypeError, "replacement: str"); return -1; }
            total += PyUnicode_GET_LENGTH(r) + 1;
        }
    }
    m->repl_at = calloc(NCP + 1, sizeof(int32_t));
    m->repl = malloc((size_t)(total + 1) * sizeof(uint32_t));
    m->flags = calloc(NCP + 1, 1);
    if (!m->repl_at || !m->repl || !m->flags) { PyErr_NoMemory(); return -1; }
    Py_ssize_t w = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *t = PyList_GET_ITEM(table, i);
        long cp = PyLong_AsLong(PyTuple_GET_ITEM(t, 0));
        if (cp < 0x80 || cp >= NCP) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "table: a non-ASCII code point");
            return -1;
        }
        PyObject *r = PyTuple_GET_ITEM(t, 1);
        if (r == Py_None) { m->repl_at[cp] = -1; continue; }
        m->repl_at[cp] = (int32_t)w + 1;
        Py_ssize_t len = PyUnicode_GET_LENGTH(r);
        if (len > m->longest) m->longest = len;
        for (Py_ssize_t k = 0; k < len; k++) m->repl[w++] = PyUnicode_READ_CHAR(r, k);
        m->repl[w++] = NCP;
    }
    for (int c = 0; c < 128; c++) m->flags[c] = (unsigned char)(ASCII_SPACE[c] | (ASCII_EDGE[c] << 1));
    for (int pass = 0; pass < 2; pass++) {
        PyObject *s = pass ? edges : spaces;
        Py_ssize_t len = PyUnicode_GET_LENGTH(s);
        for (Py_ssize_t k = 0; k < len; k++) {
            Py_UCS4 c = PyUnicode_READ_CHAR(s, k);
            if (c >= 0x80) m->flags[c] |= (unsigned char)(pass ? 2 : 1);
        }
    }
    return 0;
}

/* the key of UTF-8 p[0:n] into out (code points; room for n * m->longest + 1); its
 * length, or -1 when a character is not simple */
static Py_ssize_t item_key(const CharMap *m, const unsigned char *p, Py_ssize_t n, uint32_t *out) {
    const unsigned char *end = p + n;
    Py_ssize_t w = 0;
    int gap = 0;
    while (p < end) {
        uint32_t c = *p;
        if (c < 0x80) {
            p++;
            if (ASCII_SPACE[c]) { gap = w > 0; continue; }
            if (gap) { out[w++] = ' '; gap = 0; }
            out[w++] = c >= 'A' && c <= 'Z' ? c + 32 : c;
            continue;
        }
        c = next_cp(&p, end);
        int32_t at = c < NCP ? m->repl_at[c] : 0;
        if (at <= 0) return -1;
        for (const uint32_t *r = m->repl + at - 1; *r != NCP; r++) {
            if (m->flags[*r] & 1) { gap = w > 0; continue; }
            if (gap) { out[w++] = ' '; gap = 0; }
            out[w++] = *r;
        }
    }
    Py_ssize_t a = 0, b = w;
    while (a < b && (m->flags[out[a]] & 2)) a++;
    while (b > a && (m->flags[out[b - 1]] & 2)) b--;
    if (a) memmove(out, out + a, (size_t)(b - a) * sizeof(uint32_t));
    return b - a;
}

static inline uint32_t hash_key(int64_t q, const uint32_t *k, Py_ssize_t n) {
    return hash_bytes((const char *)k, n * 4) ^ (uint32_t)mix64((uint64_t)q + 0x9e37ULL);
}

/* match_items(blob, offsets, item_q, qmap, table, spaces, edges, keys, key_q)
 *   -> (judged string per item: int32 buffer, -1 none; NIL per item: bool buffer;
 *       ids of the items with a character that is not simple: int64 buffer)
 * Items are the reader's strings (item i under reader question item_q[i], that is
 * judged question qmap[item_q[i]] or none when -1); keys (str) under key_q (int64) are
 * the judged strings' normalized keys.  An empty key, judged or not, matches nothing.  An item's key is computed here with the
 * character map table (see normalize.py: only characters whose key is the same wherever
 * they stand); items with other characters are left to Python (sidx -1, listed). */
static PyObject *match_items(PyObject *self, PyObject *args) {
    Py_buffer blob, off, iq, qmap, kq;
    PyObject *table, *spaces, *edges, *keys;
    if (!PyArg_ParseTuple(args, "y*y*y*y*O!UUO!y*", &blob, &off, &iq, &qmap, &PyList_Type, &table,
                          &spaces, &edges, &PyList_Type, &keys, &kq))
        return NULL;
    PyObject *ret = NULL;
    CharMap m = {0};
    uint32_t *kblob = NULL, *scratch = NULL;
    Py_ssize_t *koff = NULL;
    int32_t *slots = NULL, *sidx = NULL;
    int64_t *fallback = NULL;
    unsigned char *nil = NULL;
    Py_ssize_t nitems = off.len / 8 - 1, nkeys = PyList_GET_SIZE(keys), nq = qmap.len / 4;
    const int64_t *o = off.buf;
    const int32_t *item_q = iq.buf, *qm = qmap.buf;
    const int64_t *key_q = kq.buf;
    if (nitems < 0 || iq.len / 4 != nitems || kq.len / 8 != nkeys) {
        PyErr_SetString(PyExc_ValueError, "match_items: buffer sizes do not agree");
        goto done;
    }
    if (charmap_init(&m, table, spaces, edges) < 0) goto done;
    /* the judged keys as code points, in an open-addressing table of (question, key) */
    Py_ssize_t total = 0;
    for (Py_ssize_t j = 0; j < nkeys; j++) {
        PyObject *k = PyList_GET_ITEM(keys, j);
        if (!PyUnicode_Check(k)) { PyErr_SetString(PyExc_TypeError, "keys: str"); goto done; }
        total += PyUnicode_GET_LENGTH(k);
    }
    kblob = malloc((size_t)(total + 1) * sizeof(uint32_t));
    koff = malloc((size_t)(nkeys + 1) * sizeof(Py_ssize_t));
    uint32_t mask = 15;
    while ((Py_ssize_t)mask + 1 < nkeys * 2) mask = mask * 2 + 1;
    slots = malloc(((size_t)mask + 1) * sizeof(int32_t));
    sidx = malloc((size_t)(nitems ? nitems : 1) * sizeof(int32_t));
    nil = malloc((size_t)(nitems ? nitems : 1));
    fallback = malloc((size_t)(nitems ? nitems : 1) * sizeof(int64_t));
    if (!kblob || !koff || !slots || !sidx || !nil || !fallback) { PyErr_NoMemory(); goto done; }
    memset(slots, 0xff, ((size_t)mask + 1) * sizeof(int32_t));
    koff[0] = 0;
    for (Py_ssize_t j = 0; j < nkeys; j++) {
        PyObject *k = PyList_GET_ITEM(keys, j);
        Py_ssize_t len = PyUnicode_GET_LENGTH(k);
        uint32_t *kp = kblob + koff[j];
        for (Py_ssize_t c = 0; c < len; c++) kp[c] = PyUnicode_READ_CHAR(k, c);
        koff[j + 1] = koff[j] + len;
        if (len == 0) continue;                      /* an empty key matches nothing */
        uint32_t h = hash_key(key_q[j], kp, len) & mask;
        int dup = 0;
        for (; slots[h] >= 0; h = (h + 1) & mask) {
            int32_t x = slots[h];
            if (key_q[x] == key_q[j] && koff[x + 1] - koff[x] == len &&
                memcmp(kblob + koff[x], kp, (size_t)len * 4) == 0) { dup = 1; break; }
        }
        if (!dup) slots[h] = (int32_t)j;             /* the first judged string of a key */
    }
    Py_ssize_t longest = 0, nfall = 0;
    for (Py_ssize_t i = 0; i < nitems; i++)
        if (o[i + 1] - o[i] > longest) longest = o[i + 1] - o[i];
    scratch = malloc((size_t)(longest * m.longest + 1) * sizeof(uint32_t));
    if (!scratch) { PyErr_NoMemory(); goto done; }
    Py_BEGIN_ALLOW_THREADS
    const unsigned char *b = blob.buf;
    for (Py_ssize_t i = 0; i < nitems; i++) {
        Py_ssize_t len = item_key(&m, b + o[i], o[i + 1] - o[i], scratch);
        sidx[i] = -1;
        nil[i] = 0;
        if (len < 0) { fallback[nfall++] = i; continue; }
        nil[i] = len == 3 && scratch[0] == 'n' && scratch[1] == 'i' && scratch[2] == 'l';
        int32_t rq = item_q[i];
        int64_t q = rq >= 0 && rq < nq ? qm[rq] : -1;
        if (q < 0 || len == 0) continue;             /* an empty key matches nothing */
        for (uint32_t h = hash_key(q, scratch, len) & mask; slots[h] >= 0; h = (h + 1) & mask) {
            int32_t x = slots[h];
            if (key_q[x] == q && koff[x + 1] - koff[x] == len &&
                memcmp(kblob + koff[x], scratch, (size_t)len * 4) == 0) { sidx[i] = x; break; }
        }
    }
    Py_END_ALLOW_THREADS
    ret = Py_BuildValue("(NNN)", buffer_of(sidx, nitems * 4), buffer_of(nil, nitems),
                        buffer_of(fallback, nfall * 8));
    sidx = NULL; nil = NULL; fallback = NULL;                     /* given away */
done:
    charmap_free(&m);
    free(kblob); free(koff); free(slots); free(scratch); free(sidx); free(nil); free(fallback);
    PyBuffer_Release(&blob); PyBuffer_Release(&off); PyBuffer_Release(&iq);
    PyBuffer_Release(&qmap); PyBuffer_Release(&kq);
    return ret;
}

/* str_code_points(text) -> int32 buffer: the distinct non-ASCII characters of a str */
static PyObject *str_code_points(PyObject *self, PyObject *arg) {
    if (!PyUnicode_Check(arg)) { PyErr_SetString(PyExc_TypeError, "a str"); return NULL; }
    Py_ssize_t len = PyUnicode_GET_LENGTH(arg), n = 0;
    int kind = PyUnicode_KIND(arg);
    const void *data = PyUnicode_DATA(arg);
    int32_t *out = NULL;
    unsigned char *seen = NULL;
    if (kind == PyUnicode_1BYTE_KIND && PyUnicode_IS_ASCII(arg)) return buffer_of(malloc(1), 0);
    seen = calloc(NCP, 1);
    if (!seen) return PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < len; i++) seen[PyUnicode_READ(kind, data, i)] = 1;
    for (Py_ssize_t c = 0x80; c < NCP; c++) n += seen[c];
    out = malloc((size_t)(n ? n : 1) * sizeof(int32_t));
    if (out) {
        Py_ssize_t k = 0;
        for (Py_ssize_t c = 0x80; c < NCP; c++) if (seen[c]) out[k++] = (int32_t)c;
    }
    free(seen);
    if (!out) return PyErr_NoMemory();
    return buffer_of(out, n * (Py_ssize_t)sizeof(int32_t));
}

/* the key of characters data[0:n] (a str's kind) into out, as item_key for UTF-8 */
static Py_ssize_t str_key(const CharMap *m, int kind, const void *data, Py_ssize_t n, uint32_t *out) {
    Py_ssize_t w = 0;
    int gap = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        uint32_t c = PyUnicode_READ(kind, data, i);
        if (c < 0x80) {
            if (ASCII_SPACE[c]) { gap = w > 0; continue; }
            if (gap) { out[w++] = ' '; gap = 0; }
            out[w++] = c >= 'A' && c <= 'Z' ? c + 32 : c;
            continue;
        }
        int32_t at = m->repl_at[c];
        if (at <= 0) return -1;
        for (const uint32_t *r = m->repl + at - 1; *r != NCP; r++) {
            if (m->flags[*r] & 1) { gap = w > 0; continue; }
            if (gap) { out[w++] = ' '; gap = 0; }
            out[w++] = *r;
        }
    }
    Py_ssize_t a = 0, b = w;
    while (a < b && (m->flags[out[a]] & 2)) a++;
    while (b > a && (m->flags[out[b - 1]] & 2)) b--;
    if (a) memmove(out, out + a, (size_t)(b - a) * sizeof(uint32_t));
    return b - a;
}

static int same_ascii(const Py_UCS1 *d, const uint32_t *k, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++) if (d[i] != k[i]) return 0;
    return 1;
}

/* str_keys(strings, table, spaces, edges) -> list: the normalized matching key of each
 * str, as match_items keys an item; None for a str with a character that is not simple
 * (Python keys those) */
static PyObject *str_keys(PyObject *self, PyObject *args) {
    PyObject *strings, *table, *spaces, *edges;
    if (!PyArg_ParseTuple(args, "O!O!UU", &PyList_Type, &strings, &PyList_Type, &table, &spaces,
                          &edges))
        return NULL;
    CharMap m;
    if (charmap_init(&m, table, spaces, edges) < 0) { charmap_free(&m); return NULL; }
    Py_ssize_t n = PyList_GET_SIZE(strings), cap = 0;
    PyObject *out = PyList_New(n);
    uint32_t *buf = NULL;
    for (Py_ssize_t i = 0; out && i < n; i++) {
        PyObject *s = PyList_GET_ITEM(strings, i);
        if (!PyUnicode_Check(s)) {
            PyErr_SetString(PyExc_TypeError, "str_keys needs a list of str");
            Py_CLEAR(out);
            break;
        }
        Py_ssize_t len = PyUnicode_GET_LENGTH(s);
        if (len * m.longest + 1 > cap) {
            cap = len * m.longest + 64;
            uint32_t *nb = realloc(buf, (size_t)cap * sizeof(uint32_t));
            if (!nb) { Py_CLEAR(out); PyErr_NoMemory(); break; }
            buf = nb;
        }
        Py_ssize_t k = str_key(&m, PyUnicode_KIND(s), PyUnicode_DATA(s), len, buf);
        PyObject *key;
        if (k < 0) {
            key = Py_NewRef(Py_None);
        } else if (k == len && PyUnicode_IS_ASCII(s) && same_ascii(PyUnicode_1BYTE_DATA(s), buf, k)) {
            key = Py_NewRef(s);                          /* the key is the string itself */
        } else {
            key = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, buf, k);
        }
        if (!key) { Py_CLEAR(out); break; }
        PyList_SET_ITEM(out, i, key);
    }
    free(buf);
    charmap_free(&m);
    return out;
}

static PyMethodDef methods[] = {
    {"ascii_keys", ascii_keys, METH_O, "Normalized matching keys of ASCII strings."},
    {"code_points", code_points, METH_VARARGS, "Distinct non-ASCII code points of UTF-8."},
    {"match_items", match_items, METH_VARARGS, "The judged string each item's key matches."},
    {"str_code_points", str_code_points, METH_O, "Distinct non-ASCII characters of a str."},
    {"str_keys", str_keys, METH_VARARGS, "Normalized matching keys of strs (None: not simple)."},
    {"parse", parse, METH_VARARGS, "Tokenize, intern and order regular run/qrels files."},
    {"take", take, METH_VARARGS, "Strings of the given ids from a blob and its offsets."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fastparse", NULL, -1, methods};

PyMODINIT_FUNC PyInit__fastparse(void) {
    init_classes();
    init_ascii();
    if (PyType_Ready(&BufferType) < 0) return NULL;
    return PyModule_Create(&module);
}
