// The inspector page: threads, a thread's conversation, graph path and checkpoints, forks,
// interrupt answers, and runs followed live from the API's own SSE stream.

import { Api, ApiError, storeToken, storedToken } from "./api.js";
import { countMessages, describe, diffValues, messageFields } from "./diff.js";
import {
  changesView, conversation, h, headOf, jsonView, messageCard, shortId, statusBadge, time,
} from "./render.js";

const PAGE = 50;
const HISTORY = 200;
const POLL_MS = 3000;
const STREAM_MODES = ["values", "updates", "messages-tuple"];
const FINISHED = new Set(["success", "error", "interrupted", "timeout"]);

const $ = (id) => document.getElementById(id);

const app = {
  api: null,
  assistants: [],
  threads: [],
  limit: PAGE,
  selected: null, // thread id
  thread: null,
  state: null,
  history: [],
  checkpoint: null, // selected checkpoint id
  tab: "changes",
  live: null, // the run being followed: {threadId, runId, values, tokens}
  marked: null, // the graph node whose steps are marked in the checkpoints
  graphBusy: false,
  graphAgain: false,
};

// -- token --------------------------------------------------------------------------------

let tokenWaiters = [];

function askToken(detail) {
  const dialog = $("token-dialog");
  const error = $("token-error");
  error.hidden = !storedToken();
  error.textContent = detail;
  if (!dialog.open) dialog.showModal();
  $("token-input").focus();
  return new Promise((resolve) => tokenWaiters.push(resolve));
}

function onTokenSubmit(event) {
  event.preventDefault();
  const token = $("token-input").value.trim();
  if (!token) return;
  $("token-input").value = "";
  $("token-dialog").close();
  $("sign-out").hidden = false;
  const waiting = tokenWaiters;
  tokenWaiters = [];
  for (const resolve of waiting) resolve(token);
}

// -- errors -------------------------------------------------------------------------------

function showError(error) {
  const text = error instanceof ApiError ? `${error.detail} (HTTP ${error.status})` : String(error);
  $("error-text").textContent = text;
  $("error").hidden = false;
}

function guarded(fn) {
  return async (...args) => {
    try {
      await fn(...args);
    } catch (error) {
      showError(error);
    }
  };
}

// -- threads ------------------------------------------------------------------------------

async function loadThreads() {
  const status = $("status-filter").value;
  app.threads = await app.api.threads({ status, limit: app.limit + 1, offset: 0 });
  renderThreads();
  const current = app.threads.find((t) => t.thread_id === app.selected);
  if (current && app.thread && !app.live && changed(current, app.thread)) await refreshThread();
}

function changed(listed, shown) {
  return listed.status !== shown.status || listed.updated_at !== shown.updated_at;
}

function renderThreads() {
  const shown = app.threads.slice(0, app.limit);
  $("thread-list").replaceChildren(...shown.map((thread) => {
    const count = countMessages(thread.values);
    const graph = thread.metadata?.graph_id ?? "no graph yet";
    return h("li", {},
      h("button", {
        type: "button",
        class: `thread-item${thread.thread_id === app.selected ? " selected" : ""}`,
        dataset: { threadId: thread.thread_id },
        onclick: () => selectThread(thread.thread_id),
      },
      h("span", { class: "line" },
        h("code", { class: "thread-id", title: thread.thread_id }, shortId(thread.thread_id)),
        statusBadge(thread.status)),
      h("span", { class: "line muted small" },
        h("span", { class: "graph-id" }, graph), " · ",
        h("span", { class: "count" }, `${count} message${count === 1 ? "" : "s"}`), " · ",
        time(thread.updated_at))));
  }));
  $("thread-list-empty").hidden = shown.length > 0;
  $("more-threads").hidden = app.threads.length <= app.limit;
}

const selectThread = guarded(async (threadId) => {
  if (app.selected !== threadId) {
    if (app.live) app.live = null; // the run goes on; its stream is closed at its next event
    app.selected = threadId;
    app.checkpoint = null;
    app.marked = null;
    app.thread = null;
    app.state = null;
    $("live").hidden = true;
    $("graph").replaceChildren();
    history.replaceState(null, "", `#thread=${encodeURIComponent(threadId)}`);
  }
  renderThreads();
  $("no-thread").hidden = true;
  $("thread-view").hidden = false;
  await refreshThread();
});

async function refreshThread() {
  const threadId = app.selected;
  if (!threadId) return;
  const [thread, state, checkpoints] = await Promise.all([
    app.api.thread(threadId), app.api.state(threadId), app.api.history(threadId, HISTORY),
  ]);
  if (app.selected !== threadId) return; // another thread was picked meanwhile
  app.thread = thread;
  app.state = state;
  app.history = checkpoints;
  renderThreadHead();
  renderInterrupt();
  if (!app.live) renderConversation(state.values);
  renderCheckpoints();
  renderCheckpoint();
  refreshGraph();
  if (thread.status === "busy" && !app.live) followRunning(threadId);
}

function graphOf(thread) {
  const id = thread?.metadata?.graph_id;
  if (id) return id;
  return app.assistants.length === 1 ? app.assistants[0].graph_id : null;
}

function renderThreadHead() {
  const thread = app.thread;
  $("thread-title").replaceChildren(
    "Thread ", h("code", { title: thread.thread_id }, thread.thread_id));
  $("thread-status").replaceWith(
    Object.assign(statusBadge(thread.status), { id: "thread-status" }));
  const graph = graphOf(thread);
  $("thread-meta").replaceChildren(
    `graph ${graph ?? "none yet"} · created `, time(thread.created_at),
    " · updated ", time(thread.updated_at));
  const failure = thread.status === "error" ? thread.error : null;
  $("thread-error").hidden = !failure;
  $("thread-error").textContent = failure
    ? `The last run failed: ${failure.error ?? "Error"}: ${failure.message ?? ""}`
    : "";
}

// -- conversation -------------------------------------------------------------------------

function renderConversation(values, tokens = new Map()) {
  const fields = messageFields(values);
  const box = $("conversation");
  if (!fields.length && !tokens.size) {
    box.replaceChildren(h("p", { class: "muted" }, "No messages in this thread's state."));
    return;
  }
  const shownIds = new Set();
  const parts = fields.map(([field, messages]) => {
    messages.forEach((m) => shownIds.add(m.id));
    return h("div", { class: "field", dataset: { field } },
      fields.length > 1 ? h("h4", {}, field) : null, conversation(messages));
  });
  for (const [id, text] of tokens) {
    if (shownIds.has(id)) continue;
    const card = messageCard({ type: "ai", id, content: text });
    card.classList.add("streaming");
    parts.push(card);
  }
  box.replaceChildren(...parts);
}

/** What a run's input box means: JSON as given; other text as a human message. */
function runInput(text) {
  const trimmed = text.trim();
  if (!trimmed) return null;
  try {
    const parsed = JSON.parse(trimmed);
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) return parsed;
  } catch {
    // plain text: a message
  }
  const field = messageFields(app.state?.values)[0]?.[0] ?? "messages";
  return { [field]: [{ role: "user", content: text }] };
}

/** What an interrupt's answer box means: JSON when it parses, else the text itself. */
function resumeValue(text) {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

// -- interrupts ---------------------------------------------------------------------------

function questionOf(value) {
  if (typeof value === "string") return [value, null];
  if (value && typeof value === "object" && !Array.isArray(value)) {
    for (const key of ["question", "message", "prompt", "text"]) {
      if (typeof value[key] === "string") {
        const rest = { ...value };
        delete rest[key];
        return [value[key], Object.keys(rest).length ? rest : null];
      }
    }
  }
  return [null, value];
}

function renderInterrupt() {
  const interrupts = app.state?.interrupts ?? [];
  const panel = $("interrupt");
  panel.hidden = interrupts.length === 0 || app.thread.status === "busy";
  $("interrupt-questions").replaceChildren(...interrupts.map((item, index) => {
    const [question, details] = questionOf(item.value);
    return h("div", { class: "question", dataset: { interruptId: item.id } },
      question !== null ? h("p", { class: "question-text" }, question) : null,
      details !== null ? jsonView(details, 3) : null,
      h("textarea", {
        class: "answer",
        rows: 2,
        "aria-label": `Answer ${index + 1}`,
        dataset: { interruptId: item.id },
        placeholder: "Your answer",
      }));
  }));
}

const onResume = guarded(async (event) => {
  event.preventDefault();
  const boxes = [...$("interrupt-questions").querySelectorAll("textarea.answer")];
  if (!boxes.length) return;
  const resume = boxes.length === 1
    ? resumeValue(boxes[0].value)
    : Object.fromEntries(boxes.map((box) => [box.dataset.interruptId, resumeValue(box.value)]));
  await startRun({ command: { resume } }, app.state.values);
});

// -- runs, live ---------------------------------------------------------------------------

/** Start a run on the thread and follow it; `base` is the state it starts from. */
async function startRun(fields, base) {
  const threadId = app.selected;
  const assistant = graphOf(app.thread);
  if (!assistant) throw new Error("This thread has no graph yet: run it once from a client");
  const body = { assistant_id: assistant, stream_mode: STREAM_MODES, ...fields };
  await follow(threadId, app.api.streamRun(threadId, body), null, base);
}

async function followRunning(threadId) {
  try {
    const runs = await app.api.runs(threadId);
    const run = runs.find((r) => r.status === "running") ?? runs.find((r) => r.status === "pending");
    if (run && !app.live && app.selected === threadId) {
      await follow(threadId, app.api.joinRun(threadId, run.run_id), run.run_id);
    }
  } catch (error) {
    showError(error);
  }
}

function logLine(text, kind = "") {
  const log = $("live-log");
  log.append(h("li", { class: kind }, text));
  while (log.children.length > 200) log.firstElementChild.remove();
  log.scrollTop = log.scrollHeight;
}

function setLiveStatus(status) {
  $("live-status").replaceWith(Object.assign(statusBadge(status), { id: "live-status" }));
}

/**
 * Show a run's events as they come: a log line per event (a values event as what changed
 * since the one before, the first against `base` when given), the conversation as it grows.
 */
async function follow(threadId, stream, runId = null, base = null) {
  const live = { threadId, runId, values: base, tokens: new Map() };
  app.live = live;
  $("live").hidden = false;
  $("live").dataset.state = "running";
  $("live").dataset.followed = String(Number($("live").dataset.followed ?? 0) + 1);
  $("live-log").replaceChildren();
  $("live-run").textContent = runId ? shortId(runId) : "";
  setLiveStatus("running");
  if (app.thread) {
    app.thread.status = "busy";
    renderThreadHead();
    renderInterrupt(); // its question is answered, or about to change
  }
  let failed = false;
  try {
    for await (const event of stream) {
      if (app.live !== live) break;
      failed = onEvent(live, event) || failed;
    }
  } catch (error) {
    failed = true;
    logLine(`stream ended: ${error instanceof ApiError ? error.detail : error}`, "error");
  }
  if (app.live !== live) return;
  let status = failed ? "error" : "success";
  if (live.runId) status = await finalStatus(threadId, live.runId, status);
  app.live = null;
  if (app.selected === threadId) await guarded(refreshThread)();
  await guarded(loadThreads)();
  setLiveStatus(status);
  const waiting = app.selected === threadId && app.thread?.status === "interrupted";
  logLine(`run ended: ${status}${waiting ? " (the thread waits for an answer)" : ""}`, "end");
  $("live").dataset.state = "ended";
}

async function finalStatus(threadId, runId, fallback) {
  for (let i = 0; i < 20; i++) {
    try {
      const run = await app.api.run(threadId, runId);
      if (FINISHED.has(run.status)) return run.status;
    } catch {
      return fallback;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return fallback;
}

/** One SSE event of a followed run; true when it reports a failure. */
function onEvent(live, { event, data }) {
  const mode = event.split("|")[0];
  if (mode === "metadata") {
    live.runId = data.run_id;
    $("live-run").textContent = shortId(data.run_id);
    $("live-run").title = data.run_id;
    logLine(`started run ${shortId(data.run_id)}`);
  } else if (mode === "values") {
    const { __interrupt__: paused, ...values } = data;
    if (live.values === null) {
      const count = countMessages(values);
      logLine(`values · starting state: ${count} message${count === 1 ? "" : "s"}`);
    } else {
      for (const change of diffValues(live.values, values)) logLine(`values · ${describe(change)}`);
    }
    for (const item of paused ?? []) {
      logLine(`paused: ${questionOf(item.value)[0] ?? JSON.stringify(item.value)}`);
    }
    live.values = values;
    for (const [, messages] of messageFields(values)) {
      for (const m of messages) live.tokens.delete(m.id);
    }
    if (app.selected === live.threadId) {
      renderConversation(values, live.tokens);
      refreshGraph();
    }
  } else if (mode === "updates") {
    for (const [node, update] of Object.entries(data ?? {})) {
      if (node === "__interrupt__") continue;
      const keys = update && typeof update === "object" ? Object.keys(update) : [];
      logLine(`updates · ${node}${keys.length ? ` wrote ${keys.join(", ")}` : ""}`);
    }
  } else if (mode === "messages") {
    const [chunk] = Array.isArray(data) ? data : [];
    if (chunk && chunk.type === "AIMessageChunk" && chunk.content) {
      const key = chunk.id ?? "";
      if (!live.tokens.has(key)) logLine(`tokens · streaming ${headOf(key)}`);
      live.tokens.set(key, (live.tokens.get(key) ?? "") + chunk.content);
      if (app.selected === live.threadId) renderConversation(live.values, live.tokens);
    }
  } else if (mode === "error") {
    logLine(`error · ${data?.error ?? "Error"}: ${data?.message ?? JSON.stringify(data)}`, "error");
    return true;
  } else {
    logLine(event);
  }
  return false;
}

// -- graph --------------------------------------------------------------------------------

/** Redraw the thread's graph with its path; at most one request at a time. */
async function refreshGraph() {
  if (app.graphBusy) {
    app.graphAgain = true;
    return;
  }
  app.graphBusy = true;
  try {
    do {
      app.graphAgain = false;
      const threadId = app.selected;
      let svg;
      try {
        svg = await app.api.graphSvg(threadId);
      } catch (error) {
        if (!(error instanceof ApiError) || error.status !== 404) throw error;
        const graph = graphOf(app.thread); // no checkpoints yet: the graph alone, if known
        svg = graph ? await app.api.assistantSvg(graph) : null;
      }
      if (app.selected !== threadId) continue;
      if (svg === null) {
        $("graph").replaceChildren(
          h("p", { class: "muted" }, "No graph yet: no run has used this thread."));
      } else {
        showSvg(svg);
      }
    } while (app.graphAgain);
  } catch (error) {
    showError(error);
  } finally {
    app.graphBusy = false;
  }
}

function showSvg(text) {
  const parsed = new DOMParser().parseFromString(text, "image/svg+xml");
  const svg = parsed.documentElement;
  if (svg.nodeName !== "svg" || parsed.querySelector("parsererror")) {
    $("graph").replaceChildren(h("p", { class: "error-text" }, "The server's drawing did not parse"));
    return;
  }
  for (const el of svg.querySelectorAll("script, foreignObject")) el.remove();
  for (const el of [svg, ...svg.querySelectorAll("*")]) {
    for (const attr of [...el.attributes]) {
      if (/^on/i.test(attr.name)) el.removeAttribute(attr.name);
    }
  }
  const node = document.importNode(svg, true);
  node.removeAttribute("width");
  node.removeAttribute("height");
  for (const group of node.querySelectorAll("g.fg-node[data-node]")) {
    group.addEventListener("click", () => markNode(group.dataset.node));
  }
  $("graph").replaceChildren(node);
}

/** Clicking a node of the graph marks the checkpoints of the steps where it ran (again: off). */
function markNode(name) {
  app.marked = app.marked === name ? null : name;
  renderCheckpoints();
}

// -- checkpoints --------------------------------------------------------------------------

function renderCheckpoints() {
  const byId = new Map(app.history.map((s) => [s.checkpoint_id, s]));
  const children = new Map();
  const roots = [];
  for (const snapshot of app.history) {
    const parent = snapshot.parent_checkpoint_id;
    if (parent && byId.has(parent)) {
      if (!children.has(parent)) children.set(parent, []);
      children.get(parent).push(snapshot);
    } else {
      roots.push(snapshot);
    }
  }
  const byTime = (a, b) => Date.parse(a.created_at) - Date.parse(b.created_at)
    || String(a.checkpoint_id).localeCompare(String(b.checkpoint_id));
  for (const list of children.values()) list.sort(byTime);
  roots.sort(byTime);
  const head = new Set();
  for (let id = app.state?.checkpoint_id; id && byId.has(id); id = byId.get(id).parent_checkpoint_id) {
    head.add(id);
  }

  const chain = (start) => {
    const list = h("ol", { class: "chain" });
    for (let node = start; node;) {
      const item = h("li", {}, checkpointRow(node, head));
      list.append(item);
      const kids = children.get(node.checkpoint_id) ?? [];
      if (kids.length === 1) {
        node = kids[0];
        continue;
      }
      if (kids.length > 1) {
        item.append(h("ul", { class: "branches" }, kids.map((kid) =>
          h("li", { class: `branch${head.has(kid.checkpoint_id) ? " current" : ""}` },
            h("span", { class: "branch-label" },
              head.has(kid.checkpoint_id) ? "branch (current)" : "branch"),
            chain(kid)))));
      }
      node = null;
    }
    return list;
  };
  const box = $("checkpoints");
  if (!app.history.length) {
    box.replaceChildren(h("p", { class: "muted" }, "No checkpoints yet."));
    return;
  }
  const cut = app.history.length >= HISTORY
    ? h("p", { class: "muted small" }, `The newest ${HISTORY} checkpoints; older ones are not shown.`)
    : null;
  box.replaceChildren(...roots.map(chain), ...(cut ? [cut] : []));
}

function checkpointRow(snapshot, head) {
  const meta = snapshot.metadata ?? {};
  const nodes = (meta.nodes ?? []).filter((n) => n !== "__start__");
  const source = meta.source ?? "";
  const what = source === "input" ? "input"
    : source === "update" ? `update${nodes.length ? ` as ${nodes.join(", ")}` : ""}`
    : source === "fork" ? (nodes.length ? `${nodes.join(", ")} (fork)` : "fork input")
    : nodes.join(", ") || source;
  const id = snapshot.checkpoint_id;
  const classes = ["checkpoint-row", head.has(id) ? "on-head" : "off-branch"];
  if (id === app.checkpoint) classes.push("selected");
  if (app.marked && (meta.nodes ?? []).includes(app.marked)) classes.push("ran-node");
  return h("button", {
    type: "button",
    class: classes.join(" "),
    dataset: { checkpointId: id },
    title: id,
    onclick: () => {
      app.checkpoint = id;
      renderCheckpoints();
      renderCheckpoint();
    },
  },
  h("span", { class: "step" }, `step ${meta.step ?? "?"}`),
  h("span", { class: `source source-${source}` }, what),
  snapshot.next?.length ? h("span", { class: "next" }, `→ ${snapshot.next.join(", ")}`) : null,
  snapshot.interrupts?.length
    ? h("span", { class: "paused", title: "waiting for an answer" }, "paused")
    : null,
  id === app.state?.checkpoint_id ? h("span", { class: "head" }, "head") : null,
  h("span", { class: "id muted" }, shortId(id)));
}

function checkpointValues(id) {
  return app.history.find((s) => s.checkpoint_id === id)?.values ?? null;
}

function renderCheckpoint() {
  const snapshot = app.history.find((s) => s.checkpoint_id === app.checkpoint);
  $("checkpoint").hidden = !snapshot;
  if (!snapshot) return;
  const meta = snapshot.metadata ?? {};
  const parentId = snapshot.parent_checkpoint_id;
  const parent = app.history.find((s) => s.checkpoint_id === parentId);
  $("checkpoint-id").textContent = snapshot.checkpoint_id;
  const fact = (term, ...value) => [h("dt", {}, term), h("dd", {}, ...value)];
  $("checkpoint-facts").replaceChildren(
    ...fact("step", String(meta.step ?? "?")),
    ...fact("source", meta.source ?? "?"),
    ...fact("ran", (meta.nodes ?? []).join(", ") || "—"),
    ...fact("next", (snapshot.next ?? []).join(", ") || "nothing (the run ended here)"),
    ...fact("written", time(snapshot.created_at)),
    ...fact("run", meta.run_id ? h("code", { title: meta.run_id }, shortId(meta.run_id)) : "—"),
    ...fact("parent", parentId
      ? h("a", {
        href: "#",
        class: "parent-link",
        onclick: (event) => {
          event.preventDefault();
          app.checkpoint = parentId;
          renderCheckpoints();
          renderCheckpoint();
        },
      }, shortId(parentId))
      : "none (the first checkpoint)"),
  );
  const changes = parentId && !parent
    ? h("p", { class: "muted" }, "The parent checkpoint is older than the history loaded.")
    : changesView(diffValues(parent?.values, snapshot.values));
  $("tab-changes").replaceChildren(
    h("p", { class: "muted small" }, parent
      ? `Against step ${parent.metadata?.step ?? "?"} (${shortId(parentId)})`
      : "Against an empty state"),
    changes);
  $("tab-state").replaceChildren(jsonView(snapshot.values, 2));
  $("tab-metadata").replaceChildren(jsonView({ ...meta, interrupts: snapshot.interrupts }, 2));
  showTab(app.tab);
}

function showTab(name) {
  app.tab = name;
  for (const button of document.querySelectorAll(".tabs [role=tab]")) {
    button.setAttribute("aria-selected", String(button.dataset.tab === name));
  }
  for (const tab of ["changes", "state", "metadata"]) $(`tab-${tab}`).hidden = tab !== name;
}

const onFork = guarded(async (event) => {
  event.preventDefault();
  const input = runInput($("fork-input").value);
  $("fork-input").value = "";
  await startRun({ input, checkpoint_id: app.checkpoint }, checkpointValues(app.checkpoint));
});

const onReplay = guarded(async () => {
  await startRun({ input: null, checkpoint_id: app.checkpoint }, checkpointValues(app.checkpoint));
});

const onInput = guarded(async (event) => {
  event.preventDefault();
  const input = runInput($("input-text").value);
  if (input === null) return;
  $("input-text").value = "";
  await startRun({ input }, app.state.values);
});

// -- start --------------------------------------------------------------------------------

function apiBase() {
  // the API sits where /ui/ is mounted: "" at the root, "/prefix" behind a proxy path
  const at = location.pathname.lastIndexOf("/ui/");
  return at >= 0 ? location.pathname.slice(0, at) : "";
}

async function boot() {
  $("token-form").addEventListener("submit", onTokenSubmit);
  $("token-dialog").addEventListener("cancel", (event) => event.preventDefault());
  $("error-close").addEventListener("click", () => { $("error").hidden = true; });
  $("sign-out").hidden = !storedToken();
  $("sign-out").addEventListener("click", () => {
    storeToken("");
    location.reload();
  });
  $("refresh").addEventListener("click", guarded(loadThreads));
  $("status-filter").addEventListener("change", guarded(loadThreads));
  $("more-threads").addEventListener("click", guarded(async () => {
    app.limit += PAGE;
    await loadThreads();
  }));
  $("resume-form").addEventListener("submit", onResume);
  $("fork-form").addEventListener("submit", onFork);
  $("replay-button").addEventListener("click", onReplay);
  $("input-form").addEventListener("submit", onInput);
  for (const button of document.querySelectorAll(".tabs [role=tab]")) {
    button.addEventListener("click", () => showTab(button.dataset.tab));
  }

  app.api = new Api(apiBase(), askToken);
  const info = await app.api.info();
  $("server-info").textContent = `server ${info.version}`;
  app.assistants = await app.api.assistants();
  $("server-info").textContent +=
    ` · graphs: ${app.assistants.map((a) => a.graph_id).join(", ") || "none"}`;
  await loadThreads();
  const wanted = new URLSearchParams(location.hash.slice(1)).get("thread");
  if (wanted) await selectThread(wanted);
  setInterval(() => {
    if (document.visibilityState === "visible" && !tokenWaiters.length) guarded(loadThreads)();
  }, POLL_MS);
  document.body.dataset.ready = "true";
}

guarded(boot)();
