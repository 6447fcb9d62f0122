// DOM pieces: messages, JSON values, changes, times. Text always goes in as text (never
// as markup), so whatever a thread holds is shown, not run.

import { brief, contentText, isMessage } from "./diff.js";

/** An element: h("div", {class: "x", onclick: fn}, child, "text", ...). */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (value === true) el.setAttribute(key, "");
    else el.setAttribute(key, String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** The last 8 characters: where UUIDv7 and checkpoint ids differ from their neighbours. */
export function shortId(id) {
  return id ? String(id).slice(-8) : "—";
}

/** The first 12 characters: where message ids (a hash, then positions) differ. */
export function headOf(id) {
  if (!id) return "";
  return id.length > 13 ? `${id.slice(0, 12)}…` : id;
}

/** "12 s ago", "3 min ago", ... (the exact time is in the element's title). */
export function ago(iso, now = Date.now()) {
  if (!iso) return "never";
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.round(seconds / 3600)} h ago`;
  return `${Math.round(seconds / 86400)} d ago`;
}

export function time(iso) {
  return h("time", { datetime: iso, title: iso }, ago(iso));
}

export function statusBadge(status) {
  return h("span", { class: `status status-${status}` }, status);
}

// -- JSON -------------------------------------------------------------------------------

/** A value as an expandable tree: objects and lists fold, messages show as one line. */
export function jsonView(value, open = 1) {
  if (value === null || typeof value !== "object") {
    return h("span", { class: `json json-${value === null ? "null" : typeof value}` },
      JSON.stringify(value) ?? String(value));
  }
  const entries = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  if (!entries.length) return h("span", { class: "json" }, Array.isArray(value) ? "[]" : "{}");
  const label = isMessage(value)
    ? brief(value, 80)
    : Array.isArray(value) ? `[${entries.length}]` : `{${entries.length}}`;
  return h("details", { class: "json-node", open: open > 0 },
    h("summary", {}, label),
    h("ul", {}, entries.map(([key, item]) =>
      h("li", {}, h("span", { class: "json-key" }, `${key}: `), jsonView(item, open - 1)))));
}

// -- messages ---------------------------------------------------------------------------

const ROLES = { human: "Human", ai: "AI", tool: "Tool", system: "System" };

function roleOf(message) {
  const type = message.type === "AIMessageChunk" ? "ai" : message.type;
  return ROLES[type] ? type : "other";
}

function contentNode(content) {
  if (typeof content === "string") return h("div", { class: "text" }, content);
  if (!Array.isArray(content)) return jsonView(content);
  return h("div", { class: "text" }, content.map((part) => {
    if (typeof part === "string") return part;
    if (part && part.type === "text") return part.text ?? "";
    // images and files are named, not loaded: the page fetches nothing from elsewhere
    return h("span", { class: "part" }, `[${(part && part.type) || "part"}]`);
  }));
}

/**
 * One message as a card: who, what, and for an AI message its tool calls, each linked to
 * the tool message answering it (and back). `answered` maps tool call id -> tool message.
 */
export function messageCard(message, answered = new Map(), linked = true) {
  const role = roleOf(message);
  const card = h("article", {
    class: `message message-${role}`,
    dataset: { messageId: message.id ?? "", role },
  });
  card.append(h("header", {},
    h("span", { class: "role" }, ROLES[role] ?? message.type),
    message.name ? h("span", { class: "name" }, message.name) : null,
    role === "tool" ? toolLink(message, linked) : null,
    h("span", { class: "id", title: message.id ?? "" }, headOf(message.id))));
  const extra = message.additional_kwargs || {};
  if (extra.reasoning_content) {
    card.append(h("details", { class: "reasoning" }, h("summary", {}, "reasoning"),
      h("div", { class: "text" }, extra.reasoning_content)));
  }
  if (contentText(message.content) !== "" || typeof message.content !== "string") {
    card.append(contentNode(message.content));
  }
  for (const call of message.tool_calls || []) card.append(toolCall(call, answered, linked));
  for (const call of message.invalid_tool_calls || []) {
    card.append(h("div", { class: "tool-call invalid" },
      h("span", { class: "call-name" }, `${call.name ?? "?"} (invalid)`),
      h("code", {}, String(call.args ?? "")), h("span", { class: "error-text" }, call.error ?? "")));
  }
  if (role === "tool" && message.status === "error") card.classList.add("message-error");
  const usage = message.usage_metadata;
  if (usage) {
    card.append(h("footer", { class: "usage" },
      `${usage.input_tokens ?? 0} in · ${usage.output_tokens ?? 0} out tokens`));
  }
  return card;
}

function toolCall(call, answered, linked) {
  const result = linked ? answered.get(call.id) : null;
  return h("div", { class: "tool-call", dataset: { toolCallId: call.id ?? "" } },
    h("span", { class: "call-name" }, `→ ${call.name}`),
    h("code", { class: "call-args" }, JSON.stringify(call.args ?? {})),
    result
      ? h("a", { href: "#", class: "jump", dataset: { jump: `result:${call.id}` } }, "result ↓")
      : h("span", { class: "muted" }, linked ? "no result yet" : ""));
}

function toolLink(message, linked) {
  const text = `↑ answers ${shortId(message.tool_call_id)}`;
  if (!linked) return h("span", { class: "muted" }, text);
  return h("a", { href: "#", class: "jump", dataset: { jump: `call:${message.tool_call_id}` } },
    text);
}

/** A list of messages as cards, tool calls and results linked both ways. */
export function conversation(messages) {
  const answered = new Map();
  for (const m of messages) if (m.type === "tool" && m.tool_call_id) answered.set(m.tool_call_id, m);
  const list = h("div", { class: "messages" }, messages.map((m) => messageCard(m, answered)));
  list.addEventListener("click", (event) => {
    const link = event.target.closest("a.jump");
    if (!link) return;
    event.preventDefault();
    const [kind, id] = splitOnce(link.dataset.jump, ":");
    const target = kind === "call"
      ? [...list.querySelectorAll(".tool-call")].find((el) => el.dataset.toolCallId === id)
      : [...list.querySelectorAll(".message-tool")].find(
        (el) => messages.find((m) => m.id === el.dataset.messageId)?.tool_call_id === id);
    if (target) flash(target);
  });
  return list;
}

function splitOnce(text, sep) {
  const at = text.indexOf(sep);
  return at < 0 ? [text, ""] : [text.slice(0, at), text.slice(at + 1)];
}

export function flash(el) {
  el.scrollIntoView({ block: "nearest", behavior: "smooth" });
  el.classList.remove("flash");
  void el.offsetWidth; // restart the animation
  el.classList.add("flash");
}

// -- changes ----------------------------------------------------------------------------

/** The changes of `diffValues` as a list: messages as cards, values before -> after. */
export function changesView(changes) {
  const card = (message) => messageCard(message, new Map(), false); // links: the conversation's
  if (!changes.length) return h("p", { class: "muted" }, "Nothing changed in the state.");
  return h("ul", { class: "changes" }, changes.map((change) => {
    const where = h("code", { class: "path" }, change.path || "state");
    switch (change.kind) {
      case "messages":
        return h("li", { class: "change change-messages" }, where,
          change.added.map((m) => h("div", { class: "added" }, "+ ", card(m))),
          change.removed.map((m) => h("div", { class: "removed" }, "− ", card(m))),
          change.changed.map(([before, after]) => h("div", { class: "edited" },
            "~ ", card(before), "→", card(after))));
      case "appended":
        return h("li", { class: "change change-appended" }, where, " + ",
          change.items.map((item) => h("span", { class: "added" }, jsonView(item, 0), " ")));
      case "added":
        return h("li", { class: "change change-added" }, where, " added ",
          h("span", { class: "added" }, jsonView(change.after, 0)));
      case "removed":
        return h("li", { class: "change change-removed" }, where, " removed ",
          h("span", { class: "removed" }, jsonView(change.before, 0)));
      default:
        return h("li", { class: "change change-changed" }, where, " ",
          h("span", { class: "removed" }, jsonView(change.before, 0)), " → ",
          h("span", { class: "added" }, jsonView(change.after, 0)));
    }
  }));
}
