/* The reference planners' unit costs, compiled (see agents/plan_native.py).
 *
 * A C port of ``Planner._unit_costs`` in agents/planner.py, which stays the reference:
 * Knuth's generalisation of Dijkstra's algorithm over the compiled ways of
 * agents/plan_costs.py. Every sum, product and comparison is done in the same order on
 * the same IEEE doubles as the Python code, so the costs are the same floats (the tests
 * compare the two at every decision of recorded episodes).
 *
 * Items are numbers given by plan_native (one per name, for the process). The relevant
 * items come in sorted order, and the heap breaks ties between equal costs by an item's
 * rank in it, as Python's heap of (cost, name) does. An item that is not relevant costs
 * INF; only its count matters.
 *
 * The caller (plan_native.py) passes flat int64 / float64 arrays; nothing here allocates
 * Python objects except the result.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define INF 1e9
#define CRAFT 0
#define SMELT 1
#define SOURCE 2

typedef struct {
    double cost;
    int64_t item; /* the item's rank among the relevant items */
} Node;

static int node_less(const Node *a, const Node *b) {
    return a->cost < b->cost || (a->cost == b->cost && a->item < b->item);
}

static void heap_push(Node *heap, Py_ssize_t *n, Node v) {
    Py_ssize_t i = (*n)++;
    while (i > 0) {
        Py_ssize_t parent = (i - 1) / 2;
        if (!node_less(&v, &heap[parent])) break;
        heap[i] = heap[parent];
        i = parent;
    }
    heap[i] = v;
}

static Node heap_pop(Node *heap, Py_ssize_t *n) {
    Node top = heap[0];
    Node last = heap[--(*n)];
    Py_ssize_t i = 0, size = *n;
    for (;;) {
        Py_ssize_t l = 2 * i + 1, r = l + 1, m = i;
        const Node *best = &last;
        if (l < size && node_less(&heap[l], best)) { m = l; best = &heap[l]; }
        if (r < size && node_less(&heap[r], best)) { m = r; best = &heap[r]; }
        if (m == i) break;
        heap[i] = heap[m];
        i = m;
    }
    if (size > 0) heap[i] = last;
    return top;
}

/* The compiled ways and the step's facts, as views of the caller's arrays. */
typedef struct {
    const int64_t *ekind, *estation, *ea, *eb, *ec, *ed, *ee;
    const double *ebase;
    const int64_t *cell_one, *cell_n, *cell_lo, *cell_hi, *citems;
    const int64_t *pair_f, *pair_m;
    const int64_t *tool_lo, *tool_hi, *tools;
    /* the step */
    const int64_t *inv;
    const double *station_fixed; /* per station slot: 0, 1, or -1 for "make it" */
    const int64_t *station_item;
    const int64_t *tool_free;    /* per tool slot */
    const double *explore;       /* per explore slot */
    int64_t fuel_ticks;
    double *unit;
} Ctx;

/* Entry layout (plan_native.encode), entry e:
 *   CRAFT:  base = k, station slot, cells [a, b)
 *   SMELT:  base = units / 6, station slot, a = input, b = units, c = fuel ticks needed,
 *           d = fuel ticks one input item gives, fuel pairs [e, pair_hi)
 *   SOURCE: base = batches / 4, a = explore slot, b = the block (-1: a mob) */
static double entry_cost(const Ctx *x, int64_t e, const int64_t *pair_hi) {
    int64_t kind = x->ekind[e];
    if (kind == CRAFT) {
        int64_t s = x->estation[e];
        double fixed = x->station_fixed[s];
        double total = x->ebase[e] + (fixed < 0 ? 1.0 + x->unit[x->station_item[s]] : fixed);
        for (int64_t c = x->ea[e]; c < x->eb[e]; c++) {
            double best;
            int64_t one = x->cell_one[c], n = x->cell_n[c];
            if (one >= 0) {
                int64_t need = n - x->inv[one];
                best = need <= 0 ? 0.0 : x->unit[one] * (double)need;
            } else {
                best = INF;
                int first = 1;
                for (int64_t k = x->cell_lo[c]; k < x->cell_hi[c]; k++) {
                    int64_t i = x->citems[k];
                    int64_t need = n - x->inv[i];
                    double v = need <= 0 ? 0.0 : x->unit[i] * (double)need;
                    if (first || v < best) { best = v; first = 0; }
                }
            }
            total += best;
            if (total >= INF) return INF;
        }
        return total;
    }
    if (kind == SMELT) {
        int64_t source = x->ea[e], units = x->eb[e], need = x->ec[e];
        int64_t need_in = units - x->inv[source];
        double cost_in = need_in <= 0 ? 0.0 : x->unit[source] * (double)need_in;
        if (cost_in >= INF) return INF;
        double fuel;
        if (x->fuel_ticks - x->ed[e] * x->inv[source] >= need) {
            fuel = 0.0;
        } else {
            fuel = INF;
            for (int64_t p = x->ee[e]; p < pair_hi[e]; p++) {
                double v = x->unit[x->pair_f[p]] * (double)x->pair_m[p];
                if (v < fuel) fuel = v;
            }
        }
        int64_t s = x->estation[e];
        double fixed = x->station_fixed[s];
        double total = x->ebase[e] + (fixed < 0 ? 1.0 + x->unit[x->station_item[s]] : fixed) + fuel;
        return total + cost_in;
    }
    if (kind == SOURCE) {
        double total = x->ebase[e] + x->explore[x->ea[e]];
        int64_t slot = x->eb[e];
        if (slot >= 0) {
            double tool = 0.0;
            if (!x->tool_free[slot]) {
                tool = INF;
                for (int64_t k = x->tool_lo[slot]; k < x->tool_hi[slot]; k++) {
                    double v = x->unit[x->tools[k]];
                    if (v < tool) tool = v;
                }
            }
            total += tool;
        }
        return total;
    }
    return INF;
}

#define NBUF 29

static PyObject *unit_costs(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer b[NBUF];
    Py_ssize_t n_relevant, n_items;
    long long fuel_ticks;
    PyObject *names = NULL;
    memset(b, 0, sizeof(b));
    if (!PyArg_ParseTuple(
            args, "nnL" "y*y*y*y*y*y*y*y*y*y*" "y*y*y*y*y*y*y*y*y*y*" "y*y*y*y*y*y*y*y*y*" "|O!",
            &n_relevant, &n_items, &fuel_ticks,
            &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &b[6], &b[7], &b[8], &b[9],
            &b[10], &b[11], &b[12], &b[13], &b[14], &b[15], &b[16], &b[17], &b[18], &b[19],
            &b[20], &b[21], &b[22], &b[23], &b[24], &b[25], &b[26], &b[27], &b[28],
            &PyList_Type, &names))
        return NULL;
    /* With ``names`` (the relevant items' names, in order) the result is a dict name ->
     * cost instead of the list of costs. */
    /* The ways (plan_native._Table.arrays): 0 kind 1 station 2 a 3 b 4 c 5 d 6 e 7 pair_hi
     *   8 base 9 cell_one 10 cell_n 11 cell_lo 12 cell_hi 13 citems 14 pair_f 15 pair_m
     *   16 station_item
     * The relevance (plan_native.Encoded.arrays): 17 relevant items, in sorted order
     *   18 bounds of the ways making each (n_relevant + 1) 19 those ways
     *   20 bounds of the uses of each (n_relevant + 1) 21 uses (user, way, smelted input or
     *   -1, units) 22 tool bounds by block (low) 23 (high) 24 tools
     * The step: 25 counts owned 26 station fixed cost by slot (0, 1, or -1: make it)
     *   27 whether a block's tool is owned (or the hand harvests it) 28 exploring costs */
    PyObject *result = NULL;
    Ctx x;
    x.ekind = b[0].buf; x.estation = b[1].buf; x.ea = b[2].buf; x.eb = b[3].buf;
    x.ec = b[4].buf; x.ed = b[5].buf; x.ee = b[6].buf;
    const int64_t *pair_hi = b[7].buf;
    x.ebase = b[8].buf;
    x.cell_one = b[9].buf; x.cell_n = b[10].buf; x.cell_lo = b[11].buf; x.cell_hi = b[12].buf;
    x.citems = b[13].buf; x.pair_f = b[14].buf; x.pair_m = b[15].buf;
    x.station_item = b[16].buf;
    const int64_t *rel = b[17].buf, *prod_lo = b[18].buf, *prod = b[19].buf;
    const int64_t *use_lo = b[20].buf, *uses = b[21].buf;
    x.tool_lo = b[22].buf; x.tool_hi = b[23].buf; x.tools = b[24].buf;
    x.inv = b[25].buf;
    x.station_fixed = b[26].buf;
    x.tool_free = b[27].buf;
    x.explore = b[28].buf;
    x.fuel_ticks = (int64_t)fuel_ticks;
    double *unit = malloc(sizeof(double) * (size_t)(n_items + 1));
    char *final = calloc((size_t)(n_items + 1), 1);
    int64_t *rank = malloc(sizeof(int64_t) * (size_t)(n_items + 1));
    Py_ssize_t heap_n = 0, heap_cap = n_relevant + 16;
    Node *heap = malloc(sizeof(Node) * (size_t)heap_cap);
    if (!unit || !final || !rank || !heap) { PyErr_NoMemory(); goto done; }
    x.unit = unit;
    for (Py_ssize_t i = 0; i <= n_items; i++) { unit[i] = INF; rank[i] = -1; }
    for (Py_ssize_t r = 0; r < n_relevant; r++) rank[rel[r]] = r;
    /* First pass: every way of every relevant item, in the items' order, each reading the
     * costs set so far (as the Python loop does). */
    for (Py_ssize_t r = 0; r < n_relevant; r++) {
        double best = INF;
        for (int64_t k = prod_lo[r]; k < prod_lo[r + 1]; k++) {
            int64_t e = prod[k];
            if (x.ekind[e] == SMELT && x.inv[x.ea[e]] < x.eb[e] && unit[x.ea[e]] >= INF) continue;
            double v = entry_cost(&x, e, pair_hi);
            if (v < best) best = v;
        }
        if (best < INF) {
            unit[rel[r]] = best;
            Node nd = {best, r};
            heap_push(heap, &heap_n, nd);
        }
    }
    /* Cheapest first; a heap node's item is its rank, which orders as the item's name. */
    while (heap_n > 0) {
        Node top = heap_pop(heap, &heap_n);
        int64_t item = rel[top.item];
        if (final[item] || top.cost > unit[item]) continue;
        final[item] = 1;
        for (int64_t k = use_lo[top.item]; k < use_lo[top.item + 1]; k++) {
            const int64_t *u = uses + 4 * k;
            int64_t user = u[0], e = u[1], smelted = u[2], units = u[3];
            if (user < 0 || user >= n_items || rank[user] < 0) {
                PyErr_SetString(PyExc_ValueError, "a way is used by an item that is not relevant");
                goto done;
            }
            if (final[user]) continue;
            if (smelted >= 0) {
                if (x.inv[smelted] < units && unit[smelted] >= INF) continue;
            } else if (x.ekind[e] == SOURCE && (x.eb[e] < 0 || x.tool_free[x.eb[e]])) {
                continue; /* its cost cannot have changed since the first pass */
            }
            double v = entry_cost(&x, e, pair_hi);
            if (v < unit[user] - 1e-9) {
                unit[user] = v;
                if (heap_n >= heap_cap) {
                    Py_ssize_t cap = heap_cap * 2;
                    Node *grown = realloc(heap, sizeof(Node) * (size_t)cap);
                    if (!grown) { PyErr_NoMemory(); goto done; }
                    heap = grown;
                    heap_cap = cap;
                }
                Node nd = {v, rank[user]};
                heap_push(heap, &heap_n, nd);
            }
        }
    }
    if (names != NULL) {
        if (PyList_GET_SIZE(names) != n_relevant) {
            PyErr_SetString(PyExc_ValueError, "unit_costs: one name per relevant item");
            goto done;
        }
        result = PyDict_New();
        if (!result) goto done;
        for (Py_ssize_t r = 0; r < n_relevant; r++) {
            PyObject *f = PyFloat_FromDouble(unit[rel[r]]);
            if (!f || PyDict_SetItem(result, PyList_GET_ITEM(names, r), f) < 0) {
                Py_XDECREF(f);
                Py_CLEAR(result);
                goto done;
            }
            Py_DECREF(f);
        }
        goto done;
    }
    result = PyList_New(n_relevant);
    if (!result) goto done;
    for (Py_ssize_t r = 0; r < n_relevant; r++) {
        PyObject *f = PyFloat_FromDouble(unit[rel[r]]);
        if (!f) { Py_CLEAR(result); goto done; }
        PyList_SET_ITEM(result, r, f);
    }
done:
    free(unit);
    free(final);
    free(rank);
    free(heap);
    for (int i = 0; i < NBUF; i++)
        if (b[i].obj) PyBuffer_Release(&b[i]);
    return result;
}

static PyMethodDef methods[] = {
    {"unit_costs", unit_costs, METH_VARARGS,
     "Unit costs of the relevant items (see agents/plan_native.py)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_unit_costs", "Compiled planner unit costs.", -1, methods,
};

PyMODINIT_FUNC PyInit__unit_costs(void) { return PyModule_Create(&module); }
