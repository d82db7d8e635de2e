// "Compare runs": per suite, the headline metrics of each run identity as bar charts with
// their 95 % intervals, cost, then a grid of tasks × columns in verdict colours; a cell opens
// that task's episodes from every column side by side, each with its 3-D artefact.
// Data: buildbench/web/compare.py. Every string from a run is inserted as text.
import { api } from "./api.js";
import { append, clear, fmt, h, svg } from "./dom.js";
import { swatch, textBlock, turnCard } from "./parts.js";
import { ArtefactView } from "./viewer3d.js";

const PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#b07aa1", "#edc948", "#9c755f",
  "#ff9da7", "#bab0ac"];
// Grid rows drawn before "show all" (a run of thousands of tasks stays quick to open).
const GRID_ROWS = 300;
// 3-D views opened at once on the side-by-side page (browsers cap WebGL contexts near 16).
const AUTO_VIEWS = 6;
const SYMBOL = { solved: "✓", failed: "✗", unscored: "!", mixed: "", scored: "" };

const colourOf = (k) => PALETTE[k % PALETTE.length];
const keyOf = (k) => (k < 26 ? String.fromCharCode(65 + k) : `C${k + 1}`);
const isNum = (v) => typeof v === "number" && Number.isFinite(v);

function num(v) {
  if (!isNum(v)) return "n/a";
  if (Number.isInteger(v)) return String(v);
  return Math.abs(v) >= 1000 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(3);
}

// Means and interval ends as the terminal report writes them (three decimals).
function dec(v) {
  if (!isNum(v)) return "n/a";
  return Math.abs(v) >= 1000 ? v.toFixed(1) : v.toFixed(3);
}

function intervalText(iv) {
  if (!iv || !iv.n) return "n/a (no scored episode)";
  return `${dec(iv.mean)} [${dec(iv.low)}, ${dec(iv.high)}] n=${iv.n}`;
}

function taskHash(suite, task) {
  return `#/compare/${encodeURIComponent(suite)}/${encodeURIComponent(task)}`;
}

function columnTag(col, k) {
  return h("span", { className: "col-tag", title: col.label }, swatch(colourOf(k)), keyOf(k));
}

// ---- the page ------------------------------------------------------------------------
export async function showCompare(app, setStatus) {
  clear(app);
  setStatus("computing intervals and the task grid…");
  const data = await api.compare();
  setStatus("");
  const section = h("section", { id: "compare" }, h("h2", {}, "Compare runs"),
    h("p", { className: "muted" }, "Columns are run configurations: runs that differ in any setting are never merged, " +
      "and each is labelled by what differs. Bars are means over scored episodes; whiskers are 95 % bootstrap " +
      "intervals clustered by task; n counts episodes."));
  for (const [suite, view] of Object.entries(data.suites)) section.appendChild(suiteSection(suite, view));
  app.appendChild(section);
}

function suiteSection(suite, view) {
  const cols = view.columns;
  const out = h("section", { className: "suite-compare", dataset: { suite } }, h("h3", {}, suite));
  for (const note of view.notes) out.appendChild(h("p", { className: "warn" }, `note: ${note}`));
  out.appendChild(h("p", { className: "run-info" }, cols.length > 1
    ? `${cols.length} columns; they differ in: ${view.differs_in.map((f) => f.replace(/^-o /, "")).join(", ")}`
    : "1 column"));
  out.appendChild(columnsTable(cols));
  out.appendChild(h("div", { className: "charts" }, view.headline.map((m) => metricChart(m, cols))));
  const rest = view.metrics.filter((m) => !view.headline.includes(m));
  if (rest.length) {
    out.appendChild(h("details", { className: "all-metrics" }, h("summary", {}, `all ${view.metrics.length} metrics`),
      h("div", { className: "scroll" }, h("table", { className: "grid" },
        h("thead", {}, h("tr", {}, h("th", {}, "metric"), cols.map((c, k) => h("th", {}, columnTag(c, k))))),
        h("tbody", {}, view.metrics.map((m) => h("tr", {}, h("th", {}, m),
          cols.map((c) => h("td", { className: "num" }, intervalText(c.intervals[m]))))))))));
  }
  out.appendChild(taskGrid(suite, view));
  return out;
}

function columnsTable(cols) {
  const priced = cols.some((c) => c.cost.currency);
  const head = ["", "configuration", "runs", "episodes", "unscored", "tokens in / ep.", "tokens out / ep.",
    "requests / ep.", "wall s / ep.", "solved tasks", "tokens / solved task", ...(priced ? ["money / ep."] : [])];
  return h("div", { className: "scroll" }, h("table", { className: "grid columns" },
    h("thead", {}, h("tr", {}, head.map((t) => h("th", {}, t)))),
    h("tbody", {}, cols.map((c, k) => {
      const per = c.cost.per_episode, solved = c.cost.per_solved_task;
      const perSolved = isNum(solved.input_tokens) ? solved.input_tokens + solved.output_tokens : null;
      return h("tr", { className: "column-row" }, h("td", {}, columnTag(c, k)), h("td", { className: "label-cell" }, c.label),
        h("td", {}, c.runs.map((r, i) => [i ? ", " : "", h("a", { href: `#/run/${r.id}` }, `${r.id}: ${r.name}`)])),
        h("td", { className: "num" }, c.episodes), h("td", { className: "num" }, c.unscored),
        [per.input_tokens, per.output_tokens, per.requests, per.wall_s].map((v) => h("td", { className: "num" }, num(v))),
        h("td", { className: "num" }, c.cost.solved_metric ? c.cost.solved_tasks : "n/a"),
        h("td", { className: "num" }, num(perSolved)),
        priced ? h("td", { className: "num" }, isNum(per.money) ? `${num(per.money)} ${c.cost.currency}` : "no price") : null);
    }))));
}

// ---- charts: one per metric, a bar per column with its interval as a whisker ----------
function niceTicks(lo, hi) {
  const span = hi - lo;
  const step0 = span / 4;
  const mag = 10 ** Math.floor(Math.log10(step0));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= step0) || step0;
  const ticks = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) ticks.push(Math.abs(t) < step * 1e-9 ? 0 : t);
  return ticks;
}

function metricChart(metric, cols) {
  const ivs = cols.map((c) => c.intervals[metric]).map((iv) => (iv && iv.n && isNum(iv.mean) ? iv : null));
  const ends = ivs.filter(Boolean).flatMap((iv) => [iv.mean, isNum(iv.low) ? iv.low : iv.mean, isNum(iv.high) ? iv.high : iv.mean]);
  let lo = Math.min(0, ...ends), hi = Math.max(0, ...ends);
  if (ends.length && lo >= 0 && hi <= 1) hi = 1; // a rate or a flag: always the full 0..1 scale
  if (hi === lo) hi = lo + 1;
  const ticks = niceTicks(lo, hi);
  lo = Math.min(lo, ticks[0]); hi = Math.max(hi, ticks[ticks.length - 1]);
  const L = 30, W = 230, R = 190, top = 6, rowH = 24, axis = 20;
  const H = top + rowH * cols.length + axis;
  const x = (v) => L + ((v - lo) / (hi - lo)) * W;
  const chart = svg("svg", { className: "metric-chart", viewBox: `0 0 ${L + W + R} ${H}`, width: L + W + R, height: H,
    role: "img", "aria-label": `${metric}: mean and 95 % interval per column`, dataset: { metric } });
  for (const t of ticks) {
    chart.append(svg("line", { x1: x(t), x2: x(t), y1: top, y2: H - axis, className: t === 0 ? "axis" : "gridline" }),
      svg("text", { x: x(t), y: H - axis + 14, "text-anchor": "middle", className: "tick" }, String(Number(t.toPrecision(6)))));
  }
  cols.forEach((c, k) => {
    const iv = ivs[k];
    const y = top + k * rowH;
    const g = svg("g", { className: "bar-row", dataset: { column: k } }, svg("title", {}, `${c.label}: ${intervalText(iv)}`),
      svg("text", { x: L - 6, y: y + rowH / 2 + 4, "text-anchor": "end", className: "key" }, keyOf(k)));
    if (iv) {
      const x0 = x(Math.min(0, iv.mean)), x1 = x(Math.max(0, iv.mean));
      g.append(svg("rect", { x: x0, y: y + 5, width: Math.max(x1 - x0, 1), height: rowH - 10, fill: colourOf(k), className: "bar" }));
      const l = isNum(iv.low) ? iv.low : iv.mean, r = isNum(iv.high) ? iv.high : iv.mean, ym = y + rowH / 2;
      g.append(svg("line", { x1: x(l), x2: x(r), y1: ym, y2: ym, className: "whisker" }),
        svg("line", { x1: x(l), x2: x(l), y1: ym - 5, y2: ym + 5, className: "whisker" }),
        svg("line", { x1: x(r), x2: x(r), y1: ym - 5, y2: ym + 5, className: "whisker" }));
    }
    g.append(svg("text", { x: L + W + 8, y: y + rowH / 2 + 4, className: "value" }, intervalText(iv)));
    chart.appendChild(g);
  });
  return h("figure", { className: "chart" }, h("figcaption", {}, metric), chart);
}

// ---- the per-task grid -----------------------------------------------------------------
function cellText(cell, binary) {
  const extra = cell.unscored && cell.unscored < cell.n ? ` +${cell.unscored}!` : "";
  if (cell.verdict === "unscored") return cell.n > 1 ? `${cell.n}!` : "!";
  if (binary) return cell.n === 1 ? SYMBOL[cell.verdict] : `${cell.solved}/${cell.solved + cell.failed}${extra}`;
  return `${isNum(cell.mean) ? dec(cell.mean) : "–"}${cell.n > 1 ? ` ×${cell.n - cell.unscored}` : ""}${extra}`;
}

function cellTitle(cell, metric) {
  const parts = [`${cell.n} episode(s)`];
  if (cell.solved || cell.failed) parts.push(`${cell.solved} solved, ${cell.failed} failed`);
  if (cell.unscored) parts.push(`${cell.unscored} unscored (${[...new Set(cell.episodes.filter((e) => !e.scored).map((e) => e.status))].join(", ")})`);
  if (isNum(cell.mean)) parts.push(`mean ${metric} ${dec(cell.mean)}`);
  return parts.join(" · ");
}

// Shade from white to the first palette colour over the metric's range (no better/worse
// direction is assumed: a rate of collisions and a score shade alike).
function shade(value, range) {
  const t = range && range[1] > range[0] ? (value - range[0]) / (range[1] - range[0]) : 1;
  const mix = (a) => Math.round(255 + (a - 255) * (0.15 + 0.85 * t));
  return { bg: `rgb(${mix(0x4e)}, ${mix(0x79)}, ${mix(0xa7)})`, dark: t > 0.55 };
}

// Mixed samples: from the failed red through yellow (half solved) to the solved green.
const MIXED_STOPS = [[0xff, 0xce, 0xcb], [0xff, 0xf1, 0xa8], [0xac, 0xee, 0xbb]];
function mixedColour(share) {
  const [a, b, t] = share < 0.5 ? [MIXED_STOPS[0], MIXED_STOPS[1], share * 2] : [MIXED_STOPS[1], MIXED_STOPS[2], share * 2 - 1];
  return `rgb(${a.map((v, i) => Math.round(v + (b[i] - v) * t)).join(", ")})`;
}

function differs(row) {
  const keys = row.cells.map((c) => (c ? `${c.verdict}:${isNum(c.mean) ? c.mean.toFixed(6) : ""}` : "none"));
  return new Set(keys).size > 1;
}

function taskGrid(suite, view) {
  const { grid, columns: cols } = view;
  const wrap = h("div", { className: "task-grid-section" });
  const title = grid.metric
    ? `per task: ${grid.metric}${grid.binary ? " (solved / failed)" : " (mean, shaded over its range)"}`
    : "per task";
  const filter = h("input", { type: "search", className: "grid-filter", placeholder: "task id contains…" });
  const onlyDiff = h("input", { type: "checkbox", className: "grid-differ" });
  const info = h("span", { className: "muted grid-count" });
  const table = h("table", { className: "task-grid", dataset: { suite } });
  const more = h("div", { className: "grid-more" });
  const legend = grid.binary
    ? h("p", { className: "grid-legend" }, ["solved", "failed", "mixed", "unscored"].map((v) =>
      h("span", { className: `cell v-${v}` }, v === "mixed" ? "k/m" : SYMBOL[v], " ", v === "mixed"
        ? "k of m scored samples solved (red to green by the share)" : v === "unscored" ? "unscored (an error or fault, not a score)" : v)))
    : h("p", { className: "grid-legend muted" }, "cells: mean of the task's scored samples (×m samples)" +
      (grid.range ? `, shaded from ${dec(grid.range[0])} (light) to ${dec(grid.range[1])} (dark)` : "") + "; ! unscored");
  wrap.append(h("h4", {}, title), legend,
    h("div", { className: "filters" }, filter, h("label", {}, onlyDiff, " only tasks where the columns differ"), info),
    h("div", { className: "grid-scroll" }, table), more);

  let limit = GRID_ROWS;
  const draw = () => {
    const q = filter.value.toLowerCase();
    const kept = grid.rows.filter((r) => (!q || r.task.toLowerCase().includes(q)) && (!onlyDiff.checked || differs(r)));
    info.textContent = `${kept.length} of ${grid.rows.length} task(s)`;
    clear(table);
    table.appendChild(h("thead", {}, h("tr", {}, h("th", {}, "task"),
      cols.map((c, k) => h("th", { className: "col-head", title: c.label }, columnTag(c, k), h("div", { className: "col-label" }, c.label))))));
    table.appendChild(h("tbody", {}, kept.slice(0, limit).map((row) => h("tr", {},
      h("th", { className: "task-id", title: row.task }, row.task),
      row.cells.map((cell, k) => {
        if (!cell) return h("td", { className: "cell v-missing", title: "no episode of this task" }, "");
        const td = h("td", { className: `cell v-${cell.verdict}`, title: cellTitle(cell, grid.metric), dataset: { column: k } },
          h("a", { href: taskHash(suite, row.task), className: "cell-link" }, cellText(cell, grid.binary)));
        if (cell.verdict === "mixed") td.style.backgroundColor = mixedColour(cell.solved / (cell.solved + cell.failed));
        if (cell.verdict === "scored" && isNum(cell.mean)) {
          const { bg, dark } = shade(cell.mean, grid.range);
          td.style.backgroundColor = bg;
          if (dark) td.classList.add("dark");
        }
        return td;
      })))));
    clear(more);
    if (kept.length > limit) {
      more.appendChild(h("button", { className: "grid-show-all", onclick: () => { limit = Infinity; draw(); } },
        `show all ${kept.length} tasks (${kept.length - limit} more)`));
    }
  };
  filter.addEventListener("input", draw);
  onlyDiff.addEventListener("change", draw);
  draw();
  return wrap;
}

// ---- one task from every column, side by side --------------------------------------------
export async function showCompareTask(app, setStatus, suite, task, views) {
  clear(app);
  setStatus("loading…");
  const data = await api.compare();
  const view = data.suites[suite];
  if (!view) throw new Error(`no suite ${suite} among the runs shown`);
  const row = view.grid.rows.find((r) => r.task === task);
  if (!row) throw new Error(`no task ${task} in the ${suite} runs shown`);
  const prompt = h("div", { className: "task-prompt" });
  const board = h("div", { className: "side-by-side", id: "side-by-side" });
  board.style.gridTemplateColumns = `repeat(${view.columns.length}, minmax(24rem, 1fr))`;
  app.append(h("section", { id: "compare-task" },
    h("p", { className: "run-info" }, h("a", { href: "#/compare", id: "back-to-compare" }, "← Compare runs"), ` · ${suite}`),
    h("h2", { id: "compare-task-title" }, task), prompt, h("div", { className: "scroll" }, board)));
  let opened = 0;
  const loads = [];
  view.columns.forEach((col, k) => {
    const cell = row.cells[k];
    const column = h("div", { className: "sbs-column", dataset: { column: k } },
      h("header", { className: "sbs-head" }, columnTag(col, k), " ", h("span", { className: "label-cell" }, col.label),
        cell ? h("div", { className: `cell v-${cell.verdict} sbs-verdict` }, cellTitle(cell, view.grid.metric)) : null));
    board.appendChild(column);
    if (!cell) { column.appendChild(h("p", { className: "muted" }, "no episode of this task in this column")); return; }
    for (const ref of cell.episodes) {
      const card = h("article", { className: "sbs-episode", dataset: { run: ref.run, sample: ref.sample } });
      column.appendChild(card);
      const auto = opened++ < AUTO_VIEWS;
      loads.push(fillEpisode(app, card, view, ref, task, auto, views, prompt));
    }
  });
  setStatus("loading episodes and artefacts…");
  await Promise.all(loads);
  setStatus("");
}

async function fillEpisode(app, card, view, ref, task, auto, views, prompt) {
  let ep;
  try {
    ep = await api.episode(ref.run, task, ref.sample);
  } catch (err) {
    card.appendChild(h("p", { className: "error" }, `episode not loaded: ${err.message || err}`));
    card.dataset.loaded = "1";
    return;
  }
  if (ep.task && !prompt.firstChild) {
    prompt.appendChild(h("details", {}, h("summary", {}, "task (the first prompt)"),
      Object.entries(ep.task.inputs).map(([k, v]) => textBlock(k, v))));
  }
  const shown = view.headline.filter((m) => m in (ep.metrics || {}));
  append(card, [
    h("header", {}, h("a", { href: `#/run/${ref.run}/episode/${encodeURIComponent(task)}/${ref.sample}` },
      `run ${ref.run} · sample ${ref.sample}`), " · ", h("span", { className: `badge ${ep.status}` }, ep.status),
      ` · ${fmt(ep.duration_s)} s · ${ep.steps.length} turn(s)`),
    ep.error ? textBlock("error", ep.error, "error") : null,
    shown.length ? h("table", { className: "grid metrics sbs-metrics" }, h("tbody", {}, shown.map((m) =>
      h("tr", {}, h("th", {}, m), h("td", { className: "num" }, fmt(ep.metrics[m])))))) : null]);
  const stage = h("div", { className: "stage small" });
  const side = h("div", { className: "artefact-side" });
  card.append(h("div", { className: "sbs-artefact" }, h("div", { className: "label" }, "artefact"), stage, side),
    h("details", { className: "sbs-trajectory" }, h("summary", {}, `trajectory (${ep.steps.length} turn(s))`),
      ep.steps.map((step, i) => turnCard(step, i, false))));
  const open = async () => {
    clear(stage);
    stage.appendChild(h("p", { className: "muted" }, "building the 3-D view…"));
    let art;
    try {
      art = await api.artefact(ref.run, task, ref.sample);
    } catch (err) {
      clear(stage).appendChild(h("p", { className: "error" }, `artefact not built: ${err.message || err}`));
      return;
    }
    if (!app.contains(stage)) return; // the page was left while the artefact was built
    clear(stage);
    const picked = h("p", { className: "picked" }, "click an element to name it");
    const v = new ArtefactView(stage, art, { onPick: (id, label) => { picked.textContent = label || id; v.highlight([id]); } });
    views.push(v);
    stage.dataset.ready = "1";
    side.append(h("p", { className: "summary" }, art.summary || ""),
      h("ul", { className: "legend" }, art.legend.map((l) => h("li", {}, swatch(l.color), `${l.label} (${l.count})`))), picked);
    if (art.findings.length) {
      side.appendChild(h("details", {}, h("summary", {}, `${art.findings.length} finding(s)`),
        h("ol", { className: "findings" }, art.findings.map((f) => h("li", { className: `finding ${f.status}`,
          onclick: () => { v.highlight(f.ids); if (f.ids.length) v.fit(f.ids); } }, h("strong", {}, f.title), h("pre", {}, f.text))))));
    }
    for (const note of art.notes) side.appendChild(h("p", { className: "muted note" }, note));
  };
  if (!Object.keys(ep.outcome || {}).length && !Object.keys(ep.artifacts || {}).length) {
    stage.classList.remove("stage", "small");
    stage.appendChild(h("p", { className: "muted" }, "no artefact: the episode ended without an outcome or files"));
  } else if (auto) await open();
  else stage.appendChild(h("button", { className: "open-3d", onclick: open }, "show the 3-D artefact"));
  card.dataset.loaded = "1";
}
