// Data access: the live server's JSON API, or the files of a static export
// (`buildbench view --static OUT`), which pages, sorts and filters in the browser.

const STATIC = document.querySelector('meta[name="bb-mode"]')?.getAttribute("content") === "static";

async function getJSON(url) {
  const res = await fetch(url);
  const body = await res.json().catch(() => ({ error: `HTTP ${res.status}` }));
  if (!res.ok) throw new Error(body.error || `HTTP ${res.status}`);
  return body;
}

// Static data files are scripts calling window.__bbData(key, value), so an export opened
// straight from disk (file://) works where fetch() of local files is refused.
const pending = new Map();
window.__bbData = (key, value) => {
  const waiter = pending.get(key);
  if (waiter) { pending.delete(key); waiter.resolve(value); }
};
const loaded = new Map();
function loadStatic(key) {
  if (loaded.has(key)) return loaded.get(key);
  const promise = new Promise((resolve, reject) => {
    pending.set(key, { resolve, reject });
    const script = document.createElement("script");
    script.src = `data/${key}.js`;
    script.onerror = () => { pending.delete(key); reject(new Error(`missing data file data/${key}.js`)); };
    script.onload = () => script.remove();
    document.head.appendChild(script);
  });
  loaded.set(key, promise);
  return promise;
}

function metricOf(row, key) {
  const v = row.metrics ? row.metrics[key] : undefined;
  return typeof v === "number" ? v : null;
}

function pageLocally(rows, q) {
  let kept = rows.filter((r) =>
    (!q.q || r.task_id.toLowerCase().includes(q.q.toLowerCase())) &&
    (!q.status || r.status === q.status));
  if (q.metric && (q.min !== "" || q.max !== "")) {
    kept = kept.filter((r) => {
      const v = metricOf(r, q.metric);
      if (v === null) return false;
      return (q.min === "" || v >= Number(q.min)) && (q.max === "" || v <= Number(q.max));
    });
  }
  const columns = { task: "task_id", sample: "sample", status: "status", duration: "duration_s", finished: "finished_at" };
  const sign = q.order === "desc" ? -1 : 1;
  const key = (r) => q.sort.startsWith("metric:") ? metricOf(r, q.sort.slice(7)) : r[columns[q.sort] || "task_id"];
  kept = kept.slice().sort((a, b) => {
    const ka = key(a), kb = key(b);
    if (ka === null && kb !== null) return 1;
    if (kb === null && ka !== null) return -1;
    if (ka < kb) return -sign;
    if (ka > kb) return sign;
    return a.task_id < b.task_id ? -1 : a.task_id > b.task_id ? 1 : a.sample - b.sample;
  });
  const offset = Number(q.offset) || 0, limit = Number(q.limit) || 50;
  return { total: kept.length, offset, limit, rows: kept.slice(offset, offset + limit) };
}

async function staticFile(run, task, sample, kind) {
  const rows = await loadStatic(`run-${run}/rows`);
  const row = rows.find((r) => r.task_id === task && r.sample === sample);
  if (!row) throw new Error(`no episode ${task} sample ${sample} in run ${run}`);
  return loadStatic(`run-${run}/${kind}-${row.file}`);
}

export const api = {
  isStatic: STATIC,
  runs: () => (STATIC ? loadStatic("runs") : getJSON("api/runs")),
  compare: () => (STATIC ? loadStatic("compare") : getJSON("api/compare")),
  metrics: (run) => (STATIC ? loadStatic(`run-${run}/metrics`) : getJSON(`api/runs/${run}/metrics`)),
  page: async (run, q) => {
    if (STATIC) return pageLocally(await loadStatic(`run-${run}/rows`), q);
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(q)) if (v !== "" && v !== null && v !== undefined) params.set(k, v);
    return getJSON(`api/runs/${run}/episodes?${params}`);
  },
  episode: (run, task, sample) => (STATIC ? staticFile(run, task, sample, "ep")
    : getJSON(`api/runs/${run}/episode?task=${encodeURIComponent(task)}&sample=${sample}`)),
  artefact: (run, task, sample) => (STATIC ? staticFile(run, task, sample, "art")
    : getJSON(`api/runs/${run}/artefact?task=${encodeURIComponent(task)}&sample=${sample}`)),
};
