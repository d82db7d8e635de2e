/* The exact weld analysis of a tick and its schedule, for the C tick loop (``_tick.c``).
 *
 * ``net_loads`` is ``welds._magnitudes(_own(...))`` (``stress.WeldNetwork.weld_wrenches``) and ``welds_tick``
 * is ``welds._WeldResponse.snapped``; ``_tick.c`` gathers a tick's inputs (``welds._inputs``, rope loads too). The loads and the lagged state are bit for bit
 * numpy's: every sum is taken as numpy takes it (``add.reduceat``: the first value plus the pairwise sum of the
 * others; ``sum``: zero plus the pairwise sum), every product in numpy's order, no fused multiply-adds (the
 * build's ``-ffp-contract=off``). The bound that puts the analysis off may round differently from numpy's: it
 * decides only when the exact analysis runs, never what it gives (``welds``).
 */
#ifndef BUILDBENCH_WELDS_H
#define BUILDBENCH_WELDS_H

#include <stddef.h>

/* Per loop part, the fields of ``Net.parts`` (``native.py`` writes them). */
enum {
    PART_TREE,      /* its first tree row */
    PART_ROWS,      /* its first loop row */
    PART_SIZE,      /* six times its loop welds */
    PART_W_ROW,     /* where its right side's rows, starts begin in ``w_rows``, ``w_starts`` */
    PART_W_COUNT,   /* how many */
    PART_W_ENTRY,   /* where its entries begin in ``w_columns``, ``w_values`` */
    PART_W_ENTRIES, /* how many */
    PART_G_ROW,
    PART_G_COUNT,
    PART_G_ENTRY,
    PART_G_ENTRIES,
    PART_INVERSE, /* where its inverse (SIZE × SIZE) begins in ``inverses`` */
    PART_FIELDS
};

/* A stacked ``stress.WeldNetwork`` with its ``groups.WeldAnalysis`` (nodes per group, cannons). */
typedef struct {
    long nodes, groups, cannons, tree, rows, parts, entries, rope_ends;
    const long long *span_stops, *subtree_nodes, *subtree_starts, *cannon_nodes, *parts_table;
    const long long *w_rows, *w_starts, *w_columns, *g_rows, *g_starts, *g_columns;
    const double *signs, *levers, *arms, *cannon_axes, *inverses, *w_values, *g_values;
} Net;

/* ``_WeldResponse``'s numbers that change from tick to tick. */
typedef struct {
    double decay, level, lag, worst, reference_worst, reference_ropes;
    long skipped, npend, wait, refers, backoff;
} WeldRegs;

/* ``_WeldResponse`` of one analysis: its arrays (numpy's, shared), its constants and scratch. */
typedef struct {
    Net net;
    double *state, *limits, *reference, *reference_thrust, *weights;
    double *pend_world, *pend_turns, *pend_thrust, *pend_rope_loads, *reach;
    long long* pend_rope_nodes;
    long room, backoff_max;
    double gain, margin, refer_below, per_force, per_torque;
    /* The tick's inputs (world wrenches, root rotations, thrusts; its rope-end nodes' loads, ``cur_ropes`` of
     * them), its loads, another tick's, and the sums'. */
    double *cur, *cur_rope_loads, *mag, *mag2, *scratch;
    long long* cur_rope_nodes;
    long cur_ropes;
} Welds;

double pairwise(const double* a, long n);
size_t net_scratch(const Net* net);
void net_loads(const Net* net, const double* world, const double* turns, const double* thrust, long ropes,
               const long long* rope_nodes, const double* rope_loads, double* mag, double* scratch);
int welds_alloc(Welds* w);
void welds_free(Welds* w);
int welds_tick(Welds* w, WeldRegs* r);

#endif
