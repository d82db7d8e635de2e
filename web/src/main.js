// The viewer page: episode lists (sort, filter, page), the comparison of runs (compare.js), and
// one episode as its trajectory beside the 3-D artefact.
import { api } from "./api.js";
import { showCompare, showCompareTask } from "./compare.js";
import { clear, fmt, h } from "./dom.js";
import { figures, swatch, textBlock, turnCard } from "./parts.js";
import { ArtefactView } from "./viewer3d.js";

const app = document.getElementById("app");
const statusLine = document.getElementById("status");
let runs = [];
let currentView = null;
const listState = new Map(); // run id -> query

function setStatus(text) { statusLine.textContent = text || ""; }

function showError(err) {
  clear(app);
  app.appendChild(h("p", { className: "error", id: "error" }, `error: ${err.message || err}`));
}

function route() {
  if (currentView) { currentView.dispose(); currentView = null; }
  const hash = decodeURIComponent(location.hash.replace(/^#\/?/, ""));
  const parts = hash.split("/");
  document.body.dataset.page = parts[0] || "episodes";
  if (parts[0] === "compare" && parts.length > 2) {
    const views = [];
    currentView = { dispose: () => views.splice(0).forEach((v) => v.dispose()) };
    return showCompareTask(app, setStatus, parts[1], parts.slice(2).join("/"), views).catch(showError);
  }
  if (parts[0] === "compare") return showCompare(app, setStatus).catch(showError);
  if (parts[0] === "run" && parts[2] === "episode") {
    const sample = Number(parts[parts.length - 1]);
    const task = parts.slice(3, -1).join("/");
    return showEpisode(Number(parts[1]), task, sample).catch(showError);
  }
  const run = parts[0] === "run" ? Number(parts[1]) : 0;
  return showList(run).catch(showError);
}

// ---- episode list --------------------------------------------------------------------
function defaultQuery() {
  return { offset: 0, limit: 50, sort: "task", order: "asc", q: "", status: "", metric: "", min: "", max: "" };
}

async function showList(runId) {
  const run = runs[runId];
  if (!run) throw new Error(`no run ${runId}`);
  const query = listState.get(runId) || defaultQuery();
  listState.set(runId, query);
  clear(app);
  const picker = h("select", { id: "run-select", onchange: (e) => { location.hash = `#/run/${e.target.value}`; } },
    runs.map((r) => h("option", { value: r.id, selected: r.id === runId }, `${r.id}: ${r.name} (${r.suite})`)));
  // The table is drawn from the first page alone; the full list of metric names (a scan of
  // the whole run) only fills the filter's menu, so it is fetched alongside, not waited for.
  const first = await api.page(runId, query);
  const seen = [...new Set(first.rows.flatMap((r) => Object.keys(r.metrics || {})))];
  const headline = run.headline.filter((m) => seen.includes(m));
  const shown = headline.length ? headline : seen.slice(0, 5);
  const info = h("p", { className: "run-info" },
    `${run.suite} · agent ${run.agent} · protocol ${run.protocol}${run.model ? ` · model ${run.model}` : ""} · ` +
    `${run.episodes} episode(s) · ` + Object.entries(run.status).map(([k, v]) => `${k}: ${v}`).join(", "));
  const text = h("input", { id: "filter-text", type: "search", placeholder: "task id contains…", value: query.q });
  const status = h("select", { id: "filter-status" }, h("option", { value: "" }, "any status"),
    Object.keys(run.status).map((s) => h("option", { value: s, selected: s === query.status }, s)));
  const metric = h("select", { id: "filter-metric" }, h("option", { value: "" }, "metric…"),
    seen.map((m) => h("option", { value: m, selected: m === query.metric }, m)));
  api.metrics(runId).then(({ metrics }) => {
    for (const m of metrics.filter((k) => !seen.includes(k))) metric.appendChild(h("option", { value: m }, m));
  }).catch(() => {});
  const lo = h("input", { id: "filter-min", type: "number", step: "any", placeholder: "min", value: query.min });
  const hi = h("input", { id: "filter-max", type: "number", step: "any", placeholder: "max", value: query.max });
  const apply = () => {
    Object.assign(query, { q: text.value, status: status.value, metric: metric.value, min: lo.value, max: hi.value, offset: 0 });
    load();
  };
  const form = h("form", { className: "filters", onsubmit: (e) => { e.preventDefault(); apply(); } },
    text, status, metric, lo, hi, h("button", { type: "submit", id: "filter-apply" }, "Filter"));
  const table = h("table", { id: "episodes", className: "grid" });
  const pager = h("div", { className: "pager", id: "pager" });
  app.append(h("section", { className: "list" }, h("div", { className: "row" }, h("label", {}, "Run ", picker)), info, form, table, pager));

  const columns = [["task", "task"], ["sample", "sample"], ["status", "status"],
    ...shown.map((m) => [`metric:${m}`, m]), ["duration", "time (s)"]];
  async function load(ready = null) {
    setStatus("loading…");
    const t0 = performance.now();
    const page = ready || await api.page(runId, query);
    setStatus(`${page.total} episode(s) match · page in ${Math.round(performance.now() - t0)} ms`);
    clear(table);
    table.appendChild(h("thead", {}, h("tr", {}, columns.map(([key, label]) => {
      const arrow = query.sort === key ? (query.order === "asc" ? " ▲" : " ▼") : "";
      return h("th", { className: "sortable", dataset: { sort: key }, onclick: () => {
        query.order = query.sort === key && query.order === "asc" ? "desc" : "asc";
        query.sort = key; query.offset = 0; load();
      } }, label + arrow);
    }))));
    const body = h("tbody");
    for (const row of page.rows) {
      const href = `#/run/${runId}/episode/${encodeURIComponent(row.task_id)}/${row.sample}`;
      body.appendChild(h("tr", { className: `status-${row.status}`, title: row.error || "" },
        h("td", {}, h("a", { href, className: "episode-link" }, row.task_id)),
        h("td", {}, row.sample),
        h("td", {}, h("span", { className: `badge ${row.status}` }, row.status)),
        shown.map((m) => h("td", { className: "num" }, row.scored ? fmt(row.metrics[m]) : "–")),
        h("td", { className: "num" }, fmt(row.duration_s))));
    }
    if (!page.rows.length) body.appendChild(h("tr", {}, h("td", { colspan: columns.length }, "no episode matches")));
    table.appendChild(body);
    clear(pager);
    const last = Math.max(0, Math.ceil(page.total / query.limit) - 1);
    const pageNo = Math.floor(query.offset / query.limit);
    pager.append(
      h("button", { id: "prev", disabled: pageNo <= 0, onclick: () => { query.offset -= query.limit; load(); } }, "← previous"),
      h("span", {}, ` page ${pageNo + 1} of ${last + 1} `),
      h("button", { id: "next", disabled: pageNo >= last, onclick: () => { query.offset += query.limit; load(); } }, "next →"));
  }
  await load(first);
}

// ---- one episode ---------------------------------------------------------------------
async function showEpisode(runId, task, sample) {
  clear(app);
  setStatus("loading episode…");
  const ep = await api.episode(runId, task, sample);
  const run = runs[runId];
  const title = h("h2", { id: "episode-title" }, `${ep.task_id} · sample ${ep.sample}`);
  const meta = h("p", { className: "run-info" }, h("a", { href: `#/run/${runId}` }, `← ${run.name}`),
    ` · ${ep.suite} · agent ${ep.agent} · protocol ${ep.protocol} · status `,
    h("span", { className: `badge ${ep.status}` }, ep.status), ` · ${fmt(ep.duration_s)} s`);
  const left = h("div", { className: "trajectory", id: "trajectory" });
  if (ep.error) left.appendChild(textBlock("error", ep.error, "error"));
  if (ep.task) {
    const first = figures(ep.first_images);
    left.appendChild(h("article", { className: "turn task", id: "task" }, h("header", {}, h("strong", {}, "task (the first prompt)")),
      Object.entries(ep.task.inputs).map(([k, v]) => textBlock(k, v)),
      Object.keys(ep.task.metadata).length ? textBlock("metadata", JSON.stringify(ep.task.metadata)) : null,
      first.length ? h("div", { className: "images" }, h("div", { className: "label" }, "images the model saw first"), first) : null,
      ep.first_images_problem ? h("p", { className: "muted" }, ep.first_images_problem) : null));
  } else if (ep.task_problem) {
    left.appendChild(h("p", { className: "muted" }, ep.task_problem));
  }
  ep.steps.forEach((step, i) => left.appendChild(turnCard(step, i)));
  const scores = h("table", { className: "grid metrics", id: "metrics" }, h("tbody", {},
    Object.entries(ep.metrics).map(([k, v]) => h("tr", {}, h("th", {}, k), h("td", { className: "num" }, fmt(v))))));
  left.appendChild(h("details", { open: true }, h("summary", {}, "scores"), scores));
  left.appendChild(h("details", {}, h("summary", {}, "outcome (JSON)"), h("pre", { className: "outcome" },
    JSON.stringify(ep.outcome, null, 2).slice(0, 200000))));

  const stage = h("div", { className: "stage", id: "stage" });
  const side = h("div", { className: "artefact-side" });
  const right = h("div", { className: "artefact", id: "artefact" }, h("div", { className: "label" }, "artefact"), stage, side);
  app.append(h("section", { className: "episode" }, title, meta, h("div", { className: "split" }, left, right)));
  setStatus("building the 3-D view…");
  const art = await api.artefact(runId, task, sample);
  setStatus("");
  const picked = h("p", { className: "picked", id: "picked" }, "click an element to name it");
  currentView = new ArtefactView(stage, art, { onPick: (id, label) => {
    picked.textContent = label || id;
    currentView.highlight([id]);
  } });
  stage.dataset.ready = "1";
  side.append(h("p", { className: "summary", id: "artefact-summary" }, art.summary || ""));
  side.appendChild(h("ul", { className: "legend", id: "legend" }, art.legend.map((l) =>
    h("li", {}, swatch(l.color), `${l.label} (${l.count})`))));
  if (art.animation) side.appendChild(playback(art.animation));
  side.appendChild(picked);
  if (art.findings.length) {
    side.appendChild(h("ol", { className: "findings", id: "findings" }, art.findings.map((f) =>
      h("li", { className: `finding ${f.status}`, onclick: () => { currentView.highlight(f.ids); if (f.ids.length) currentView.fit(f.ids); } },
        h("strong", {}, f.title), h("pre", {}, f.text)))));
  }
  side.append(h("button", { id: "reset-view", onclick: () => { currentView.highlight([]); currentView.fit(); } }, "reset view"));
  for (const note of art.notes) side.appendChild(h("p", { className: "muted note" }, note));
}

function playback(anim) {
  const n = anim.times.length;
  const slider = h("input", { type: "range", min: 0, max: n - 1, value: 0, id: "time-slider" });
  const label = h("span", { id: "time-label" }, `t = ${anim.times[0].toFixed(2)} s`);
  let timer = null;
  const follow = h("input", { type: "checkbox", id: "follow", checked: true });
  const show = (k) => {
    slider.value = k;
    label.textContent = `t = ${anim.times[k].toFixed(2)} s`;
    currentView.showFrame(k, follow.checked);
  };
  slider.addEventListener("input", () => show(Number(slider.value)));
  const play = h("button", { id: "play", onclick: () => {
    if (timer) { clearInterval(timer); timer = null; play.textContent = "▶ play"; return; }
    play.textContent = "❚❚ pause";
    const step = (anim.times[n - 1] - anim.times[0]) / Math.max(n - 1, 1);
    timer = setInterval(() => {
      const k = (Number(slider.value) + 1) % n;
      show(k);
      if (k === n - 1) { clearInterval(timer); timer = null; play.textContent = "▶ play"; }
    }, Math.max(16, step * 1000));
  } }, "▶ play");
  return h("div", { className: "playback" }, h("div", { className: "label" }, "simulated trajectory"), play, slider, label,
    h("label", {}, follow, " camera follows"));
}

async function start() {
  try {
    runs = (await api.runs()).runs;
  } catch (err) {
    showError(err);
    return;
  }
  window.addEventListener("hashchange", route);
  await route();
}

start();
