/* The exact weld analysis and its schedule for the C tick loop: see ``_welds.h``. */
#include "_welds.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* numpy's pairwise summation of a contiguous float64 array (without the sum's initial zero). */
double pairwise(const double* a, long n) {
    if (n < 8) {
        double res = 0.0;
        for (long i = 0; i < n; i++) res += a[i];
        return res;
    }
    if (n <= 128) {
        double r[8];
        long i;
        for (int j = 0; j < 8; j++) r[j] = a[j];
        for (i = 8; i < n - (n % 8); i += 8) {
            for (int j = 0; j < 8; j++) r[j] += a[i + j];
        }
        double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++) res += a[i];
        return res;
    }
    long n2 = n / 2;
    n2 -= n2 % 8;
    return pairwise(a, n2) + pairwise(a + n2, n - n2);
}

/* ``pairwise`` of every ``stride``-th value (numpy's for a strided operand: the same grouping). */
static double pairwise_strided(const double* a, long n, long stride) {
    if (n < 8) {
        double res = 0.0;
        for (long i = 0; i < n; i++) res += a[i * stride];
        return res;
    }
    if (n <= 128) {
        double r[8];
        long i;
        for (int j = 0; j < 8; j++) r[j] = a[j * stride];
        for (i = 8; i < n - (n % 8); i += 8) {
            for (int j = 0; j < 8; j++) r[j] += a[(i + j) * stride];
        }
        double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++) res += a[i * stride];
        return res;
    }
    long n2 = n / 2;
    n2 -= n2 % 8;
    return pairwise_strided(a, n2, stride) + pairwise_strided(a + n2 * stride, n - n2, stride);
}

/* ``pairwise`` of the products ``a[i]·b[i]``, each rounded before it is added (no fused multiply-add). */
static double pairwise_dot(const double* a, const double* b, long n) {
    if (n < 8) {
        double res = 0.0;
        for (long i = 0; i < n; i++) res += a[i] * b[i];
        return res;
    }
    if (n <= 128) {
        double r[8];
        long i;
        for (int j = 0; j < 8; j++) r[j] = a[j] * b[j];
        for (i = 8; i < n - (n % 8); i += 8) {
            for (int j = 0; j < 8; j++) r[j] += a[i + j] * b[i + j];
        }
        double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++) res += a[i] * b[i];
        return res;
    }
    long n2 = n / 2;
    n2 -= n2 % 8;
    return pairwise_dot(a, b, n2) + pairwise_dot(a + n2, b + n2, n - n2);
}

/* One segment of numpy's ``add.reduceat``: its first value, plus the others' pairwise sum where there are any. */
static double segment(const double* a, long n) { return n > 1 ? a[0] + pairwise(a + 1, n - 1) : a[0]; }

static long max_long(long a, long b) { return a > b ? a : b; }

/* Numbers of scratch ``net_loads`` needs: the nodes' and rows' wrenches, a right side, the products of a sum. */
size_t net_scratch(const Net* net) {
    long longest = 6 * net->entries, size = 0;
    for (long p = 0; p < net->parts; p++) {
        const long long* part = net->parts_table + p * PART_FIELDS;
        size = max_long(size, (long)part[PART_SIZE]);
        longest = max_long(longest, max_long((long)part[PART_W_ENTRIES], (long)part[PART_G_ENTRIES]));
    }
    /* ... and the loads pushing nodes beside their welds: (node, six numbers) per cannon and rope end. */
    return (size_t)(6 * net->nodes + 6 * net->rows + size + max_long(longest, size) + 7 * (net->cannons + net->rope_ends) + 1);
}

/* ``welds.turned``: 3-vector rows times their group's rotation, ``(v0·R0 + v1·R1) + v2·R2``. */
static void turned(const Net* net, const double* world, const double* turns, double* out) {
    long n = 0;
    for (long g = 0; g < net->groups; g++) {
        const double* turn = turns + 9 * g;
        for (; n < net->span_stops[g]; n++) {
            for (int half = 0; half < 2; half++) {
                const double* v = world + 6 * n + 3 * half;
                double* o = out + 6 * n + 3 * half;
                for (int j = 0; j < 3; j++) o[j] = v[0] * turn[j] + v[1] * turn[3 + j] + v[2] * turn[6 + j];
            }
        }
    }
}

/* ``stress.cross`` of one row: ``a[next]·f[last] − a[last]·f[next]``. */
static void cross(const double* a, const double* f, double* out) {
    static const int next[3] = {1, 2, 0}, last[3] = {2, 0, 1};
    for (int i = 0; i < 3; i++) out[i] = a[next[i]] * f[last[i]] - a[last[i]] * f[next[i]];
}

/* ``RowSums.sums`` of one part's matrix times ``x``: set into ``out[rows[i]]``, or subtracted from it. */
static void row_sums(const long long* rows, const long long* starts, const long long* columns, const double* values,
                     long count, long entries, const double* x, double* out, int subtract, double* tmp) {
    for (long i = 0; i < count; i++) {
        long s = (long)starts[i], e = i + 1 < count ? (long)starts[i + 1] : entries;
        for (long k = s; k < e; k++) tmp[k - s] = values[k] * x[columns[k]];
        double v = segment(tmp, e - s);
        out[rows[i]] = subtract ? out[rows[i]] - v : v;
    }
}

/* ``welds._magnitudes(_own(...))``: force (N) and torque (N·m) magnitudes per row into ``mag`` (rows × 2). */
void net_loads(const Net* net, const double* world, const double* turns, const double* thrust, long ropes,
               const long long* rope_nodes, const double* rope_loads, double* mag, double* scratch) {
    double* own = scratch;
    double* out = own + 6 * net->nodes;
    double* right = out + 6 * net->rows;
    double* pushed_loads = scratch + net_scratch(net) - 1 - 7 * (net->cannons + net->rope_ends);
    double* pushed_nodes = pushed_loads + 6 * (net->cannons + net->rope_ends);
    turned(net, world, turns, own);
    /* ``welds._own``: the cannons' loads (force, no torque) where any thrusts, then each rope end's added. */
    long count = 0;
    int thrusting = 0;
    for (long c = 0; c < net->cannons; c++) thrusting |= thrust[c] != 0.0; /* numpy's ``any``: NaN counts */
    if (thrusting) {
        for (long c = 0; c < net->cannons; c++, count++) {
            pushed_nodes[count] = (double)net->cannon_nodes[c];
            for (int i = 0; i < 3; i++) {
                pushed_loads[6 * count + i] = thrust[c] * net->cannon_axes[3 * c + i];
                pushed_loads[6 * count + 3 + i] = 0.0;
            }
        }
    }
    for (long j = 0; j < ropes; j++) {
        long k = 0;
        while (k < count && pushed_nodes[k] != (double)rope_nodes[j]) k++;
        if (k == count) { /* a new node: ``extra.get(node, 0.0) + rope`` */
            pushed_nodes[count++] = (double)rope_nodes[j];
            for (int i = 0; i < 6; i++) pushed_loads[6 * k + i] = 0.0 + rope_loads[6 * j + i];
        } else {
            for (int i = 0; i < 6; i++) pushed_loads[6 * k + i] = pushed_loads[6 * k + i] + rope_loads[6 * j + i];
        }
    }
    /* ``WeldNetwork.own``: each load's force, and its torque about the origin (arm × force, then its own). */
    for (long k = 0; k < count; k++) {
        long node = (long)pushed_nodes[k];
        const double* load = pushed_loads + 6 * k;
        double torque[3];
        cross(net->arms + 3 * node, load, torque);
        for (int i = 0; i < 3; i++) {
            own[6 * node + i] = own[6 * node + i] - (torque[i] + load[3 + i]);
            own[6 * node + 3 + i] = own[6 * node + 3 + i] - load[i];
        }
    }
    double* rows = right; /* the subtrees' nodes, gathered: before any right side */
    for (long e = 0; e < net->tree; e++) {
        long s = (long)net->subtree_starts[e], end = e + 1 < net->tree ? (long)net->subtree_starts[e + 1] : net->entries;
        double sub[6], lever[3];
        for (long q = s; q < end; q++) memcpy(rows + 6 * (q - s), own + 6 * net->subtree_nodes[q], 6 * sizeof(double));
        /* ``add.reduceat`` down each column: the first node's value plus the others' pairwise sum. */
        for (int col = 0; col < 6; col++)
            sub[col] = end - s > 1 ? rows[col] + pairwise_strided(rows + 6 + col, end - s - 1, 6) : rows[col];
        /* A subtree's wrench (torque about the origin, force) moved to its weld's anchor, signed. */
        double sign = net->signs[e];
        cross(net->levers + 3 * e, sub + 3, lever);
        for (int i = 0; i < 3; i++) {
            out[6 * e + i] = sub[3 + i] * sign;
            out[6 * e + 3 + i] = (sub[i] + lever[i]) * sign;
        }
    }
    for (long p = 0; p < net->parts; p++) {
        const long long* part = net->parts_table + p * PART_FIELDS;
        long size = (long)part[PART_SIZE];
        double* flat = out + 6 * part[PART_TREE];
        double* loops = out + 6 * part[PART_ROWS];
        double* products = right + size;
        memset(right, 0, size * sizeof(double));
        row_sums(net->w_rows + part[PART_W_ROW], net->w_starts + part[PART_W_ROW], net->w_columns + part[PART_W_ENTRY],
                 net->w_values + part[PART_W_ENTRY], (long)part[PART_W_COUNT], (long)part[PART_W_ENTRIES], flat, right,
                 0, products);
        const double* inverse = net->inverses + part[PART_INVERSE];
        for (long i = 0; i < size; i++) loops[i] = 0.0 + pairwise_dot(inverse + i * size, right, size);
        row_sums(net->g_rows + part[PART_G_ROW], net->g_starts + part[PART_G_ROW], net->g_columns + part[PART_G_ENTRY],
                 net->g_values + part[PART_G_ENTRY], (long)part[PART_G_COUNT], (long)part[PART_G_ENTRIES], loops, flat,
                 1, products);
    }
    for (long row = 0; row < 2 * net->rows; row++) {
        const double* v = out + 3 * row;
        double x = v[0] * v[0], y = v[1] * v[1], z = v[2] * v[2];
        mag[row] = sqrt((x + z) + y);
    }
}

int welds_alloc(Welds* w) {
    const Net* net = &w->net;
    size_t inputs = (size_t)(6 * net->nodes + 9 * net->groups + net->cannons + 1);
    w->cur = malloc(inputs * sizeof(double));
    w->cur_rope_nodes = malloc((size_t)(net->rope_ends + 1) * sizeof(long long));
    w->cur_rope_loads = malloc((size_t)(6 * net->rope_ends + 1) * sizeof(double));
    w->cur_ropes = 0;
    w->mag = malloc((size_t)(2 * net->rows + 1) * sizeof(double));
    w->mag2 = malloc((size_t)(2 * net->rows + 1) * sizeof(double));
    w->scratch = malloc(net_scratch(net) * sizeof(double));
    return w->cur && w->cur_rope_nodes && w->cur_rope_loads && w->mag && w->mag2 && w->scratch ? 0 : -1;
}

void welds_free(Welds* w) {
    free(w->cur);
    free(w->cur_rope_nodes);
    free(w->cur_rope_loads);
    free(w->mag);
    free(w->mag2);
    free(w->scratch);
    w->cur = w->cur_rope_loads = w->mag = w->mag2 = w->scratch = NULL;
    w->cur_rope_nodes = NULL;
}

/* numpy's ``max(a / b, initial=0.0)`` (NaN wins). */
static double ratio_max(const double* a, const double* b, long n) {
    double best = 0.0;
    for (long i = 0; i < n && !isnan(best); i++) {
        double v = a[i] / b[i];
        if (isnan(v) || v > best) best = v;
    }
    return best;
}

#define WORLD(w, inputs) (inputs)
#define TURNS(w, inputs) ((inputs) + 6 * (w)->net.nodes)
#define THRUST(w, inputs) ((inputs) + 6 * (w)->net.nodes + 9 * (w)->net.groups)

static void loads(Welds* w, const double* inputs, double* mag) {
    net_loads(&w->net, WORLD(w, inputs), TURNS(w, inputs), THRUST(w, inputs), w->cur_ropes, w->cur_rope_nodes,
              w->cur_rope_loads, mag, w->scratch);
}

/* ``_WeldResponse._rope_share``: what the rope loads can add to a weld's load, as a share of its limit. */
static double rope_share(const Welds* w, long ropes, const long long* nodes, const double* loads) {
    double share = 0.0;
    for (long j = 0; j < ropes; j++) {
        const double* f = loads + 6 * j;
        double pull = sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
        double twist = sqrt(f[3] * f[3] + f[4] * f[4] + f[5] * f[5]);
        share += w->per_force * pull + w->per_torque * (w->reach[nodes[j]] * pull + twist);
    }
    return share;
}

/* ``_WeldResponse._change``: the largest share of its limit by which a weld's load can differ from the
 * reference's (each node's torque and force in its group's frame less the reference's, weighted norms). */
static double change(Welds* w, const WeldRegs* r, const double* inputs) {
    const Net* net = &w->net;
    double* rows = w->scratch;
    turned(net, WORLD(w, inputs), TURNS(w, inputs), rows);
    double share = 0.0;
    for (long row = 0; row < 2 * net->nodes; row++) {
        double sq = 0.0;
        for (int j = 0; j < 3; j++) {
            double x = rows[3 * row + j] - w->reference[3 * row + j];
            sq += x * x;
        }
        share += sqrt(sq) * w->weights[row];
    }
    const double* thrust = THRUST(w, inputs);
    for (long c = 0; c < net->cannons; c++)
        share += fabs(thrust[c] - w->reference_thrust[c]) * w->weights[2 * net->nodes + c];
    return share + r->reference_ropes + rope_share(w, w->cur_ropes, w->cur_rope_nodes, w->cur_rope_loads);
}

/* ``_WeldResponse._refer``: the tick of ``inputs`` (loads ``mag``) becomes the reference. */
static void refer(Welds* w, WeldRegs* r, const double* inputs, const double* mag) {
    r->reference_worst = ratio_max(mag, w->limits, 2 * w->net.rows);
    turned(&w->net, WORLD(w, inputs), TURNS(w, inputs), w->reference);
    memcpy(w->reference_thrust, THRUST(w, inputs), w->net.cannons * sizeof(double));
    r->reference_ropes = rope_share(w, w->cur_ropes, w->cur_rope_nodes, w->cur_rope_loads);
}

/* ``_WeldResponse._follow_load``: ``state += gain·(loads − state)``; ``mag`` is used up. */
static void follow(Welds* w, double* mag) {
    for (long i = 0; i < 2 * w->net.rows; i++) {
        mag[i] = mag[i] - w->state[i];
        mag[i] = mag[i] * w->gain;
        w->state[i] = w->state[i] + mag[i];
    }
}

/* ``_WeldResponse._catch_up``: the exact analysis of the ticks put off, in order. */
static void catch_up(Welds* w, WeldRegs* r) {
    const Net* net = &w->net;
    for (long q = 0; q < r->npend; q++) {
        const long long* nodes = w->pend_rope_nodes + q * net->rope_ends;
        long ropes = 0;
        while (ropes < net->rope_ends && nodes[ropes] >= 0) ropes++;
        net_loads(net, w->pend_world + q * 6 * net->nodes, w->pend_turns + q * 9 * net->groups,
                  w->pend_thrust + q * net->cannons, ropes, nodes, w->pend_rope_loads + q * 6 * net->rope_ends,
                  w->mag2, w->scratch);
        follow(w, w->mag2);
    }
    r->npend = 0;
}

/* ``_WeldResponse.snapped`` of the tick whose inputs are in ``w->cur``: 1 where every weld holds, 0 where
 * one is over its limit (NaN counts as over; Python breaks them). */
int welds_tick(Welds* w, WeldRegs* r) {
    const double* inputs = w->cur;
    int restart = 0, have = 0;
    if (r->wait) { /* the bound failed lately: the exact analysis as it comes */
        r->wait -= 1;
        restart = r->wait == 0;
    } else {
        double gain = w->gain, decay = r->decay * (1.0 - gain);
        double level = r->level + gain * (r->reference_worst - r->level);
        double lag = r->lag + gain * (change(w, r, inputs) - r->lag);
        double history = decay * r->worst + level;
        if (!(history + lag <= w->margin) && history <= w->refer_below && 2 * r->refers <= r->skipped) {
            /* Measured from this very tick, only the loads' history can still fail the bound. */
            loads(w, inputs, w->mag);
            have = 1;
            refer(w, r, inputs, w->mag);
            r->refers += 1;
            level = r->level + gain * (r->reference_worst - r->level);
            lag = r->lag + gain * (change(w, r, inputs) - r->lag);
        }
        if (decay * r->worst + level + lag <= w->margin && r->npend < w->room) {
            const Net* net = &w->net;
            memcpy(w->pend_world + r->npend * 6 * net->nodes, WORLD(w, inputs), 6 * net->nodes * sizeof(double));
            memcpy(w->pend_turns + r->npend * 9 * net->groups, TURNS(w, inputs), 9 * net->groups * sizeof(double));
            memcpy(w->pend_thrust + r->npend * net->cannons, THRUST(w, inputs), net->cannons * sizeof(double));
            long long* nodes = w->pend_rope_nodes + r->npend * net->rope_ends;
            for (long j = 0; j < net->rope_ends; j++) nodes[j] = j < w->cur_ropes ? w->cur_rope_nodes[j] : -1;
            memcpy(w->pend_rope_loads + r->npend * 6 * net->rope_ends, w->cur_rope_loads,
                   6 * w->cur_ropes * sizeof(double));
            r->npend += 1;
            r->decay = decay;
            r->level = level;
            r->lag = lag;
            r->skipped += 1;
            return 1;
        }
        catch_up(w, r);
        /* Back off: a bound that failed after few skipped ticks is not tried for twice as long as before. */
        r->backoff = r->skipped >= w->backoff_max ? 1 : (2 * r->backoff < w->backoff_max ? 2 * r->backoff : w->backoff_max);
        r->wait = r->backoff;
        r->skipped = 0;
        r->refers = 0;
    }
    if (!have) loads(w, inputs, w->mag);
    if (restart) { /* the reference's loads, before the lag uses them up */
        memcpy(w->mag2, w->mag, 2 * w->net.rows * sizeof(double));
        follow(w, w->mag2);
        r->worst = ratio_max(w->state, w->limits, 2 * w->net.rows);
        r->decay = 1.0;
        r->level = 0.0;
        r->lag = 0.0;
        refer(w, r, inputs, w->mag);
    } else {
        follow(w, w->mag);
    }
    for (long i = 0; i < 2 * w->net.rows; i++) {
        if (!(w->state[i] <= w->limits[i])) return 0;
    }
    return 1;
}
