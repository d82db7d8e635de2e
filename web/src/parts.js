// Pieces of an episode shared by the episode page and the side-by-side comparison: text
// blocks, images, one turn of a trajectory, colour swatches.
import { fmt, h } from "./dom.js";

export function textBlock(label, text, className = "") {
  if (text === null || text === undefined || text === "") return null;
  return h("div", { className: `block ${className}` }, h("div", { className: "label" }, label), h("pre", {}, String(text)));
}

export function figures(images) {
  return (images || []).map((img) => img.url
    ? h("figure", {}, h("img", { src: img.url, alt: img.path, loading: "lazy" }), h("figcaption", {}, img.path))
    : h("p", { className: "muted" }, `image not available: ${img.path}`));
}

// `withId` is false where several trajectories share the page (ids must stay unique).
export function turnCard(step, index, withId = true) {
  const calls = (step.tool_calls || []).map((c) => h("div", { className: "tool-call" },
    h("div", { className: "label" }, `tool call ${c.name || "?"}${c.id ? ` (${c.id})` : ""}`),
    h("pre", {}, typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments, null, 2))));
  const images = figures(step.images);
  const flags = [step.terminated && "terminated", step.truncated && "truncated"].filter(Boolean).join(", ");
  return h("article", { className: "turn", id: withId ? `turn-${index}` : null },
    h("header", {}, h("strong", {}, `turn ${step.index}`), ` · ${step.role}`, ` · reward ${fmt(step.reward)}`,
      flags ? ` · ${flags}` : "", step.duration_s ? ` · ${fmt(step.duration_s)} s` : ""),
    textBlock("reply", step.action_text, "reply"), calls,
    textBlock("feedback (shown to the model next)", step.observation_text, "feedback"),
    images.length ? h("div", { className: "images" }, h("div", { className: "label" }, "images the model saw"), images) : null,
    Object.keys(step.info || {}).length ? h("details", {}, h("summary", {}, "step info"),
      h("pre", {}, JSON.stringify(step.info, null, 2))) : null);
}

// Colours are set through the DOM, not a style attribute, which the page's CSP refuses.
export function swatch(color, className = "swatch") {
  const el = h("span", { className });
  el.style.backgroundColor = color;
  return el;
}
