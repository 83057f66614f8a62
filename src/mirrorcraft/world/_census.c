/* The nearby-block census, compiled (see world/census_native.py).
 *
 * For each wanted block id, the squared distance of its nearest block within a radius of
 * a position, exactly as ``BlockIndex._nearest_each_py`` finds it (the reference, which
 * the tests compare with). Blocks are found through a per-world table of which 8x8x8
 * sections held which ids when the world was generated (an id is a bit, at most 256 per
 * world); blocks placed since are the caller's to add, from its list of placed blocks.
 * A section is read cell by cell for the world's most common ids ("scan" bits); the
 * generated positions of every other id are kept per section as a list, which is read
 * instead (a position counts only while the grid still holds that id there).
 *
 * Sections are read nearest first (by the smallest squared distance any of their cells
 * can have); an id is settled once no later section can hold a block nearer than the one
 * found, and the search ends when every wanted id is settled or absent from the sections
 * left. The answer does not depend on that order: it is each id's minimum.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SECTION 8
#define WORDS 4

typedef struct {
    int64_t lb;
    int64_t sec;
} Cand;

static int64_t gap(int64_t p, int64_t lo, int64_t hi) {
    if (p < lo) return lo - p;
    if (p > hi) return p - hi;
    return 0;
}

static PyObject *census(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer grid = {0}, bits = {0}, want_buf = {0}, masks = {0}, out = {0};
    Py_buffer scan_buf = {0}, lst_lo_buf = {0}, lst_flat_buf = {0}, lst_bit_buf = {0};
    Py_buffer lst_next_buf = {0};
    Py_ssize_t sx, sz, sy, nx, nz, ny;
    long long px, py, pz, r2;
    if (!PyArg_ParseTuple(args, "y*nnny*y*y*nnny*y*y*y*y*LLLLw*", &grid, &sx, &sz, &sy, &bits,
                          &want_buf, &masks, &nx, &nz, &ny, &scan_buf, &lst_lo_buf,
                          &lst_flat_buf, &lst_bit_buf, &lst_next_buf, &px, &py, &pz, &r2, &out))
        return NULL;
    PyObject *result = NULL;
    Cand *cand = NULL, *sorted = NULL;
    uint64_t *rest = NULL;
    int64_t *counts = NULL;
    if (grid.len < (Py_ssize_t)(sizeof(uint16_t) * (size_t)(sx * sz * sy)) ||
        bits.len < (Py_ssize_t)(sizeof(int16_t) * 65536) ||
        want_buf.len < (Py_ssize_t)(sizeof(uint64_t) * WORDS) ||
        masks.len < (Py_ssize_t)(sizeof(uint64_t) * WORDS * (size_t)(nx * nz * ny)) ||
        out.len < (Py_ssize_t)(sizeof(int64_t) * 64 * WORDS) || r2 < 0 ||
        scan_buf.len < (Py_ssize_t)(sizeof(uint64_t) * WORDS) ||
        lst_lo_buf.len < (Py_ssize_t)(sizeof(int64_t) * (size_t)(nx * nz * ny + 1)) ||
        lst_flat_buf.len != lst_bit_buf.len || lst_flat_buf.len != lst_next_buf.len) {
        PyErr_SetString(PyExc_ValueError, "census: arrays of the wrong size");
        goto done;
    }
    const uint16_t *g = grid.buf;
    const int16_t *bit_of = bits.buf;
    const uint64_t *want = want_buf.buf, *mask = masks.buf;
    int64_t *best = out.buf;
    const uint64_t *scan = scan_buf.buf;
    const int64_t *lst_lo = lst_lo_buf.buf;
    const int32_t *lst_flat = lst_flat_buf.buf, *lst_bit = lst_bit_buf.buf;
    const int32_t *lst_next = lst_next_buf.buf;
    const int64_t n_listed = (int64_t)(lst_flat_buf.len / (Py_ssize_t)sizeof(int32_t));
    if (lst_lo[nx * nz * ny] > n_listed) {
        PyErr_SetString(PyExc_ValueError, "census: a list runs past its end");
        goto done;
    }
    int64_t reach = 0;
    while ((reach + 1) * (reach + 1) <= r2) reach++;
    for (int i = 0; i < 64 * WORDS; i++) best[i] = r2 + 1;

    /* The sections that may hold a wanted block within the radius, nearest first. */
    int64_t lo[3], hi[3], p[3] = {px, pz, py}, n[3] = {nx, nz, ny};
    for (int a = 0; a < 3; a++) {
        lo[a] = (p[a] - reach) / SECTION;
        if (p[a] - reach < 0) lo[a] = 0;
        hi[a] = (p[a] + reach) / SECTION;
        if (hi[a] > n[a] - 1) hi[a] = n[a] - 1;
        if (lo[a] > hi[a]) goto finished;
    }
    size_t room = (size_t)((hi[0] - lo[0] + 1) * (hi[1] - lo[1] + 1) * (hi[2] - lo[2] + 1));
    cand = malloc(sizeof(Cand) * room);
    sorted = malloc(sizeof(Cand) * room);
    counts = calloc((size_t)r2 + 2, sizeof(int64_t));
    rest = malloc(sizeof(uint64_t) * WORDS * (room + 1));
    if (!cand || !sorted || !counts || !rest) { PyErr_NoMemory(); goto done; }
    size_t m = 0;
    for (int64_t i = lo[0]; i <= hi[0]; i++) {
        int64_t gx = gap(px, i * SECTION, i * SECTION + SECTION - 1);
        for (int64_t j = lo[1]; j <= hi[1]; j++) {
            int64_t gz = gap(pz, j * SECTION, j * SECTION + SECTION - 1);
            for (int64_t k = lo[2]; k <= hi[2]; k++) {
                int64_t gy = gap(py, k * SECTION, k * SECTION + SECTION - 1);
                int64_t lb = gx * gx + gz * gz + gy * gy;
                if (lb > r2) continue;
                int64_t sec = (i * nz + j) * ny + k;
                const uint64_t *ms = mask + WORDS * sec;
                int any = 0;
                for (int w = 0; w < WORDS; w++) any |= (ms[w] & want[w]) != 0;
                if (!any) continue;
                cand[m].lb = lb;
                cand[m].sec = sec;
                counts[lb + 1]++;
                m++;
            }
        }
    }
    for (int64_t v = 1; v <= r2 + 1; v++) counts[v] += counts[v - 1];
    for (size_t c = 0; c < m; c++) sorted[counts[cand[c].lb]++] = cand[c];
    /* rest[c]: the wanted ids any section from the c-th on may hold */
    for (int w = 0; w < WORDS; w++) rest[WORDS * m + (size_t)w] = 0;
    for (size_t c = m; c-- > 0;)
        for (int w = 0; w < WORDS; w++)
            rest[WORDS * c + (size_t)w] =
                rest[WORDS * (c + 1) + (size_t)w] | (mask[WORDS * sorted[c].sec + w] & want[w]);

    uint64_t settled[WORDS] = {0}, found[WORDS] = {0};
    int64_t lowest = r2 + 1; /* the smallest distance found for an id not yet settled */
    for (size_t c = 0; c < m; c++) {
        int64_t lb = sorted[c].lb, sec = sorted[c].sec;
        if (lb >= lowest) { /* every id found at lb or nearer is settled */
            lowest = r2 + 1;
            for (int w = 0; w < WORDS; w++) {
                uint64_t open = found[w] & ~settled[w];
                while (open) {
                    int b = __builtin_ctzll(open);
                    open &= open - 1;
                    int64_t d = best[64 * w + b];
                    if (d <= lb) settled[w] |= (uint64_t)1 << b;
                    else if (d < lowest) lowest = d;
                }
            }
        }
        uint64_t cells[WORDS], listed[WORDS];
        int pending = 0, any_cells = 0, any_listed = 0;
        for (int w = 0; w < WORDS; w++) {
            pending |= (rest[WORDS * c + (size_t)w] & ~settled[w]) != 0;
            uint64_t active = mask[WORDS * sec + w] & want[w] & ~settled[w];
            cells[w] = active & scan[w];
            listed[w] = active & ~scan[w];
            any_cells |= cells[w] != 0;
            any_listed |= listed[w] != 0;
        }
        if (!pending) break;
        if (any_listed) { /* the section's blocks of the ids kept as lists */
            /* entries come in runs of one id; lst_next[e] is where e's run ends */
            for (int64_t e = lst_lo[sec], end = lst_lo[sec + 1]; e < end;) {
                int64_t b = lst_bit[e];
                if (!((listed[b >> 6] >> (b & 63)) & 1)) {
                    e = lst_next[e];
                    continue;
                }
                int64_t flat = lst_flat[e++];
                int64_t y = flat % sy, z = (flat / sy) % sz, x = flat / (sy * sz);
                int64_t d = (x - px) * (x - px) + (z - pz) * (z - pz) + (y - py) * (y - py);
                /* the grid is read only for a block that would be nearer (it may be gone) */
                if (d < best[b] && bit_of[g[flat]] == b) {
                    best[b] = d;
                    found[b >> 6] |= (uint64_t)1 << (b & 63);
                    if (d < lowest) lowest = d;
                }
            }
        }
        if (!any_cells) continue;
        int64_t k = sec % ny, j = (sec / ny) % nz, i = sec / (ny * nz);
        int64_t x1 = i * SECTION + SECTION, z1 = j * SECTION + SECTION, y1 = k * SECTION + SECTION;
        if (x1 > sx) x1 = sx;
        if (z1 > sz) z1 = sz;
        if (y1 > sy) y1 = sy;
        for (int64_t x = i * SECTION; x < x1; x++) {
            int64_t dx2 = (x - px) * (x - px);
            for (int64_t z = j * SECTION; z < z1; z++) {
                int64_t dxz = dx2 + (z - pz) * (z - pz);
                const uint16_t *col = g + (x * sz + z) * sy;
                for (int64_t y = k * SECTION; y < y1; y++) {
                    int b = bit_of[col[y]];
                    if (b < 0 || !((cells[b >> 6] >> (b & 63)) & 1)) continue;
                    int64_t d = dxz + (y - py) * (y - py);
                    if (d < best[b]) {
                        best[b] = d;
                        found[b >> 6] |= (uint64_t)1 << (b & 63);
                        if (d < lowest) lowest = d;
                    }
                }
            }
        }
    }
finished:
    result = Py_None;
    Py_INCREF(result);
done:
    free(cand);
    free(sorted);
    free(counts);
    free(rest);
    PyBuffer_Release(&grid);
    PyBuffer_Release(&bits);
    PyBuffer_Release(&want_buf);
    PyBuffer_Release(&masks);
    PyBuffer_Release(&out);
    PyBuffer_Release(&scan_buf);
    PyBuffer_Release(&lst_lo_buf);
    PyBuffer_Release(&lst_flat_buf);
    PyBuffer_Release(&lst_bit_buf);
    PyBuffer_Release(&lst_next_buf);
    return result;
}

/* The k nearest blocks of the wanted ids within a radius, among those the world was
 * generated with and the grid still holds, exactly as ``BlockIndex._nearest_py`` orders
 * them: by squared distance, then y, x and z (every block has its own place in that order,
 * so the answer is one set whatever order the sections are read in). With ``horiz`` the
 * radius bounds the horizontal distance only; the order is still by the full distance.
 * Writes (d2, x, y index, z, id) per hit, nearest first, and returns how many. */
typedef struct {
    int64_t d2;
    int64_t cell;
} Near;

/* What a k-nearest search reads: the grid, the section table and the wanted ids. */
typedef struct {
    const uint16_t *g;
    int64_t sx, sz, sy, nz, ny;
    const int16_t *bit_of;
    const uint64_t *want, *mask, *scan;
    const int64_t *lst_lo;
    const int32_t *lst_flat, *lst_bit, *lst_next;
} Tables;

static int64_t floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

static int cand_cmp(const void *a, const void *b) {
    const Cand *x = a, *y = b;
    if (x->lb != y->lb) return x->lb < y->lb ? -1 : 1;
    return (x->sec > y->sec) - (x->sec < y->sec);
}

static int near_less(int64_t d2, int64_t cell, const Near *n) {
    return d2 < n->d2 || (d2 == n->d2 && cell < n->cell);
}

/* Put a block into the k best (kept sorted); returns the new count. */
static Py_ssize_t keep(Near *best, Py_ssize_t n, Py_ssize_t k, int64_t d2, int64_t cell) {
    if (n == k && !near_less(d2, cell, &best[k - 1])) return n;
    Py_ssize_t i = n < k ? n : k - 1;
    while (i > 0 && near_less(d2, cell, &best[i - 1])) {
        best[i] = best[i - 1];
        i--;
    }
    best[i].d2 = d2;
    best[i].cell = cell;
    return n < k ? n + 1 : n;
}

/* Offer every wanted block of one section that the grid still holds to the k best. */
static Py_ssize_t read_section(int64_t sec, const Tables *t, Near *best, Py_ssize_t n,
                               Py_ssize_t k, int64_t px, int64_t py, int64_t pz, int64_t r2,
                               int horiz) {
    uint64_t cells[WORDS], listed[WORDS];
    int any_cells = 0, any_listed = 0;
    for (int w = 0; w < WORDS; w++) {
        uint64_t active = t->mask[WORDS * sec + w] & t->want[w];
        cells[w] = active & t->scan[w];
        listed[w] = active & ~t->scan[w];
        any_cells |= cells[w] != 0;
        any_listed |= listed[w] != 0;
    }
    const int64_t sx = t->sx, sz = t->sz, sy = t->sy;
    if (any_listed) {
        for (int64_t e = t->lst_lo[sec], end = t->lst_lo[sec + 1]; e < end;) {
            int64_t b = t->lst_bit[e];
            if (!((listed[b >> 6] >> (b & 63)) & 1)) {
                e = t->lst_next[e];
                continue;
            }
            int64_t flat = t->lst_flat[e++];
            if (t->bit_of[t->g[flat]] != b) continue; /* dug, or replaced */
            int64_t y = flat % sy, z = (flat / sy) % sz, x = flat / (sy * sz);
            int64_t h = (x - px) * (x - px) + (z - pz) * (z - pz);
            int64_t d = h + (y - py) * (y - py);
            if ((horiz ? h : d) > r2) continue;
            n = keep(best, n, k, d, (y * sx + x) * sz + z);
        }
    }
    if (!any_cells) return n;
    int64_t l = sec % t->ny, j = (sec / t->ny) % t->nz, i = sec / (t->ny * t->nz);
    int64_t x1 = i * SECTION + SECTION, z1 = j * SECTION + SECTION, y1 = l * SECTION + SECTION;
    if (x1 > sx) x1 = sx;
    if (z1 > sz) z1 = sz;
    if (y1 > sy) y1 = sy;
    for (int64_t x = i * SECTION; x < x1; x++) {
        int64_t dx2 = (x - px) * (x - px);
        for (int64_t z = j * SECTION; z < z1; z++) {
            int64_t h = dx2 + (z - pz) * (z - pz);
            if (horiz && h > r2) continue;
            const uint16_t *col = t->g + (x * sz + z) * sy;
            for (int64_t y = l * SECTION; y < y1; y++) {
                int b = t->bit_of[col[y]];
                if (b < 0 || !((cells[b >> 6] >> (b & 63)) & 1)) continue;
                int64_t d = h + (y - py) * (y - py);
                if (!horiz && d > r2) continue;
                if (n == k && d > best[k - 1].d2) continue;
                n = keep(best, n, k, d, (y * sx + x) * sz + z);
            }
        }
    }
    return n;
}

static PyObject *nearest(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer grid = {0}, bits = {0}, want_buf = {0}, masks = {0}, out = {0};
    Py_buffer scan_buf = {0}, lst_lo_buf = {0}, lst_flat_buf = {0}, lst_bit_buf = {0};
    Py_buffer lst_next_buf = {0};
    Py_ssize_t sx, sz, sy, nx, nz, ny, k;
    long long px, py, pz, r2;
    int horiz;
    if (!PyArg_ParseTuple(args, "y*nnny*y*y*nnny*y*y*y*y*LLLLnpw*", &grid, &sx, &sz, &sy, &bits,
                          &want_buf, &masks, &nx, &nz, &ny, &scan_buf, &lst_lo_buf,
                          &lst_flat_buf, &lst_bit_buf, &lst_next_buf, &px, &py, &pz, &r2, &k,
                          &horiz, &out))
        return NULL;
    PyObject *result = NULL;
    Cand *cand = NULL;
    Near *best = NULL;
    Py_ssize_t n = 0;
    if (grid.len < (Py_ssize_t)(sizeof(uint16_t) * (size_t)(sx * sz * sy)) ||
        bits.len < (Py_ssize_t)(sizeof(int16_t) * 65536) ||
        want_buf.len < (Py_ssize_t)(sizeof(uint64_t) * WORDS) ||
        masks.len < (Py_ssize_t)(sizeof(uint64_t) * WORDS * (size_t)(nx * nz * ny)) || k < 1 ||
        out.len < (Py_ssize_t)(sizeof(int64_t) * 5 * (size_t)k) || r2 < 0 ||
        scan_buf.len < (Py_ssize_t)(sizeof(uint64_t) * WORDS) ||
        lst_lo_buf.len < (Py_ssize_t)(sizeof(int64_t) * (size_t)(nx * nz * ny + 1)) ||
        lst_flat_buf.len != lst_bit_buf.len || lst_flat_buf.len != lst_next_buf.len) {
        PyErr_SetString(PyExc_ValueError, "nearest: arrays of the wrong size");
        goto done;
    }
    const uint16_t *g = grid.buf;
    const int16_t *bit_of = bits.buf;
    const uint64_t *want = want_buf.buf, *mask = masks.buf, *scan = scan_buf.buf;
    const int64_t *lst_lo = lst_lo_buf.buf;
    const int32_t *lst_flat = lst_flat_buf.buf, *lst_bit = lst_bit_buf.buf;
    const int32_t *lst_next = lst_next_buf.buf;
    int64_t *o = out.buf;
    const int64_t n_listed = (int64_t)(lst_flat_buf.len / (Py_ssize_t)sizeof(int32_t));
    if (lst_lo[nx * nz * ny] > n_listed) {
        PyErr_SetString(PyExc_ValueError, "nearest: a list runs past its end");
        goto done;
    }
    /* Sections are read ring by ring around the body's section (a ring: those d sections
     * away along some axis, none further along any; with ``horiz``, along x or z, every
     * section of a column). A section in ring d >= 1 is at least (d - 1) * 8 + 1 away
     * along that axis, so the rings stop once that is beyond the radius or the k-th
     * nearest found; within a ring, sections are read nearest first and skipped when no
     * block of theirs can be nearer than the k-th found. */
    int64_t home[3] = {floor_div(px, SECTION), floor_div(pz, SECTION), floor_div(py, SECTION)};
    int64_t dims[3] = {nx, nz, ny};
    int64_t reach = 0;
    while ((reach + 1) * (reach + 1) <= r2) reach++;
    int64_t rings = reach / SECTION + 2;
    int64_t side = 2 * rings + 1;
    size_t room = (size_t)(horiz ? 4 * side * ny : 6 * side * side) + 1;
    Tables tables = {g,      sx,   sz,       sy,     nz,       ny,       bit_of,  want,
                     mask,   scan, lst_lo,   lst_flat, lst_bit, lst_next};
    cand = malloc(sizeof(Cand) * room);
    best = malloc(sizeof(Near) * (size_t)k);
    if (!cand || !best) { PyErr_NoMemory(); goto done; }
    for (int64_t d = 0; d <= rings; d++) {
        if (d > 0) {
            int64_t near = (d - 1) * SECTION + 1;
            if (near * near > r2 || (n == k && near * near > best[k - 1].d2)) break;
        }
        int64_t lo[3], hi[3];
        int outside = 1; /* whether this ring reaches past the world on every axis */
        for (int a = 0; a < 3; a++) {
            lo[a] = home[a] - d;
            hi[a] = home[a] + d;
            if (horiz && a == 2) {
                lo[a] = 0;
                hi[a] = dims[a] - 1;
            }
            if (lo[a] > 0 || hi[a] < dims[a] - 1) outside = 0;
            if (lo[a] < 0) lo[a] = 0;
            if (hi[a] > dims[a] - 1) hi[a] = dims[a] - 1;
        }
        size_t m = 0;
        for (int64_t i = lo[0]; i <= hi[0]; i++) {
            int64_t gx = gap(px, i * SECTION, i * SECTION + SECTION - 1);
            int edge_x = i == home[0] - d || i == home[0] + d;
            for (int64_t j = lo[1]; j <= hi[1]; j++) {
                int64_t gz = gap(pz, j * SECTION, j * SECTION + SECTION - 1);
                if (gx * gx + gz * gz > r2) continue;
                int edge = edge_x || j == home[1] - d || j == home[1] + d;
                if (horiz && !edge) continue;
                /* a column inside the ring: only its two ends along y are in it */
                int64_t ends[2] = {home[2] - d, home[2] + d}, *only = (horiz || edge) ? NULL : ends;
                int64_t l0 = only ? 0 : lo[2], l1 = only ? 1 : hi[2];
                for (int64_t q = l0; q <= l1; q++) {
                    int64_t l = only ? only[q] : q;
                    if (l < lo[2] || l > hi[2]) continue;
                    int64_t gy = gap(py, l * SECTION, l * SECTION + SECTION - 1);
                    int64_t lb = gx * gx + gz * gz + gy * gy;
                    if (!horiz && lb > r2) continue;
                    int64_t sec = (i * nz + j) * ny + l;
                    const uint64_t *ms = mask + WORDS * sec;
                    int any = 0;
                    for (int w = 0; w < WORDS; w++) any |= (ms[w] & want[w]) != 0;
                    if (!any || m >= room) continue;
                    cand[m].lb = lb;
                    cand[m].sec = sec;
                    m++;
                }
            }
        }
        qsort(cand, m, sizeof(Cand), cand_cmp);
        for (size_t c = 0; c < m; c++) {
            if (n == k && cand[c].lb > best[k - 1].d2) break; /* no nearer block is left */
            n = read_section(cand[c].sec, &tables, best, n, k, px, py, pz, r2, horiz);
        }
        if (outside) break; /* this ring held every section of the world */
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t cell = best[i].cell, z = cell % sz, x = (cell / sz) % sx, y = cell / (sz * sx);
        o[5 * i] = best[i].d2;
        o[5 * i + 1] = x;
        o[5 * i + 2] = y;
        o[5 * i + 3] = z;
        o[5 * i + 4] = g[(x * sz + z) * sy + y];
    }
    result = PyLong_FromSsize_t(n);
done:
    free(cand);
    free(best);
    PyBuffer_Release(&grid);
    PyBuffer_Release(&bits);
    PyBuffer_Release(&want_buf);
    PyBuffer_Release(&masks);
    PyBuffer_Release(&out);
    PyBuffer_Release(&scan_buf);
    PyBuffer_Release(&lst_lo_buf);
    PyBuffer_Release(&lst_flat_buf);
    PyBuffer_Release(&lst_bit_buf);
    PyBuffer_Release(&lst_next_buf);
    return result;
}

/* The straight way and its digs, in ``_line_approach.c``. */
PyObject *mc_line_approach(PyObject *self, PyObject *args);

static PyMethodDef methods[] = {
    {"census", census, METH_VARARGS,
     "Nearest squared distance per wanted id (see world/census_native.py)."},
    {"nearest", nearest, METH_VARARGS,
     "The k nearest generated blocks of the wanted ids (see world/census_native.py)."},
    {"line_approach", mc_line_approach, METH_VARARGS,
     "The straight way towards a target and what must be dug on it (see body/paths.py)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_census", "Compiled nearby-block census and k-nearest search.", -1, methods,
};

PyMODINIT_FUNC PyInit__census(void) { return PyModule_Create(&module); }
