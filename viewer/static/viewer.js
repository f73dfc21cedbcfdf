// The viewer's only script: step through a trajectory, move between trajectories, label.
// Keys: ←/→ steps, j/k next/previous trajectory, s/f/u label (not while typing a note).
(function () {
  "use strict";
  const root = document.getElementById("trajectory");
  if (!root) return;
  const SVG = "http://www.w3.org/2000/svg";
  const dataNode = document.getElementById("steps-data");
  const steps = dataNode ? JSON.parse(dataNode.textContent) : [];
  let current = 0;

  function el(name, attrs, parent) {
    const node = document.createElementNS(SVG, name);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
    if (parent) parent.appendChild(node);
    return node;
  }

  function arrow(svg, x1, y1, x2, y2, cls) {
    el("line", { x1, y1, x2, y2, class: cls }, svg);
    const angle = Math.atan2(y2 - y1, x2 - x1), size = 18;
    const p = (a) => `${x2 - size * Math.cos(angle + a)},${y2 - size * Math.sin(angle + a)}`;
    el("polygon", { points: `${x2},${y2} ${p(0.45)} ${p(-0.45)}`, class: cls + " head" }, svg);
  }

  function drawAction(svg, step) {
    svg.replaceChildren();
    const t = step.target && step.target.box;
    // An element a variation injected (a decoy, a banner) is outlined in red: the agent acted on it, not on the app.
    if (t) el("rect", { x: t.x, y: t.y, width: t.width, height: t.height,
      class: step.target.injected ? "target-box injected" : "target-box" }, svg);
    const a = step.screen_action;
    if (!a) return;
    const p = a.point;
    if (p) {
      const ring = a.kind === "move" ? "ring move" : a.kind === "right_single" ? "ring right" : "ring";
      el("circle", { cx: p.x, cy: p.y, r: 16, class: ring }, svg);
      if (a.kind === "left_double") el("circle", { cx: p.x, cy: p.y, r: 24, class: ring }, svg);
      el("circle", { cx: p.x, cy: p.y, r: 3, class: "dot" }, svg);
    }
    if (a.kind === "drag" && a.end) arrow(svg, p.x, p.y, a.end.x, a.end.y, "drag");
    if (a.kind === "scroll" && p) {
      const v = { up: [0, -1], down: [0, 1], left: [-1, 0], right: [1, 0] }[a.direction] || [0, 1];
      arrow(svg, p.x, p.y, p.x + v[0] * 90, p.y + v[1] * 90, "scroll");
    }
    if (a.kind === "type" || a.kind === "hotkey") {
      const label = a.kind === "type" ? `type "${a.text}"` : `hotkey ${(a.keys || []).join("+")}`;
      const x = t ? t.x : 12, y = t ? Math.max(28, t.y - 8) : 32;
      el("text", { x, y, class: "typed" }, svg).textContent = label;
    }
  }

  function show(img, missing, url, name) {
    if (url) {
      if (img.getAttribute("src") !== url) img.src = url;
      img.classList.remove("hidden"); missing.classList.add("hidden");
    }
    else {
      img.removeAttribute("src"); img.classList.add("hidden");
      missing.textContent = name ? `${name}: the screenshot is missing` : "no screenshot for this step";
      missing.classList.remove("hidden");
    }
  }

  function row(body, key, value, cls) {
    if (value === undefined || value === null || value === "" || (Array.isArray(value) && !value.length)) return;
    const tr = document.createElement("tr");
    const th = document.createElement("th"); th.textContent = key;
    const td = document.createElement("td");
    if (cls) td.className = cls;
    if (typeof value === "object") { const pre = document.createElement("pre"); pre.textContent = JSON.stringify(value, null, 1); td.appendChild(pre); }
    else td.textContent = String(value);
    tr.append(th, td); body.appendChild(tr);
  }

  function yesNo(v) { return v === true ? "yes" : v === false ? "no" : "–"; }

  function render(index) {
    if (!steps.length) return;
    current = Math.max(0, Math.min(steps.length - 1, index));
    const step = steps[current];
    document.getElementById("step-title").textContent = step.initial
      ? `initial state (step 0 of ${steps.length - 1})` : `step ${step.index} of ${steps.length - 1}`;
    document.querySelectorAll("#step-dots button").forEach((b, i) => b.classList.toggle("current", i === current));
    const svg = document.getElementById("overlay");
    if (step.initial) {
      show(document.getElementById("before-img"), document.getElementById("before-missing"), step.after, step.after_name);
      document.getElementById("before-caption").textContent = "The page at load";
      svg.replaceChildren();
      show(document.getElementById("after-img"), document.getElementById("after-missing"), null, null);
    } else {
      show(document.getElementById("before-img"), document.getElementById("before-missing"), step.before, null);
      document.getElementById("before-caption").textContent = "What the agent saw, and where it acted";
      drawAction(svg, step);
      show(document.getElementById("after-img"), document.getElementById("after-missing"), step.after, step.after_name);
    }
    const body = document.querySelector("#step-details tbody");
    body.replaceChildren();
    if (step.initial) { row(body, "state", "the app as loaded, before any action"); return; }
    const sa = step.screen_action, ma = step.model_action;
    row(body, "action (screen px)", sa ? sa.describe : "none", "action");
    if (ma && ma.describe !== (sa && sa.describe)) row(body, "action (model space)", ma.describe);
    row(body, "thought", step.thought);
    row(body, "model reply", step.raw_text, "raw");
    if (step.target) row(body, "element under the pointer",
      `<${step.target.tag}${step.target.id ? " id=" + step.target.id : ""}> ${step.target.text || ""}` +
      (step.target.selector ? `  (${step.target.selector})` : ""));
    if (step.target && step.target.injected) row(body, "injected element",
      `${step.target.injected}: added by the variation, not the app's own`, "bad injected");
    row(body, "DOM changed", yesNo(step.dom_changed));
    row(body, "screen changed", yesNo(step.screen_changed));
    if ("checker_passed" in step) row(body, "checker after the step", step.checker_passed ? "true" : "false",
      step.checker_passed ? "good" : "");
    row(body, "checker error", step.checker_error, "bad");
    row(body, "error", step.error, "bad");
    row(body, "rejected replies", step.invalid_replies);
    row(body, "notes", step.notes);
    const t = step.timings;
    row(body, "timings (ms)", `model ${t.model_ms} · execute ${t.execute_ms} · settle ${t.settle_ms}` +
      (t.motion_ms ? ` (motion ${t.motion_ms})` : "") + ` · checker ${t.checker_ms} · screenshot ${t.screenshot_ms} · total ${t.total_ms}`);
    row(body, "tokens", `${step.tokens.prompt} prompt · ${step.tokens.completion} completion`);
    preloadNext();
  }

  // The next step's screenshot, fetched once the page has loaded (never holding up its load).
  function preloadNext() {
    const next = steps[current + 1];
    if (!next || !next.after) return;
    if (document.readyState !== "complete") { window.addEventListener("load", preloadNext, { once: true }); return; }
    const image = new Image();
    image.src = next.after;
  }

  async function label(value) {
    const note = document.getElementById("label-note").value;
    const response = await fetch(`/runs/${encodeURIComponent(root.dataset.run)}/labels`, {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ trajectory_id: root.dataset.trajectory, label: value, note }),
    });
    if (!response.ok) {
      document.getElementById("my-label").textContent = `Could not save the label (${response.status}).`;
      return;
    }
    location.reload();  // the page comes back with the verdict revealed and the label shown
  }

  document.querySelectorAll("#label-box button[data-label]").forEach((b) =>
    b.addEventListener("click", () => label(b.dataset.label)));
  document.querySelectorAll("#step-dots button").forEach((b) =>
    b.addEventListener("click", () => render(Number(b.dataset.step))));
  const prevStep = document.getElementById("step-prev"), nextStep = document.getElementById("step-next");
  if (prevStep) prevStep.addEventListener("click", () => render(current - 1));
  if (nextStep) nextStep.addEventListener("click", () => render(current + 1));

  document.addEventListener("keydown", (event) => {
    const tag = (event.target.tagName || "").toLowerCase();
    if (tag === "textarea" || tag === "input" || tag === "select" || event.ctrlKey || event.metaKey || event.altKey) return;
    const keys = {
      ArrowRight: () => render(current + 1), ArrowLeft: () => render(current - 1),
      j: () => root.dataset.next && (location.href = root.dataset.next),
      k: () => root.dataset.prev && (location.href = root.dataset.prev),
      s: () => label("success"), f: () => label("failure"), u: () => label("unsure"),
    };
    const action = keys[event.key];
    if (action) { event.preventDefault(); action(); }
  });

  const wanted = Number(new URLSearchParams(location.search).get("step"));
  render(Number.isFinite(wanted) && wanted > 0 ? wanted : (steps.length > 1 ? 1 : 0));
})();
