/* Consecutive control ticks of ``simulation.Simulation`` in C (``native.py`` loads and drives it).
 *
 * A Kernel runs ticks exactly as ``Simulation._advance`` does, for as long as nothing needs Python,
 * and stops where Python must decide (see ``run``): before a tick with a due key event, its last tick
 * or the cargo below the stop height; after a step whose divergence test is not clearly passed or
 * whose energy test is due; after the weld analysis (``_welds.c``) when a weld is over its limit
 * (Python breaks it). Every sum and product keeps the operation order of the numpy code it
 * replaces, and the build forbids contraction into fused multiply-adds, so that the trajectory is
 * bit for bit the Python loop's. MuJoCo's functions come as addresses from the library the
 * ``mujoco`` package loaded; the headers only give the structs' layout.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include <mujoco/mujoco.h>

#include "_welds.h"

/* The arrays, numbers and registers ``native`` hands over, as this source takes them: ``native.LAYOUT`` must
 * match, so that a build from other sources runs the Python loop rather than misread them. */
#define LAYOUT 6

typedef void (*step_fn)(const mjModel*, mjData*);
typedef mjtNum (*distance_fn)(const mjModel*, mjData*, int, int, mjtNum, mjtNum*);
typedef mjtNum (*norm_fn)(const mjtNum*, int);
typedef void (*mulm_fn)(const mjModel*, const mjData*, mjtNum*, const mjtNum*);

enum { STOP_BEFORE = 0, STOP_STEPPED = 1, STOP_CHECKED = 2, STOP_DONE = 3 };

#define N_BUFS 53
static const char* BUF_NAMES[N_BUFS] = {
    "drag_dofs", "drag", "log_bodies", "positions", "burning", "masses", "cannons", "heat_pairs",
    "cannon_on", "hot", "hot_set", "inertia0", "invweight0", "dof_invweight0", "drag_rows", "drag0",
    "nodes", "roots", "span_stops", "cannon_acts", "weights", "reference", "reference_thrust",
    "pending_world", "pending_turns", "pending_thrust", "state", "limits", "subtree_nodes", "subtree_starts",
    "signs", "levers", "arms", "cannon_nodes", "cannon_axes", "parts", "inverses", "w_rows", "w_starts",
    "w_columns", "w_values", "g_rows", "g_starts", "g_columns", "g_values", "rope_tendons", "rope_sites",
    "rope_bodies", "rope_nodes", "reach", "pending_rope_nodes", "pending_rope_loads", "bodies"};
enum {
    B_DRAG_DOFS, B_DRAG, B_LOG_BODIES, B_POSITIONS, B_BURNING, B_MASSES, B_CANNONS, B_HEAT_PAIRS,
    B_CANNON_ON, B_HOT, B_HOT_SET, B_INERTIA0, B_INVWEIGHT0, B_DOF_INVWEIGHT0, B_DRAG_ROWS, B_DRAG0,
    B_NODES, B_ROOTS, B_SPAN_STOPS, B_CANNON_ACTS, B_WEIGHTS, B_REFERENCE, B_REFERENCE_THRUST,
    B_PEND_WORLD, B_PEND_TURNS, B_PEND_THRUST, B_STATE, B_LIMITS, B_SUBTREE_NODES, B_SUBTREE_STARTS,
    B_SIGNS, B_LEVERS, B_ARMS, B_CANNON_NODES, B_CANNON_AXES, B_PARTS, B_INVERSES, B_W_ROWS, B_W_STARTS,
    B_W_COLUMNS, B_W_VALUES, B_G_ROWS, B_G_STARTS, B_G_COLUMNS, B_G_VALUES, B_ROPE_TENDONS, B_ROPE_SITES,
    B_ROPE_BODIES, B_ROPE_NODES, B_REACH, B_PEND_ROPE_NODES, B_PEND_ROPE_LOADS, B_BODIES};
/* Element sizes: int64 index arrays, bool flags, float64 numbers. */
static const char BUF_KIND[N_BUFS] = {
    'q', 'd', 'q', 'd', '?', 'd', 'q', 'q', 'd', '?', '?', 'd', 'd', 'd', 'q', 'd',
    'q', 'q', 'q', 'q', 'd', 'd', 'd', 'd', 'd', 'd', 'd', 'd', 'q', 'q',
    'd', 'd', 'd', 'q', 'd', 'q', 'd', 'q', 'q', 'q', 'd', 'q', 'q', 'q', 'd', 'q', 'q',
    'q', 'q', 'd', 'q', 'd', 'd'};

#define N_NUMS 31
static const char* NUM_NAMES[N_NUMS] = {
    "steps", "tick_s", "log_every", "n_ticks", "thrust", "steam", "cargo_body", "cap", "gravity",
    "mass0", "mass_start", "mass_max", "ramp_s", "delay_s", "floor", "dof_start", "stop_z",
    "max_speed", "quiet", "check_ticks", "welds", "gain", "room", "max_penetration", "energy_jump",
    "energy_growth", "margin", "refer_below", "backoff_max", "per_force", "per_torque"};
enum {
    N_STEPS, N_TICK_S, N_LOG_EVERY, N_N_TICKS, N_THRUST, N_STEAM, N_CARGO_BODY, N_CAP, N_GRAVITY,
    N_MASS0, N_MASS_START, N_MASS_MAX, N_RAMP_S, N_DELAY_S, N_FLOOR, N_DOF_START, N_STOP_Z,
    N_MAX_SPEED, N_QUIET, N_CHECK_TICKS, N_WELDS, N_GAIN, N_ROOM, N_MAX_PENETRATION, N_ENERGY_JUMP,
    N_ENERGY_GROWTH, N_MARGIN, N_REFER_BELOW, N_BACKOFF_MAX, N_PER_FORCE, N_PER_TORQUE};

/* The run's changing scalars, in and out of ``run`` in this order. */
typedef struct {
    long tick;
    double next_event;
    int firing, dirty;
    double applied, body_mass, mass;
    long logged, watch_ticks;
    double energy;
    WeldRegs welds;
} Regs;

typedef struct {
    PyObject_HEAD
    step_fn step, rne;
    distance_fn distance;
    norm_fn norm;
    mulm_fn mulm;
    void (**user_error)(const char*); /* MuJoCo's ``mju_user_error`` */
    mjModel* m;
    mjData* d;
    double *scratch, *ups; /* nv numbers for the energy; the cargo's contacts' upward forces */
    long ups_size;
    Regs regs; /* of the ``run`` under way: kept here, not on the stack, so that a MuJoCo error leaves them set */
    Py_buffer bufs[N_BUFS];
    int held[N_BUFS];
    double num[N_NUMS];
    Welds welds; /* its arrays are ``bufs``' */
    long long* slot_bodies; /* the rope ends' bodies of a tick (``welds._rope_loads``' keys), their nodes, loads */
    long long* slot_nodes;
    double* slot_loads;
} Kernel;


#define D(k, name) ((double*)(k)->bufs[name].buf)
#define Q(k, name) ((long long*)(k)->bufs[name].buf)
#define F(k, name) ((unsigned char*)(k)->bufs[name].buf)
#define LEN(k, name) ((k)->bufs[name].len / (k)->bufs[name].itemsize)

static void Kernel_dealloc(Kernel* self) {
    free(self->scratch);
    free(self->ups);
    welds_free(&self->welds);
    free(self->slot_bodies);
    free(self->slot_nodes);
    free(self->slot_loads);
    for (int i = 0; i < N_BUFS; i++) {
        if (self->held[i]) PyBuffer_Release(&self->bufs[i]);
    }
    Py_TYPE(self)->tp_free((PyObject*)self);
}

/* The weld analysis's view of the kernel's arrays (``native.kernel``) and its scratch. */
static int welds_init(Kernel* self) {
    Welds* w = &self->welds;
    Net* net = &w->net;
    welds_free(w);
    net->nodes = LEN(self, B_NODES);
    net->groups = LEN(self, B_ROOTS);
    net->cannons = LEN(self, B_CANNON_ACTS);
    net->tree = LEN(self, B_SIGNS);
    net->rows = LEN(self, B_STATE) / 2;
    net->parts = LEN(self, B_PARTS) / PART_FIELDS;
    net->entries = LEN(self, B_SUBTREE_NODES);
    net->rope_ends = LEN(self, B_ROPE_BODIES);
    net->span_stops = Q(self, B_SPAN_STOPS);
    net->subtree_nodes = Q(self, B_SUBTREE_NODES);
    net->subtree_starts = Q(self, B_SUBTREE_STARTS);
    net->cannon_nodes = Q(self, B_CANNON_NODES);
    net->parts_table = Q(self, B_PARTS);
    net->w_rows = Q(self, B_W_ROWS);
    net->w_starts = Q(self, B_W_STARTS);
    net->w_columns = Q(self, B_W_COLUMNS);
    net->g_rows = Q(self, B_G_ROWS);
    net->g_starts = Q(self, B_G_STARTS);
    net->g_columns = Q(self, B_G_COLUMNS);
    net->signs = D(self, B_SIGNS);
    net->levers = D(self, B_LEVERS);
    net->arms = D(self, B_ARMS);
    net->cannon_axes = D(self, B_CANNON_AXES);
    net->inverses = D(self, B_INVERSES);
    net->w_values = D(self, B_W_VALUES);
    net->g_values = D(self, B_G_VALUES);
    w->state = D(self, B_STATE);
    w->limits = D(self, B_LIMITS);
    w->reference = D(self, B_REFERENCE);
    w->reference_thrust = D(self, B_REFERENCE_THRUST);
    w->weights = D(self, B_WEIGHTS);
    w->pend_world = D(self, B_PEND_WORLD);
    w->pend_turns = D(self, B_PEND_TURNS);
    w->pend_thrust = D(self, B_PEND_THRUST);
    w->pend_rope_nodes = Q(self, B_PEND_ROPE_NODES);
    w->pend_rope_loads = D(self, B_PEND_ROPE_LOADS);
    w->reach = D(self, B_REACH);
    w->per_force = self->num[N_PER_FORCE];
    w->per_torque = self->num[N_PER_TORQUE];
    w->room = (long)self->num[N_ROOM];
    w->backoff_max = (long)self->num[N_BACKOFF_MAX];
    w->gain = self->num[N_GAIN];
    w->margin = self->num[N_MARGIN];
    w->refer_below = self->num[N_REFER_BELOW];
    free(self->slot_bodies);
    free(self->slot_nodes);
    free(self->slot_loads);
    self->slot_bodies = malloc((size_t)(net->rope_ends + 1) * sizeof(long long));
    self->slot_nodes = malloc((size_t)(net->rope_ends + 1) * sizeof(long long));
    self->slot_loads = malloc((size_t)(6 * net->rope_ends + 1) * sizeof(double));
    if (welds_alloc(w) < 0 || !self->slot_bodies || !self->slot_nodes || !self->slot_loads) {
        welds_free(w);
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static int Kernel_init(Kernel* self, PyObject* args, PyObject* kwds) {
    unsigned long long fn[6], model, data;
    PyObject *bufs, *nums;
    (void)kwds;
    if (!PyArg_ParseTuple(args, "(KKKKKK)KKO!O!", &fn[0], &fn[1], &fn[2], &fn[3], &fn[4], &fn[5], &model, &data,
                          &PyDict_Type, &bufs, &PyDict_Type, &nums))
        return -1;
    if (self->m != NULL) {
        PyErr_SetString(PyExc_TypeError, "Kernel: initialised once");
        return -1;
    }
    self->step = (step_fn)(uintptr_t)fn[0];
    self->rne = (step_fn)(uintptr_t)fn[1];
    self->distance = (distance_fn)(uintptr_t)fn[2];
    self->norm = (norm_fn)(uintptr_t)fn[3];
    self->mulm = (mulm_fn)(uintptr_t)fn[4];
    self->user_error = (void (**)(const char*))(uintptr_t)fn[5];
    self->m = (mjModel*)(uintptr_t)model;
    self->d = (mjData*)(uintptr_t)data;
    self->scratch = malloc((self->m->nv + 1) * sizeof(double));
    if (self->scratch == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (int i = 0; i < N_BUFS; i++) {
        PyObject* obj = PyDict_GetItemString(bufs, BUF_NAMES[i]);
        if (obj == NULL) {
            PyErr_Format(PyExc_KeyError, "Kernel: no array %s", BUF_NAMES[i]);
            return -1;
        }
        if (self->held[i]) {
            PyBuffer_Release(&self->bufs[i]);
            self->held[i] = 0;
        }
        if (PyObject_GetBuffer(obj, &self->bufs[i], PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE | PyBUF_FORMAT) < 0)
            return -1;
        self->held[i] = 1;
        const char* fmt = self->bufs[i].format;
        char kind = fmt[0] == '<' || fmt[0] == '=' ? fmt[1] : fmt[0];
        if (kind == 'l' && self->bufs[i].itemsize == 8) kind = 'q';
        if (kind != BUF_KIND[i]) {
            PyErr_Format(PyExc_TypeError, "Kernel: array %s has format %s, wants %c", BUF_NAMES[i], fmt,
                         BUF_KIND[i]);
            return -1;
        }
    }
    for (int i = 0; i < N_NUMS; i++) {
        PyObject* obj = PyDict_GetItemString(nums, NUM_NAMES[i]);
        if (obj == NULL) {
            PyErr_Format(PyExc_KeyError, "Kernel: no number %s", NUM_NAMES[i]);
            return -1;
        }
        self->num[i] = PyFloat_AsDouble(obj);
        if (self->num[i] == -1.0 && PyErr_Occurred()) return -1;
    }
    return self->num[N_WELDS] != 0.0 ? welds_init(self) : 0;
}

/* Python's max(a, b) and min(a, b) of floats: the first unless the second is strictly beyond it. */
static double py_max(double a, double b) { return b > a ? b : a; }
static double py_min(double a, double b) { return b < a ? b : a; }

/* ``_Cargo.apply``: the ramp's mass at ``t``; the model's cargo body follows it up to the cap. */
static void cargo_apply(Kernel* k, Regs* r, double t) {
    const double* n = k->num;
    double frac = py_min(1.0, py_max(n[N_FLOOR], (t - n[N_DELAY_S]) / n[N_RAMP_S]));
    double mass = n[N_MASS_START] + (n[N_MASS_MAX] - n[N_MASS_START]) * frac;
    r->mass = mass;
    if (mass == r->applied) return;
    r->applied = mass;
    double body_mass = py_min(mass, n[N_CAP]);
    if (body_mass == r->body_mass) return;
    r->body_mass = body_mass;
    double ratio = body_mass / n[N_MASS0];
    mjModel* m = k->m;
    int body = (int)n[N_CARGO_BODY];
    m->body_mass[body] = body_mass;
    for (int i = 0; i < 3; i++) m->body_inertia[3 * body + i] = D(k, B_INERTIA0)[i] * ratio;
    for (int i = 0; i < 2; i++) m->body_invweight0[2 * body + i] = D(k, B_INVWEIGHT0)[i] / ratio;
    long ndof = LEN(k, B_DOF_INVWEIGHT0), start = (long)n[N_DOF_START];
    for (long i = 0; i < ndof; i++) m->dof_invweight0[start + i] = D(k, B_DOF_INVWEIGHT0)[i] / ratio;
    long nrows = LEN(k, B_DRAG_ROWS), ncols = LEN(k, B_DRAG) / 2;
    for (int row = 0; row < 2; row++) {
        for (long i = 0; i < nrows; i++)
            D(k, B_DRAG)[row * ncols + Q(k, B_DRAG_ROWS)[i]] = D(k, B_DRAG0)[row * nrows + i] * ratio;
    }
}

/* ``_Cargo.hold``: the weight beyond the cap, scaled by what the cargo's contacts bear. */
static void cargo_hold(Kernel* k, Regs* r, double* ups) {
    const mjModel* m = k->m;
    mjData* d = k->d;
    int body = (int)k->num[N_CARGO_BODY];
    double gravity = k->num[N_GRAVITY];
    double extra = r->applied - r->body_mass;
    if (!(extra > 0)) {
        d->xfrc_applied[6 * body + 2] = 0.0;
        return;
    }
    double support = 0.0;
    if (d->ncon) {
        long count = 0;
        for (int c = 0; c < d->ncon; c++) {
            const mjContact* con = d->contact + c;
            int g0 = con->geom[0] < 0 ? con->geom[0] + m->ngeom : con->geom[0];
            int g1 = con->geom[1] < 0 ? con->geom[1] + m->ngeom : con->geom[1];
            int side0 = m->geom_bodyid[g0] == body, side1 = m->geom_bodyid[g1] == body;
            if (!(side0 || side1) || con->efc_address < 0) continue;
            const double* f = d->efc_force + con->efc_address;
            double local0 = (((0.0 + f[0]) + f[1]) + f[2]) + f[3];
            double local1 = (f[0] - f[1]) * con->friction[0];
            double local2 = (f[2] - f[3]) * con->friction[1];
            double up = local0 * con->frame[2] + local1 * con->frame[5];
            up += local2 * con->frame[8];
            ups[count++] = side1 ? up : -up;
        }
        support = 0.0 + pairwise(ups, count);
    }
    double share = py_min(py_max(support / (r->applied * gravity), 0.0), 1.0);
    d->xfrc_applied[6 * body + 2] = -extra * gravity * share;
}

/* ``heated`` and the cannons' thrust: a cannon's thrust changes when its heating does. */
static void cannons(Kernel* k, Regs* r) {
    const mjModel* m = k->m;
    mjData* d = k->d;
    long nc = LEN(k, B_CANNONS), npairs = LEN(k, B_HEAT_PAIRS) / 3;
    unsigned char* hot = F(k, B_HOT);
    const long long* pairs = Q(k, B_HEAT_PAIRS);
    memset(hot, 0, nc);
    for (long p = 0; p < npairs; p++) {
        long long cannon = pairs[3 * p];
        if (!hot[cannon] && k->distance(m, d, (int)pairs[3 * p + 1], (int)pairs[3 * p + 2], 0.01, NULL) <= 0.0)
            hot[cannon] = 1;
    }
    unsigned char* set = F(k, B_HOT_SET);
    if (r->dirty || memcmp(hot, set, nc) != 0) {
        for (long c = 0; c < nc; c++)
            d->ctrl[Q(k, B_CANNONS)[c]] = D(k, B_CANNON_ON)[c] * k->num[N_THRUST] * (hot[c] ? k->num[N_STEAM] : 1.0);
        memcpy(set, hot, nc);
        r->dirty = 0;
    }
}

/* ``Simulation._apply_drag``: -(linear + quadratic·speed)·v per dof, speed from each body's first three. */
static void drag(Kernel* k) {
    mjData* d = k->d;
    long ndof = LEN(k, B_DRAG_DOFS);
    const long long* dofs = Q(k, B_DRAG_DOFS);
    const double *lin = D(k, B_DRAG), *quad = D(k, B_DRAG) + ndof;
    for (long b = 0; b < ndof; b += 6) {
        double v[6];
        for (int i = 0; i < 6; i++) v[i] = d->qvel[dofs[b + i]];
        double s0 = v[0] * v[0], s1 = v[1] * v[1], s2 = v[2] * v[2];
        double speed = sqrt((s0 + s2) + s1);
        for (int i = 0; i < 6; i++) {
            double factor = quad[b + i] * speed;
            factor = lin[b + i] + factor;
            d->qfrc_applied[dofs[b + i]] = -factor * v[i];
        }
    }
}

/* ``welds._rope_loads`` and the rope rows of ``welds._inputs``: each rope end's pull on its body (force, torque
 * about the body's centre), summed per body, then in its group's frame for the bodies that are nodes. Without
 * memory for the tendon rows it ends the run as MuJoCo's own out-of-memory error does. */
static void rope_inputs(Kernel* k) {
    const mjModel* m = k->m;
    mjData* d = k->d;
    Welds* w = &k->welds;
    (void)m;
    if (k->ups_size < d->nefc) {
        double* ups = realloc(k->ups, (2 * d->nefc + 8) * sizeof(double));
        if (ups == NULL) (*k->user_error)("tick loop: out of memory for the rope loads");
        k->ups = ups;
        k->ups_size = 2 * d->nefc + 8;
    }
    const long long *tendons = Q(k, B_ROPE_TENDONS), *sites = Q(k, B_ROPE_SITES), *bodies = Q(k, B_ROPE_BODIES);
    const long long* end_nodes = Q(k, B_ROPE_NODES);
    long ropes = LEN(k, B_ROPE_TENDONS), slots = 0;
    for (long rope = 0; rope < ropes; rope++) {
        long count = 0;
        for (int i = 0; i < d->nefc; i++) {
            if (d->efc_type[i] == mjCNSTR_LIMIT_TENDON && d->efc_id[i] == tendons[rope]) k->ups[count++] = d->efc_force[i];
        }
        double tension = 0.0 + pairwise(k->ups, count);
        if (tension == 0.0) continue;
        const double *e0 = d->site_xpos + 3 * sites[2 * rope], *e1 = d->site_xpos + 3 * sites[2 * rope + 1];
        double span[3], squares[3], pull[3];
        for (int i = 0; i < 3; i++) {
            span[i] = e1[i] - e0[i];
            squares[i] = span[i] * span[i];
        }
        double length = py_max(sqrt(0.0 + pairwise(squares, 3)), 1e-9);
        for (int i = 0; i < 3; i++) pull[i] = tension * span[i] / length;
        for (int end = 0; end < 2; end++) {
            long long body = bodies[2 * rope + end];
            const double* point = end ? e1 : e0;
            double wrench[6], arm[3];
            for (int i = 0; i < 3; i++) {
                wrench[i] = end ? -pull[i] : pull[i];
                arm[i] = point[i] - d->xipos[3 * body + i];
            }
            /* ``np.cross(arm, force)`` */
            wrench[3] = arm[1] * wrench[2] - arm[2] * wrench[1];
            wrench[4] = arm[2] * wrench[0] - arm[0] * wrench[2];
            wrench[5] = arm[0] * wrench[1] - arm[1] * wrench[0];
            long s = 0;
            while (s < slots && k->slot_bodies[s] != body) s++;
            double* load = k->slot_loads + 6 * s;
            if (s == slots) { /* ``loads.get(body, 0.0) + wrench`` */
                k->slot_bodies[slots] = body;
                k->slot_nodes[slots++] = end_nodes[2 * rope + end];
                for (int i = 0; i < 6; i++) load[i] = 0.0 + wrench[i];
            } else {
                for (int i = 0; i < 6; i++) load[i] = load[i] + wrench[i];
            }
        }
    }
    const double* turns = w->cur + 6 * w->net.nodes;
    w->cur_ropes = 0;
    for (long s = 0; s < slots; s++) {
        long long node = k->slot_nodes[s];
        if (node < 0) continue;
        long g = 0;
        while (node >= w->net.span_stops[g]) g++;
        const double* turn = turns + 9 * g;
        double* out = w->cur_rope_loads + 6 * w->cur_ropes;
        for (int half = 0; half < 2; half++) {
            const double* v = k->slot_loads + 6 * s + 3 * half;
            for (int j = 0; j < 3; j++) out[3 * half + j] = v[0] * turn[j] + v[1] * turn[3 + j] + v[2] * turn[6 + j];
        }
        w->cur_rope_nodes[w->cur_ropes++] = node;
    }
}

/* The weld analysis of the tick just stepped (``_WeldResponse.snapped``, ``_welds.c``): its inputs from the
 * inverse dynamics, then 1 where every weld holds, 0 where one is over its limit (Python breaks it). */
static int weld_tick(Kernel* k, Regs* r) {
    mjData* d = k->d;
    Welds* w = &k->welds;
    k->rne(k->m, d);
    long nodes = w->net.nodes, groups = w->net.groups, nc = w->net.cannons;
    double* in = w->cur;
    for (long n = 0; n < nodes; n++) memcpy(in + 6 * n, d->cfrc_int + 6 * Q(k, B_NODES)[n], 6 * sizeof(double));
    in += 6 * nodes;
    for (long g = 0; g < groups; g++) memcpy(in + 9 * g, d->xmat + 9 * Q(k, B_ROOTS)[g], 9 * sizeof(double));
    in += 9 * groups;
    for (long c = 0; c < nc; c++) in[c] = d->actuator_force[Q(k, B_CANNON_ACTS)[c]];
    w->cur_ropes = 0;
    if (LEN(k, B_ROPE_TENDONS)) rope_inputs(k);
    return welds_tick(w, &r->welds);
}

/* The smallest value, NaN if any is NaN (numpy's ``min``/``max``); ``sign`` -1 for the largest. */
static double extreme(const double* a, long n, long stride, double sign) {
    double best = sign * a[0];
    for (long i = 1; i < n; i++) {
        double v = sign * a[i * stride];
        if (isnan(v) || v < best) best = v;
        if (isnan(best)) break;
    }
    return sign * best;
}

/* The per-body energy test of ``DivergenceWatch.energy_jumped`` against the baselines ``bodies`` (one per free
 * joint, in the model's order): 1 where a body jumped, else 0 (and, with ``update``, each body's energy now becomes
 * its baseline); -1 where the baselines are not this model's (Python runs the test). */
static int body_test(Kernel* k, int update) {
    const mjModel* m = k->m;
    const double* qvel = k->d->qvel;
    double* base = D(k, B_BODIES);
    long n = LEN(k, B_BODIES), b = 0;
    double limit = k->num[N_ENERGY_JUMP], growth = k->num[N_ENERGY_GROWTH];
    for (int j = 0; j < m->njnt; j++) {
        if (m->jnt_type[j] != mjJNT_FREE) continue;
        if (b == n) return -1;
        const double* v = qvel + m->jnt_dofadr[j];
        double energy = 0.5 * ((v[0] * v[0] + v[1] * v[1]) + v[2] * v[2]);
        if (update) {
            base[b] = energy;
        } else if (energy - base[b] > limit && energy > growth * base[b]) {
            return 1;
        }
        b++;
    }
    return b == n ? 0 : -1;
}

/* ``DivergenceWatch._slow_checks`` when nothing diverged: the new energy baseline (``scratch``: nv numbers);
 * NaN where a test fails, for Python to name. */
static double slow_checks(Kernel* k, Regs* r, double* scratch) {
    const mjModel* m = k->m;
    mjData* d = k->d;
    double depth = k->num[N_MAX_PENETRATION];
    if (d->ncon && extreme(&d->contact[0].dist, d->ncon, sizeof(mjContact) / sizeof(double), 1.0) < -depth)
        return NAN;
    if (m->ntendon) {
        double worst = d->ten_length[0] - m->tendon_range[1];
        for (int i = 1; i < m->ntendon; i++) {
            double v = d->ten_length[i] - m->tendon_range[2 * i + 1];
            if (isnan(worst) || isnan(v) || v > worst) worst = isnan(worst) ? worst : v;
        }
        if (worst > depth) return NAN;
    }
    k->mulm(m, d, scratch, d->qvel);
    for (int i = 0; i < m->nv; i++) scratch[i] = d->qvel[i] * scratch[i];
    double mass = 0.0 + pairwise(m->body_mass, m->nbody);
    double energy = 0.5 * (0.0 + pairwise(scratch, m->nv)) / py_max(mass, 1e-9);
    double previous = r->energy;
    if (previous >= 0) {
        double jump = energy - previous;
        if (jump > k->num[N_ENERGY_JUMP] && energy > k->num[N_ENERGY_GROWTH] * previous) return NAN;
        if (body_test(k, 0) != 0) return NAN;
    }
    /* The baselines move only once every test passed: a failed one leaves them to Python's test of this tick. */
    return body_test(k, 1) != 0 ? NAN : energy;
}

/* Whether the tick just stepped passes ``DivergenceWatch.check`` (then its counters move on as there), or
 * may not (Python runs the check). */
static int quiet(Kernel* k, Regs* r, double expected, double* scratch) {
    mjData* d = k->d;
    if (fabs(d->time - expected) > 1e-6) return 0;
    if (d->warning[mjWARN_BADQACC].number) return 0;
    /* MuJoCo dropped contacts or constraints for want of arena: Python names the limit. */
    if (d->warning[mjWARN_CONTACTFULL].number || d->warning[mjWARN_CNSTRFULL].number) return 0;
    if (!(k->norm(d->qvel, k->m->nv) < k->num[N_QUIET] * k->num[N_MAX_SPEED])) return 0;
    if ((r->watch_ticks + 1) % (long)k->num[N_CHECK_TICKS] == 0) {
        double energy = slow_checks(k, r, scratch);
        if (isnan(energy)) return 0;
        r->energy = energy;
    }
    r->watch_ticks += 1;
    return 1;
}

static void log_row(Kernel* k, Regs* r) {
    long nb = LEN(k, B_LOG_BODIES), nc = LEN(k, B_CANNONS);
    double* row = D(k, B_POSITIONS) + r->logged * nb * 3;
    for (long b = 0; b < nb; b++) memcpy(row + 3 * b, k->d->xpos + 3 * Q(k, B_LOG_BODIES)[b], 3 * sizeof(double));
    memcpy(F(k, B_BURNING) + r->logged * nc, F(k, B_HOT), nc);
    if (k->num[N_CARGO_BODY] >= 0) D(k, B_MASSES)[r->logged] = r->mass;
    r->logged += 1;
}

/* MuJoCo's fatal errors (``mju_error``) inside ``ticks``: back to ``Kernel_run``, which raises them, as the
 * bindings do, rather than MuJoCo's default of ending the process. */
static _Thread_local jmp_buf error_jump;
static _Thread_local char error_message[1024];

static void on_error(const char* message) {
    strncpy(error_message, message, sizeof(error_message) - 1);
    error_message[sizeof(error_message) - 1] = '\0';
    longjmp(error_jump, 1);
}

/* The ticks of ``run`` (without the GIL); returns the STOP_* code. */
static int ticks(Kernel* k, Regs* r, long limit) {
    const double* n = k->num;
    double tick_s = n[N_TICK_S];
    long log_every = (long)n[N_LOG_EVERY], n_ticks = (long)n[N_N_TICKS], steps = (long)n[N_STEPS];
    int cargo = n[N_CARGO_BODY] >= 0, welds = n[N_WELDS] != 0.0;
    long nc = LEN(k, B_CANNONS);
    for (long end = r->tick + limit; r->tick < end; r->tick++) {
        double t = r->tick * tick_s;
        if (r->next_event <= t + 1e-9 || r->tick == n_ticks) return STOP_BEFORE;
        if (cargo) {
            cargo_apply(k, r, t);
            if (k->ups_size < k->d->ncon) {
                double* ups = realloc(k->ups, (2 * k->d->ncon + 8) * sizeof(double));
                if (ups == NULL) return STOP_BEFORE; /* Python runs the tick */
                k->ups = ups;
                k->ups_size = 2 * k->d->ncon + 8;
            }
            cargo_hold(k, r, k->ups);
        }
        int log_due = r->tick % log_every == 0;
        if (nc && (log_due || r->firing || r->dirty)) cannons(k, r);
        if (log_due) {
            log_row(k, r);
            if (!isnan(n[N_STOP_Z]) && k->d->xpos[3 * (long)n[N_CARGO_BODY] + 2] < n[N_STOP_Z]) return STOP_DONE;
        }
        if (LEN(k, B_DRAG_DOFS)) drag(k);
        for (long s = 0; s < steps; s++) k->step(k->m, k->d);
        if (!quiet(k, r, t + tick_s, k->scratch)) return STOP_STEPPED;
        if (welds && !weld_tick(k, r)) return STOP_CHECKED;
    }
    return STOP_BEFORE;
}

/* run(regs, limit) -> (stop, regs): up to ``limit`` ticks from ``regs`` (see ``Regs``). ``stop`` says where
 * the last tick was left: STOP_BEFORE (not begun; Python runs it whole), STOP_STEPPED (stepped; Python runs
 * the divergence test and the weld analysis), STOP_CHECKED (the weld analysis ran: a weld is over its limit,
 * Python breaks it), STOP_DONE (the cargo fell below the stop height at a log). A MuJoCo error raises
 * RuntimeError(message, regs) (``native`` raises it as ``mujoco.FatalError``). */
static PyObject* Kernel_run(Kernel* k, PyObject* args) {
    Regs* r = &k->regs;
    long limit;
    WeldRegs* wr = &r->welds;
    if (!PyArg_ParseTuple(args, "(ldppdddllddddlllllddd)l", &r->tick, &r->next_event, &r->firing, &r->dirty,
                          &r->applied, &r->body_mass, &r->mass, &r->logged, &r->watch_ticks, &r->energy, &wr->decay,
                          &wr->level, &wr->lag, &wr->skipped, &wr->npend, &wr->wait, &wr->refers, &wr->backoff,
                          &wr->worst, &wr->reference_worst, &wr->reference_ropes, &limit))
        return NULL;
    volatile int stop = STOP_BEFORE, failed = 0;
    Py_BEGIN_ALLOW_THREADS
    void (*previous)(const char*) = *k->user_error;
    *k->user_error = on_error;
    if (setjmp(error_jump) == 0) {
        stop = ticks(k, r, limit);
    } else {
        failed = 1;
    }
    *k->user_error = previous;
    Py_END_ALLOW_THREADS
    PyObject* regs = Py_BuildValue("(ldiidddllddddlllllddd)", r->tick, r->next_event, r->firing, r->dirty, r->applied,
                                   r->body_mass, r->mass, r->logged, r->watch_ticks, r->energy, wr->decay, wr->level,
                                   wr->lag, wr->skipped, wr->npend, wr->wait, wr->refers, wr->backoff, wr->worst,
                                   wr->reference_worst, wr->reference_ropes);
    if (regs == NULL) return NULL;
    if (failed) {
        /* The registers as the error left them: the tick it happened in, as the Python loop would have it. */
        PyObject* error = Py_BuildValue("(sN)", error_message, regs);
        if (error != NULL) PyErr_SetObject(PyExc_RuntimeError, error);
        Py_XDECREF(error);
        return NULL;
    }
    return Py_BuildValue("(iN)", stop, regs);
}

/* loads(inputs, rope_nodes, rope_loads, out): the exact weld analysis of one tick's inputs (world wrenches, root
 * rotations, thrusts: one float64 array as a pending row holds them; the rope-end nodes, int64, and their loads)
 * into ``out`` (rows × 2 magnitudes), as the tick loop computes them. */
static PyObject* Kernel_loads(Kernel* k, PyObject* args) {
    Py_buffer in, nodes, loads, out;
    if (k->num[N_WELDS] == 0.0) {
        PyErr_SetString(PyExc_ValueError, "Kernel.loads: no welds");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "y*y*y*w*", &in, &nodes, &loads, &out)) return NULL;
    const Net* net = &k->welds.net;
    Py_ssize_t want_in = (Py_ssize_t)(6 * net->nodes + 9 * net->groups + net->cannons) * (Py_ssize_t)sizeof(double);
    Py_ssize_t want_out = (Py_ssize_t)(2 * net->rows) * (Py_ssize_t)sizeof(double);
    Py_ssize_t ropes = nodes.len / (Py_ssize_t)sizeof(long long);
    PyObject* result = NULL;
    if (in.len != want_in || out.len != want_out || ropes > net->rope_ends ||
        loads.len != ropes * 6 * (Py_ssize_t)sizeof(double)) {
        PyErr_SetString(PyExc_ValueError, "Kernel.loads: inputs, rope loads or out of the wrong size");
    } else {
        const double* v = in.buf;
        net_loads(net, v, v + 6 * net->nodes, v + 6 * net->nodes + 9 * net->groups, (long)ropes, nodes.buf, loads.buf,
                  out.buf, k->welds.scratch);
        result = Py_None;
        Py_INCREF(result);
    }
    PyBuffer_Release(&in);
    PyBuffer_Release(&nodes);
    PyBuffer_Release(&loads);
    PyBuffer_Release(&out);
    return result;
}

static PyMethodDef Kernel_methods[] = {
    {"run", (PyCFunction)Kernel_run, METH_VARARGS, "Run ticks until Python must decide (see the C source)."},
    {"loads", (PyCFunction)Kernel_loads, METH_VARARGS, "The weld analysis of one tick's inputs (see the C source)."},
    {NULL, NULL, 0, NULL}};

static PyTypeObject KernelType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "buildbench.suites.buildarena.physics._tick.Kernel",
    .tp_basicsize = sizeof(Kernel),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Kernel_init,
    .tp_dealloc = (destructor)Kernel_dealloc,
    .tp_methods = Kernel_methods,
    .tp_doc = "The tick loop of one compiled model and weld analysis (see the C source).",
};

static struct PyModuleDef tick_module = {PyModuleDef_HEAD_INIT, "_tick", "A compiled BuildArena tick loop.", -1,
                                         NULL};

PyMODINIT_FUNC PyInit__tick(void) {
    if (PyType_Ready(&KernelType) < 0) return NULL;
    PyObject* module = PyModule_Create(&tick_module);
    if (module == NULL) return NULL;
    Py_INCREF(&KernelType);
    if (PyModule_AddObject(module, "Kernel", (PyObject*)&KernelType) < 0) {
        Py_DECREF(&KernelType);
        Py_DECREF(module);
        return NULL;
    }
    if (PyModule_AddIntConstant(module, "LAYOUT", LAYOUT) < 0 ||
        PyModule_AddIntConstant(module, "MJ_VERSION", mjVERSION_HEADER) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
