/* The C rasterizer of buildbench.render.raster: the pixel definition of raster.py's docstring,
 * operation for operation as its numpy code does it (compiled without fused multiply-adds or
 * reassociation, so both give the same bits). Plain CPython extension: arrays come through the
 * buffer protocol, no numpy headers.
 *
 * render(vertices, indices, closed, mvps, rotations, (lx, ly, lz, ambient, diffuse), width, height, out, pitch)
 *   vertices: VERTEX_DTYPE records (28 bytes: 3 float32 position, 3 float32 normal, 4 uint8 RGBA)
 *   indices: uint32, three per triangle; the first `closed` entries are closed (culled) triangles
 *   mvps: float64 (views, 16) row-major; rotations: float64 (views, 9) row-major
 *   out: writable uint8, zeroed by the caller: (views, height, width, 4) pixels whose rows start `pitch` bytes
 *        apart (>= 4 width; a PNG encoder's rows have a filter byte more), the last row's pixels ending the buffer
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define PIXEL_VERSION 2
#define VERTEX_BYTES 28
#define SUB_BITS 8
#define ONE (1 << SUB_BITS)
#define HALF (ONE / 2)
#define GUARD_PX 2097152.0 /* 2^21 */
#define LIMIT 1073741824.0 /* 2^30 */
#define MAX_POLY 8
/* A triangle whose box has more than this many times as many rows as columns is walked by columns. */
#define COLUMN_WALK_RATIO 2

typedef struct { double c[4]; } Corner;

/* An RGBA pixel anywhere in a byte buffer: rows `pitch` bytes apart need not keep pixels 4-byte aligned. */
typedef uint32_t __attribute__((aligned(1), may_alias)) Pixel;

typedef struct {
    int width, height;
    size_t pitch; /* bytes from one row of `color` to the next */
    float *depth;
    uint8_t *color;
} Target;

static inline int64_t floor_div(int64_t a, int64_t b) { /* b > 0 */
    int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

static inline double plane_distance(const Corner *v, int plane, double guard) {
    double x = v->c[0], y = v->c[1], z = v->c[2], w = v->c[3];
    double gw = guard * w;
    switch (plane) {
    case 0: return z + w;
    case 1: return x + gw;
    case 2: return gw - x;
    case 3: return y + gw;
    default: return gw - y;
    }
}

/* Step 3: Sutherland-Hodgman against the near plane and the guard band; returns the corner count. */
static int clip_polygon(Corner *poly, int n, double guard) {
    Corner tmp[MAX_POLY + 2];
    int all_in = 1;
    for (int k = 0; k < n && all_in; k++)
        for (int p = 0; p < 5; p++)
            if (!(plane_distance(&poly[k], p, guard) >= 0.0)) { all_in = 0; break; }
    if (all_in) return n;
    for (int plane = 0; plane < 5; plane++) {
        int m = 0;
        for (int k = 0; k < n; k++) {
            const Corner *p = &poly[k], *q = &poly[(k + 1) % n];
            double dp = plane_distance(p, plane, guard), dq = plane_distance(q, plane, guard);
            int pin = dp >= 0.0, qin = dq >= 0.0;
            if (pin) tmp[m++] = *p;
            if (pin != qin) {
                const Corner *inner = pin ? p : q, *outer = pin ? q : p;
                double di = pin ? dp : dq, dout = pin ? dq : dp;
                double s = di / (di - dout);
                for (int i = 0; i < 4; i++) tmp[m].c[i] = inner->c[i] + s * (outer->c[i] - inner->c[i]);
                m++;
            }
        }
        memcpy(poly, tmp, sizeof(Corner) * (size_t)m);
        n = m;
        if (n < 3) return 0;
    }
    return n;
}

typedef struct { int64_t x, y; double z; } Win;

/* Step 4; 0 where the corner is not drawable. */
static inline int to_window(const Corner *v, const Target *t, Win *out) {
    double x = v->c[0], y = v->c[1], z = v->c[2], w = v->c[3];
    if (!(w > 0.0)) return 0;
    double fx = ((x / w + 1.0) * (t->width * 0.5)) * 256.0 + 0.5;
    double fy = ((1.0 - y / w) * (t->height * 0.5)) * 256.0 + 0.5;
    /* floor(f) beyond LIMIT rejects any f with |f| >= 2 LIMIT (NaN and infinities too); below that,
     * truncation then a step down for negative fractions is floor, exactly, without a libm call. */
    if (!(fabs(fx) < 2 * LIMIT && fabs(fy) < 2 * LIMIT)) return 0;
    int64_t ix = (int64_t)fx, iy = (int64_t)fy;
    ix -= (double)ix > fx;
    iy -= (double)iy > fy;
    if (ix > (int64_t)LIMIT || ix < -(int64_t)LIMIT || iy > (int64_t)LIMIT || iy < -(int64_t)LIMIT) return 0;
    out->x = ix;
    out->y = iy;
    out->z = (z / w) * 0.5 + 0.5;
    return 1;
}

/* Step 2's colour of a vertex, computed when a triangle it provokes is first drawn (the same value). */
typedef struct {
    const uint8_t *vertices;
    const double *r, *light;
    uint32_t *colors;
    uint8_t *done;
    size_t count;
} Shader;

static uint32_t vertex_color(Shader *sh, uint32_t v) {
    if (sh->done[v]) return sh->colors[v];
    const uint8_t *rec = sh->vertices + (size_t)v * VERTEX_BYTES;
    const double *r = sh->r, *light = sh->light;
    float f[3];
    memcpy(f, rec + 12, sizeof f);
    double nx = f[0], ny = f[1], nz = f[2];
    double rn[3];
    for (int j = 0; j < 3; j++) rn[j] = (r[3 * j] * nx + r[3 * j + 1] * ny) + r[3 * j + 2] * nz;
    double lam = fabs((rn[0] * light[0] + rn[1] * light[1]) + rn[2] * light[2]);
    double s = light[3] + light[4] * lam;
    if (s > 1.0) s = 1.0;
    uint8_t px[4];
    /* floor of a value in [0.5, 255.5]: truncation. */
    for (int i = 0; i < 3; i++) px[i] = (uint8_t)(int)((double)rec[24 + i] * s + 0.5);
    px[3] = rec[27];
    memcpy(&sh->colors[v], px, 4);
    sh->done[v] = 1;
    return sh->colors[v];
}

/* One edge's bound on a line of samples (a row, or a column): the samples k = 0, 1, ... of the line
 * with E - bias >= 0 are those with e + k*s >= 0 (e: E - bias at the line's first sample, s: E's step
 * along the line). With t = |s| and q = floor(e / t): k >= -q where s > 0 (a lower bound), k <= q
 * where s < 0 (an upper bound). From line to line e grows by a fixed step, so q and its remainder
 * r = e - q*t step exactly by a precomputed quotient dq and remainder dr: no division per line. */
typedef struct { int64_t q, r, t, dq, dr; } Edge;

static inline void next_line(Edge *g) { /* branch-free carry */
    int64_t carry = -(int64_t)(g->r + g->dr >= g->t);
    g->q += g->dq - carry;
    g->r += g->dr - (g->t & carry);
}

typedef struct {
    Target *t;
    uint32_t color;
    double z0, a, b;
    int64_t x0, y0, col_lo, row_lo, span; /* corner 0; the box's first column and row; last k of a line */
} Fill;

/* Step 6 and 7 over lines (rows, or columns where by_rows is 0) first..last, each bounded by two lower
 * and two upper edges (one passed twice where the triangle has one: the same bound again changes
 * nothing). A pixel's depth is the same expression either way, (Z0 + a·(P_x−X0)) + b·(P_y−Y0), and
 * each pixel is tested once per triangle, so the order changes no result. Inlined per call site, so
 * that the edges stay in registers. */
static inline __attribute__((always_inline)) void fill_lines(Edge l0, Edge l1, Edge u0, Edge u1, int64_t first,
                                                              int64_t last, const Fill *f, int by_rows) {
    const int64_t width = f->t->width, span = f->span;
    for (int64_t line = first; line <= last; line++) {
        int64_t lo = -l0.q > -l1.q ? -l0.q : -l1.q, hi = u0.q < u1.q ? u0.q : u1.q;
        if (lo < 0) lo = 0;
        if (hi > span) hi = span;
        next_line(&l0);
        next_line(&l1);
        next_line(&u0);
        next_line(&u1);
        if (lo > hi) continue;
        if (by_rows) {
            int64_t row = line;
            double bfy = f->b * (double)(row * ONE + HALF - f->y0);
            float *d = f->t->depth + row * width + f->col_lo;
            Pixel *c = (Pixel *)(f->t->color + (size_t)row * f->t->pitch) + f->col_lo;
            /* P_x - X0 as float64, stepped by 256: exact (integers far below 2^53), the value numpy converts. */
            double fx = (double)(f->col_lo * ONE + HALF + lo * ONE - f->x0);
            int64_t k = lo;
#ifdef __SSE2__
            /* Four samples at a time, lanes past hi masked off: each lane does the scalar operations
             * (float64 depth rounded to float32 as cvtsd2ss does, the same ordered compare), and a
             * masked lane stores back what it read. The four lanes may reach into the next row (or
             * its padding), so each view's last row's last columns take the scalar loop (the lanes
             * could pass the buffers). */
            int64_t vec_last = row < f->t->height - 1 ? hi : width - f->col_lo - 4;
            const __m128d va = _mm_set1_pd(f->a), vz0 = _mm_set1_pd(f->z0), vbfy = _mm_set1_pd(bfy);
            const __m128i vcolor = _mm_set1_epi32((int)f->color), iota = _mm_setr_epi32(0, 1, 2, 3);
            for (; k <= vec_last && k <= hi; k += 4, fx += 4.0 * ONE) {
                __m128d f01 = _mm_setr_pd(fx, fx + (double)ONE), f23 = _mm_setr_pd(fx + 2.0 * ONE, fx + 3.0 * ONE);
                __m128d z01 = _mm_add_pd(_mm_add_pd(vz0, _mm_mul_pd(va, f01)), vbfy);
                __m128d z23 = _mm_add_pd(_mm_add_pd(vz0, _mm_mul_pd(va, f23)), vbfy);
                __m128 z = _mm_movelh_ps(_mm_cvtpd_ps(z01), _mm_cvtpd_ps(z23));
                int64_t left = hi - k + 1;
                __m128i in_span = _mm_cmplt_epi32(iota, _mm_set1_epi32(left > 4 ? 4 : (int)left));
                __m128 old = _mm_loadu_ps(d + k);
                __m128 take = _mm_and_ps(_mm_cmplt_ps(z, old), _mm_castsi128_ps(in_span));
                _mm_storeu_ps(d + k, _mm_or_ps(_mm_and_ps(take, z), _mm_andnot_ps(take, old)));
                __m128i was = _mm_loadu_si128((const __m128i *)(c + k)), mt = _mm_castps_si128(take);
                _mm_storeu_si128((__m128i *)(c + k), _mm_or_si128(_mm_and_si128(mt, vcolor), _mm_andnot_si128(mt, was)));
            }
#endif
            for (; k <= hi; k++, fx += (double)ONE) {
                float z32 = (float)((f->z0 + f->a * fx) + bfy); /* rounded to nearest, as numpy's astype */
                if (z32 < d[k]) {
                    d[k] = z32;
                    c[k] = f->color;
                }
            }
        } else {
            int64_t col = line;
            double zx = f->z0 + f->a * (double)(col * ONE + HALF - f->x0);
            float *d = f->t->depth + (f->row_lo + lo) * width + col;
            uint8_t *c = f->t->color + (size_t)(f->row_lo + lo) * f->t->pitch + (size_t)col * 4;
            double fy = (double)(f->row_lo * ONE + HALF + lo * ONE - f->y0);
            for (int64_t k = lo; k <= hi; k++, fy += (double)ONE, d += width, c += f->t->pitch) {
                float z32 = (float)(zx + f->b * fy);
                if (z32 < *d) {
                    *d = z32;
                    *(Pixel *)c = f->color;
                }
            }
        }
    }
}

/* Steps 5 to 7 for one fan triangle of window corners. */
static void draw(Win v0, Win v1, Win v2, int cull, Shader *sh, uint32_t provoking, Target *t) {
    int64_t area = (v1.x - v0.x) * (v2.y - v0.y) - (v2.x - v0.x) * (v1.y - v0.y);
    if (area == 0 || (cull && area > 0)) return;
    if (area < 0) { Win s = v1; v1 = v2; v2 = s; area = -area; }
    int64_t xmin = v0.x < v1.x ? v0.x : v1.x, xmax = v0.x > v1.x ? v0.x : v1.x;
    int64_t ymin = v0.y < v1.y ? v0.y : v1.y, ymax = v0.y > v1.y ? v0.y : v1.y;
    if (v2.x < xmin) xmin = v2.x;
    if (v2.x > xmax) xmax = v2.x;
    if (v2.y < ymin) ymin = v2.y;
    if (v2.y > ymax) ymax = v2.y;
    int64_t col_lo = floor_div(xmin + HALF - 1, ONE), col_hi = floor_div(xmax - HALF, ONE);
    int64_t row_lo = floor_div(ymin + HALF - 1, ONE), row_hi = floor_div(ymax - HALF, ONE);
    if (col_lo < 0) col_lo = 0;
    if (row_lo < 0) row_lo = 0;
    if (col_hi > t->width - 1) col_hi = t->width - 1;
    if (row_hi > t->height - 1) row_hi = t->height - 1;
    if (col_lo > col_hi || row_lo > row_hi) return;

    /* Edges 1->2, 2->0, 0->1: E = dx*(Py - Ya) - dy*(Px - Xa); covered where E - bias >= 0. E steps by
     * dx*ONE from row to row and by -dy*ONE from column to column. A tall thin triangle (a stud seen
     * from the side, split along its diagonal) crosses many rows with a sample or none in each: it is
     * walked by columns. */
    int by_rows = row_hi - row_lo <= COLUMN_WALK_RATIO * (col_hi - col_lo);
    const Win *ea[3] = {&v1, &v2, &v0}, *eb[3] = {&v2, &v0, &v1};
    int64_t dx[3], dy[3], bias[3], along[3], across[3];
    for (int i = 0; i < 3; i++) {
        dx[i] = eb[i]->x - ea[i]->x;
        dy[i] = eb[i]->y - ea[i]->y;
        bias[i] = (dy[i] < 0 || (dy[i] == 0 && dx[i] > 0)) ? 0 : 1;
        along[i] = by_rows ? -dy[i] * ONE : dx[i] * ONE;  /* step along a line */
        across[i] = by_rows ? dx[i] * ONE : -dy[i] * ONE; /* step from line to line */
    }
    /* An edge with no step along the lines (horizontal when walking rows, vertical for columns; it has
     * one across them, as A != 0) bounds the lines: E - bias at line j is e0 + j*across, so the lines
     * it covers form one range, cut here. */
    int64_t first = by_rows ? row_lo : col_lo, last = by_rows ? row_hi : col_hi;
    for (int i = 0; i < 3; i++) {
        if (along[i] != 0) continue;
        int64_t e0 = dx[i] * (row_lo * ONE + HALF - ea[i]->y) - dy[i] * (col_lo * ONE + HALF - ea[i]->x) - bias[i];
        if (across[i] > 0) {
            if (e0 < 0) first += (-e0 + across[i] - 1) / across[i]; /* the first j with e0 + j*across >= 0 */
        } else {
            if (e0 < 0) return;
            int64_t j = e0 / -across[i]; /* the last j with e0 + j*across >= 0 */
            if (first + j < last) last = first + j;
        }
    }
    if (first > last) return;
    if (by_rows) row_lo = first; else col_lo = first;
    int64_t px0 = col_lo * ONE + HALF, py0 = row_lo * ONE + HALF;
    Edge lower[2], upper[2];
    int nl = 0, nu = 0;
    for (int i = 0; i < 3; i++) {
        if (along[i] == 0) continue;
        Edge *g = along[i] > 0 ? &lower[nl++] : &upper[nu++];
        int64_t e = dx[i] * (py0 - ea[i]->y) - dy[i] * (px0 - ea[i]->x) - bias[i];
        g->t = along[i] > 0 ? along[i] : -along[i];
        g->q = floor_div(e, g->t);
        g->r = e - g->q * g->t;
        g->dq = floor_div(across[i], g->t);
        g->dr = across[i] - g->dq * g->t;
    }
    /* Step 7's plane. */
    double fa = (double)area;
    double z0 = v0.z, z10 = v1.z - v0.z, z20 = v2.z - v0.z;
    double a = (z10 * (double)(v2.y - v0.y) - z20 * (double)(v1.y - v0.y)) / fa;
    double b = (z20 * (double)(v1.x - v0.x) - z10 * (double)(v2.x - v0.x)) / fa;
    Fill f = {t, vertex_color(sh, provoking), z0, a, b, v0.x, v0.y, col_lo, row_lo,
              by_rows ? col_hi - col_lo : row_hi - row_lo};
    /* The sides' edges sum to no step along a line, so each side has one or two. */
    Edge *l1 = &lower[nl - 1], *u1 = &upper[nu - 1];
    if (by_rows)
        fill_lines(lower[0], *l1, upper[0], *u1, first, last, &f, 1);
    else
        fill_lines(lower[0], *l1, upper[0], *u1, first, last, &f, 0);
}

/* Per vertex: clip coordinates, which planes it lies outside (bit 5: a non-finite coordinate), and
 * its window corner where it lies inside all (valid 0 where step 4 rejects it). */
typedef struct {
    Corner clip;
    Win win;
    int outside, valid;
} Vertex;

/* The distinct positions (same 12 bytes) among the vertices: a box's 24 vertices have 8, and the
 * clip and window coordinates of a position depend on its bytes alone, so each is computed once
 * per view. Fills `first` (a vertex of each distinct position) and `of` (each vertex's position);
 * returns how many there are. `table` has `size` (a power of two > nv) slots. */
static Py_ssize_t distinct_positions(const uint8_t *vertices, Py_ssize_t nv, uint32_t *of, uint32_t *first,
                                     int64_t *table, size_t size) {
    Py_ssize_t count = 0;
    for (size_t i = 0; i < size; i++) table[i] = -1;
    for (Py_ssize_t v = 0; v < nv; v++) {
        const uint8_t *p = vertices + v * VERTEX_BYTES;
        uint32_t w[3];
        memcpy(w, p, sizeof w);
        uint64_t h = (w[0] * 0x9E3779B97F4A7C15ull) ^ (w[1] * 0xC2B2AE3D27D4EB4Full)
                     ^ (w[2] * 0x165667B19E3779F9ull);
        size_t slot = (size_t)(h ^ (h >> 29)) & (size - 1);
        while (table[slot] >= 0 && memcmp(vertices + first[table[slot]] * (size_t)VERTEX_BYTES, p, 12) != 0)
            slot = (slot + 1) & (size - 1);
        if (table[slot] < 0) {
            table[slot] = count;
            first[count++] = (uint32_t)v;
        }
        of[v] = (uint32_t)table[slot];
    }
    return count;
}

static void render_view(const uint8_t *vertices, const uint32_t *of, const uint32_t *first, Py_ssize_t nu,
                        const uint32_t *indices, Py_ssize_t ni, Py_ssize_t closed, const double *m,
                        const double *r, const double *light, Vertex *vx, Shader *sh, Target *t) {
    double guard = GUARD_PX / (double)(t->width > t->height ? t->width : t->height);
    for (Py_ssize_t u = 0; u < nu; u++) {
        float f[3];
        memcpy(f, vertices + first[u] * (size_t)VERTEX_BYTES, sizeof f);
        double x = f[0], y = f[1], z = f[2];
        Vertex *o = &vx[u];
        int finite = 1;
        for (int i = 0; i < 4; i++) {
            o->clip.c[i] = ((m[4 * i] * x + m[4 * i + 1] * y) + m[4 * i + 2] * z) + m[4 * i + 3];
            finite &= isfinite(o->clip.c[i]) != 0;
        }
        o->outside = finite ? 0 : 32;
        if (finite)
            for (int p = 0; p < 5; p++)
                if (!(plane_distance(&o->clip, p, guard) >= 0.0)) o->outside |= 1 << p;
        o->valid = o->outside == 0 && to_window(&o->clip, t, &o->win);
    }
    sh->r = r;
    sh->light = light;
    memset(sh->done, 0, (size_t)sh->count);
    for (Py_ssize_t k = 0; k + 2 < ni; k += 3) {
        const Vertex *a = &vx[of[indices[k]]], *b = &vx[of[indices[k + 1]]], *c = &vx[of[indices[k + 2]]];
        int any = a->outside | b->outside | c->outside;
        if (!any) {
            if (a->valid && b->valid && c->valid) draw(a->win, b->win, c->win, k < closed, sh, indices[k + 2], t);
            continue;
        }
        /* Not finite, or all corners outside one plane: nothing drawn (step 3). */
        if (any & 32 || a->outside & b->outside & c->outside) continue;
        Corner poly[MAX_POLY + 2] = {a->clip, b->clip, c->clip};
        int n = clip_polygon(poly, 3, guard);
        Win w[MAX_POLY + 2];
        int ok[MAX_POLY + 2];
        for (int j = 0; j < n; j++) ok[j] = to_window(&poly[j], t, &w[j]);
        for (int j = 1; j + 1 < n; j++)
            if (ok[0] && ok[j] && ok[j + 1]) draw(w[0], w[j], w[j + 1], k < closed, sh, indices[k + 2], t);
    }
}

/* The per-call buffers (per-vertex records, the position table, the depth buffer). Kept from call to
 * call: freed and allocated afresh, glibc hands back megabytes of new pages each time (an mmap, or the
 * heap trimmed in between by Python's own frees), and faulting them in (~1,000 pages for a house's two
 * scenes) cost a third as much as drawing the scenes. Only touched with the GIL held: a call takes the
 * cached one (or makes its own while another thread's call holds it) and gives it back when done. */
typedef struct {
    size_t count, size, pixels; /* capacities: vertices, table slots, depth pixels */
    Vertex *vx;
    uint32_t *colors, *of, *first;
    uint8_t *done;
    int64_t *table;
    float *depth;
} Workspace;

/* Bytes above which a workspace is not kept between calls (it would hold that much memory). */
#define KEEP_BYTES ((size_t)64 << 20)
static Workspace *cached_workspace = NULL;

static size_t workspace_bytes(const Workspace *w) {
    return w->count * (sizeof(Vertex) + 3 * sizeof(uint32_t) + 1) + w->size * sizeof(int64_t)
           + w->pixels * sizeof(float);
}

static void free_workspace(Workspace *w) {
    if (!w) return;
    free(w->vx); free(w->colors); free(w->of); free(w->first); free(w->done); free(w->table); free(w->depth);
    free(w);
}

/* A workspace with room for count vertices, size table slots and pixels depth values (NULL: no memory). */
static Workspace *take_workspace(size_t count, size_t size, size_t pixels) {
    Workspace *w = cached_workspace;
    cached_workspace = NULL;
    if (!w && !(w = calloc(1, sizeof(Workspace)))) return NULL;
    if (w->count < count) {
        free(w->vx); free(w->colors); free(w->of); free(w->first); free(w->done);
        w->vx = malloc(sizeof(Vertex) * count);
        w->colors = malloc(sizeof(uint32_t) * count);
        w->of = malloc(sizeof(uint32_t) * count);
        w->first = malloc(sizeof(uint32_t) * count);
        w->done = malloc(count);
        w->count = count;
    }
    if (w->size < size) {
        free(w->table);
        w->table = malloc(sizeof(int64_t) * size);
        w->size = size;
    }
    if (w->pixels < pixels) {
        free(w->depth);
        w->depth = malloc(sizeof(float) * pixels);
        w->pixels = pixels;
    }
    if (!w->vx || !w->colors || !w->of || !w->first || !w->done || !w->table || !w->depth) {
        free_workspace(w);
        return NULL;
    }
    return w;
}

static void give_back_workspace(Workspace *w) {
    if (!cached_workspace && workspace_bytes(w) <= KEEP_BYTES) cached_workspace = w;
    else free_workspace(w);
}

static PyObject *py_render(PyObject *self, PyObject *args) {
    Py_buffer vb = {0}, ib = {0}, mb = {0}, rb = {0}, ob = {0};
    Py_ssize_t closed;
    double light[5];
    int width, height;
    Py_ssize_t pitch;
    PyObject *result = NULL;
    if (!PyArg_ParseTuple(args, "y*y*ny*y*(ddddd)iiw*n", &vb, &ib, &closed, &mb, &rb, &light[0], &light[1],
                          &light[2], &light[3], &light[4], &width, &height, &ob, &pitch))
        return NULL;
    Py_ssize_t nv = vb.len / VERTEX_BYTES, ni = ib.len / 4, views = mb.len / (16 * (Py_ssize_t)sizeof(double));
    if (vb.len % VERTEX_BYTES || ib.len % 12 || width <= 0 || height <= 0 || nv > (Py_ssize_t)UINT32_MAX ||
        rb.len != views * 9 * (Py_ssize_t)sizeof(double) || pitch < 4 * (Py_ssize_t)width || views < 1 ||
        ob.len != (views * (Py_ssize_t)height - 1) * pitch + 4 * (Py_ssize_t)width) {
        PyErr_SetString(PyExc_ValueError, "_raster.render: buffer sizes do not match");
        goto done;
    }
    const uint32_t *indices = ib.buf;
    for (Py_ssize_t k = 0; k < ni; k++)
        if (indices[k] >= (uint64_t)nv) {
            PyErr_SetString(PyExc_ValueError, "_raster.render: an index is out of range");
            goto done;
        }
    size_t pixels = (size_t)width * (size_t)height;
    size_t count = (size_t)(nv ? nv : 1), size = 2;
    while (size <= 2 * count) size *= 2;
    Workspace *w = take_workspace(count, size, pixels);
    if (!w) {
        PyErr_NoMemory();
        goto done;
    }
    Shader sh = {vb.buf, NULL, NULL, w->colors, w->done, count};
    Py_BEGIN_ALLOW_THREADS
    Py_ssize_t nu = distinct_positions(vb.buf, nv, w->of, w->first, w->table, size);
    for (Py_ssize_t v = 0; v < views; v++) {
        Target t = {width, height, (size_t)pitch, w->depth, (uint8_t *)ob.buf + (size_t)v * (size_t)height * (size_t)pitch};
        for (size_t p = 0; p < pixels; p++) w->depth[p] = 1.0f;
        render_view(vb.buf, w->of, w->first, nu, indices, ni, closed, (const double *)mb.buf + 16 * v,
                    (const double *)rb.buf + 9 * v, light, w->vx, &sh, &t);
    }
    Py_END_ALLOW_THREADS
    give_back_workspace(w);
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&vb); PyBuffer_Release(&ib); PyBuffer_Release(&mb); PyBuffer_Release(&rb);
    PyBuffer_Release(&ob);
    return result;
}

static PyMethodDef methods[] = {
    {"render", py_render, METH_VARARGS, "Rasterize a scene's views into a uint8 buffer (see raster.py)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_raster", "buildbench's deterministic rasterizer.", -1,
                                    methods};

PyMODINIT_FUNC PyInit__raster(void) {
    PyObject *mod = PyModule_Create(&module);
    /* ROW_PITCH: render() takes the pitch of out's rows (raster.py refuses a build without it). */
    if (mod && (PyModule_AddIntConstant(mod, "PIXEL_VERSION", PIXEL_VERSION) < 0
                || PyModule_AddIntConstant(mod, "ROW_PITCH", 1) < 0)) {
        Py_DECREF(mod);
        return NULL;
    }
    return mod;
}
