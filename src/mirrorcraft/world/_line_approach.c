/* The straight way towards a target and what must be dug on it, compiled (see
 * body/paths.py and world/census_native.py); part of the ``_census`` module. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>

/* Whether a cell is still to be looked at: not the target (never dug here), not checked
 * already on this way, and inside the world. */
static int fresh(const int64_t *seen, int64_t nseen, const int64_t c[3], const int64_t t[3],
                 Py_ssize_t sx, Py_ssize_t sz, Py_ssize_t sy, long long min_y) {
    if (c[0] == t[0] && c[1] == t[1] && c[2] == t[2]) return 0;
    for (int64_t j = 0; j < nseen; j++)
        if (seen[3 * j] == c[0] && seen[3 * j + 1] == c[1] && seen[3 * j + 2] == c[2]) return 0;
    return 0 <= c[0] && c[0] < sx && 0 <= c[2] && c[2] < sz && min_y <= c[1] && c[1] < min_y + sy;
}

/* ``body/paths.py: _line_approach_py``, exactly: walk the 3-D Bresenham line from ``start``
 * towards ``target`` while out of reach (squared distance > reach2), checking for each step
 * the cells a player two blocks tall passes through (straight up or down: the cell and the
 * one above; otherwise the headroom to jump when it steps up, the side of a diagonal step
 * that digs less, the new column at the height it moves at, and the cell it drops into
 * when it steps down); once in reach only the line's cells are checked (the rest of the
 * line must be clear to see). A cell out of the world, the
 * target, a cell already checked or a passable one needs nothing; any other is dug if
 * ``clear[id]`` is 1 and blocks the way if it is 0; -1 (not known yet) stops the walk
 * and asks the caller, who fills it in and calls again (``clear`` has an entry per id of
 * the world's palette; an id past it is a ValueError).
 * Returns (status, stand x, y, z, digs, cell x, y, z, id): status 0 a way (its digs and
 * where the body stood for each written to ``out``), 1 blocked at the cell, 2 blocked
 * there as too many digs, 3 asking about the id. */
PyObject *mc_line_approach(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer grid = {0}, passable_buf = {0}, clear_buf = {0}, out = {0};
    Py_ssize_t sx, sz, sy, max_digs;
    long long min_y, x0, y0, z0, tx, ty, tz;
    double reach2;
    if (!PyArg_ParseTuple(args, "y*nnnLLLLLLLdy*y*nw*", &grid, &sx, &sz, &sy, &min_y, &x0, &y0,
                          &z0, &tx, &ty, &tz, &reach2, &passable_buf, &clear_buf, &max_digs,
                          &out))
        return NULL;
    PyObject *result = NULL;
    int64_t *seen = NULL;
    int64_t dx = llabs(tx - x0), dy = llabs(ty - y0), dz = llabs(tz - z0);
    int64_t n = dx > dy ? dx : dy;
    if (dz > n) n = dz;
    /* rows of ``out`` needed: at most one dig past ``max_digs``, and at most five per cell */
    int64_t rows = (max_digs < 0 ? 0 : max_digs) < 5 * n ? (max_digs < 0 ? 0 : max_digs) : 5 * n;
    if (grid.len < (Py_ssize_t)(sizeof(uint16_t) * (size_t)(sx * sz * sy)) ||
        passable_buf.len < 65536 ||
        out.len < (Py_ssize_t)(sizeof(int64_t) * 6 * (size_t)(rows + 1))) {
        PyErr_SetString(PyExc_ValueError, "line_approach: arrays of the wrong size");
        goto done;
    }
    const uint16_t *g = grid.buf;
    const uint8_t *passable = passable_buf.buf;
    const int8_t *clear = clear_buf.buf;
    int64_t *o = out.buf;
    seen = malloc(sizeof(int64_t) * 3 * (size_t)(5 * n + 2));
    if (!seen) { PyErr_NoMemory(); goto done; }
    int64_t nseen = 0, ndigs = 0;
    int64_t stepx = tx > x0 ? 1 : -1, stepy = ty > y0 ? 1 : -1, stepz = tz > z0 ? 1 : -1;
    int64_t x = x0, y = y0, z = z0, ex = n / 2, ey = n / 2, ez = n / 2;
    int64_t stand[3] = {x0, y0, z0};
    const int64_t target[3] = {tx, ty, tz};
    int walking = 1;
    int status = 0;
    int64_t at[3] = {0, 0, 0}, at_id = 0;
    for (int64_t i = 0; i < n; i++) {
        ex -= dx;
        ey -= dy;
        ez -= dz;
        if (ex < 0) { ex += n; x += stepx; }
        if (ey < 0) { ey += n; y += stepy; }
        if (ez < 0) { ez += n; z += stepz; }
        if (x == tx && y == ty && z == tz) break;
        if (walking) {
            int64_t ax = stand[0] - tx, ay = stand[1] - ty, az = stand[2] - tz;
            walking = (double)(ax * ax + ay * ay + az * az) > reach2;
        }
        int64_t checks[5][3];
        int nchecks = 0;
#define CHECK(a, b, c) (checks[nchecks][0] = (a), checks[nchecks][1] = (b), checks[nchecks][2] = (c), nchecks++)
        if (!walking) {
            CHECK(x, y, z);
        } else if (x == stand[0] && z == stand[2]) {
            CHECK(x, y, z);
            CHECK(x, y + 1, z);
        } else {
            int64_t px = stand[0], py = stand[1], pz = stand[2];
            int64_t h = y > py ? py + 1 : py;
            if (y > py) CHECK(px, py + 2, pz);
            if (x != px && z != pz) {
                int64_t side[4][3] = {{x, h, pz}, {x, h + 1, pz}, {px, h, z}, {px, h + 1, z}};
                int64_t cost[2] = {0, 0};
                for (int q = 0; q < 4; q++) {
                    int64_t cx = side[q][0], cy = side[q][1], cz = side[q][2];
                    if (!fresh(seen, nseen, side[q], target, sx, sz, sy, min_y)) continue;
                    uint16_t bid = g[(cx * sz + cz) * sy + (cy - min_y)];
                    if (passable[bid]) continue;
                    if (bid >= clear_buf.len) {
                        PyErr_SetString(PyExc_ValueError, "line_approach: a block id past the table");
                        goto done;
                    }
                    if (clear[bid] < 0) {
                        at[0] = cx, at[1] = cy, at[2] = cz, at_id = bid;
                        status = 3;
                        goto finish;
                    }
                    cost[q / 2] += clear[bid] ? 1 : 1000; /* paths.py: UNCLEARABLE */
                }
                int pick = cost[0] <= cost[1] ? 0 : 2;
                CHECK(side[pick][0], side[pick][1], side[pick][2]);
                CHECK(side[pick + 1][0], side[pick + 1][1], side[pick + 1][2]);
            }
            CHECK(x, h, z);
            CHECK(x, h + 1, z);
            if (y < py) CHECK(x, y, z);
        }
#undef CHECK
        for (int k = 0; k < nchecks; k++) {
            int64_t cx = checks[k][0], cy = checks[k][1], cz = checks[k][2];
            if (!fresh(seen, nseen, checks[k], target, sx, sz, sy, min_y)) continue;
            seen[3 * nseen] = cx;
            seen[3 * nseen + 1] = cy;
            seen[3 * nseen + 2] = cz;
            nseen++;
            uint16_t bid = g[(cx * sz + cz) * sy + (cy - min_y)];
            if (passable[bid]) continue;
            at[0] = cx, at[1] = cy, at[2] = cz, at_id = bid;
            if (bid >= clear_buf.len) {
                PyErr_SetString(PyExc_ValueError, "line_approach: a block id past the table");
                goto done;
            }
            if (clear[bid] < 0) { status = 3; goto finish; }
            if (clear[bid] == 0) { status = 1; goto finish; }
            int64_t *row = o + 6 * ndigs;
            row[0] = cx, row[1] = cy, row[2] = cz;
            row[3] = stand[0], row[4] = stand[1], row[5] = stand[2];
            ndigs++;
            if (ndigs > max_digs) { status = 2; goto finish; }
        }
        if (walking) {
            stand[0] = x;
            stand[1] = y;
            stand[2] = z;
        }
    }
finish:
    result = Py_BuildValue("(iLLLLLLLL)", status, (long long)stand[0], (long long)stand[1],
                           (long long)stand[2], (long long)ndigs, (long long)at[0],
                           (long long)at[1], (long long)at[2], (long long)at_id);
done:
    free(seen);
    PyBuffer_Release(&grid);
    PyBuffer_Release(&passable_buf);
    PyBuffer_Release(&clear_buf);
    PyBuffer_Release(&out);
    return result;
}
