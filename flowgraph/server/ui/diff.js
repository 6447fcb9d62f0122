// What changed between two states: pure functions, no DOM (tests run them under node).
//
// Lists of messages are compared by message id (messages merge by id), so a message edited
// in place is one change, not a removal and an addition; other lists that only grew are
// "appended"; objects are compared key by key; anything else is a before -> after change.

export function isMessage(value) {
  return (
    value !== null &&
    typeof value === "object" &&
    !Array.isArray(value) &&
    typeof value.type === "string" &&
    "content" in value
  );
}

function isMessageList(value) {
  return Array.isArray(value) && value.every(isMessage);
}

/** The [field, messages] pairs of a state: every field holding a list of messages. */
export function messageFields(values) {
  if (!values || typeof values !== "object") return [];
  return Object.entries(values).filter(
    ([, value]) => Array.isArray(value) && value.length > 0 && isMessageList(value),
  );
}

export function countMessages(values) {
  return messageFields(values).reduce((total, [, list]) => total + list.length, 0);
}

export function deepEqual(a, b) {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === b.length && a.every((item, i) => deepEqual(item, b[i]));
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => Object.hasOwn(b, key) && deepEqual(a[key], b[key]));
}

function isPlainObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function join(path, key) {
  return path ? `${path}.${key}` : String(key);
}

function messageKey(message, index) {
  return message.id ? `id:${message.id}` : `at:${index}`;
}

function diffMessages(before, after, path, out) {
  const old = new Map(before.map((m, i) => [messageKey(m, i), m]));
  const now = new Map(after.map((m, i) => [messageKey(m, i), m]));
  const added = after.filter((m, i) => !old.has(messageKey(m, i)));
  const removed = before.filter((m, i) => !now.has(messageKey(m, i)));
  const changed = [];
  after.forEach((m, i) => {
    const key = messageKey(m, i);
    if (old.has(key) && !deepEqual(old.get(key), m)) changed.push([old.get(key), m]);
  });
  if (added.length || removed.length || changed.length) {
    out.push({ path, kind: "messages", added, removed, changed });
  }
}

function walk(before, after, path, out) {
  if (deepEqual(before, after)) return;
  if (before === undefined && Array.isArray(after) && after.length && isMessageList(after)) {
    diffMessages([], after, path, out);
  } else if (after === undefined && Array.isArray(before) && before.length && isMessageList(before)) {
    diffMessages(before, [], path, out);
  } else if (before === undefined) {
    out.push({ path, kind: "added", after });
  } else if (after === undefined) {
    out.push({ path, kind: "removed", before });
  } else if (
    Array.isArray(before) &&
    Array.isArray(after) &&
    isMessageList(before) &&
    isMessageList(after) &&
    before.length + after.length > 0
  ) {
    diffMessages(before, after, path, out);
  } else if (Array.isArray(before) && Array.isArray(after)) {
    const grew =
      after.length > before.length && before.every((item, i) => deepEqual(item, after[i]));
    if (grew) out.push({ path, kind: "appended", items: after.slice(before.length) });
    else out.push({ path, kind: "changed", before, after });
  } else if (isPlainObject(before) && isPlainObject(after)) {
    const keys = [...Object.keys(after), ...Object.keys(before).filter((k) => !(k in after))];
    for (const key of keys) walk(before[key], after[key], join(path, key), out);
  } else {
    out.push({ path, kind: "changed", before, after });
  }
}

/**
 * The changes from `before` to `after` (two states' values), in the order of `after`'s
 * fields. A missing `before` (the first checkpoint) counts as an empty state.
 */
export function diffValues(before, after) {
  const out = [];
  walk(before ?? {}, after ?? {}, "", out);
  return out;
}

/** A value in one short line (JSON, cut at `max` characters). */
export function brief(value, max = 60) {
  let text;
  if (isMessage(value)) text = messageLine(value);
  else if (typeof value === "string") text = JSON.stringify(value);
  else text = JSON.stringify(value) ?? String(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function messageLine(message) {
  const calls = (message.tool_calls ?? []).map((c) => `→ ${c.name}(${JSON.stringify(c.args ?? {})})`);
  const text = [contentText(message.content), ...calls].filter(Boolean).join(" ");
  return `${message.type}: ${text}`;
}

/** A message's content as plain text (text parts joined; other parts named). */
export function contentText(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return JSON.stringify(content);
  return content
    .map((part) => {
      if (typeof part === "string") return part;
      if (part && part.type === "text") return part.text ?? "";
      return `[${(part && part.type) || "part"}]`;
    })
    .join("");
}

function counted(list, word) {
  const kinds = {};
  for (const m of list) kinds[m.type] = (kinds[m.type] || 0) + 1;
  return Object.entries(kinds).map(([type, n]) => `${word}${n} ${type}`);
}

/** One change in one line, e.g. `messages: +1 ai`, `n: 0 → 1`, `steps: + "one"`. */
export function describe(change) {
  const where = change.path || "state";
  switch (change.kind) {
    case "added":
      return `${where}: added ${brief(change.after)}`;
    case "removed":
      return `${where}: removed (was ${brief(change.before)})`;
    case "appended":
      return `${where}: + ${change.items.map((item) => brief(item, 40)).join(", ")}`;
    case "messages": {
      const parts = [
        ...counted(change.added, "+"),
        ...counted(change.removed, "−"),
        ...(change.changed.length ? [`~${change.changed.length} edited`] : []),
      ];
      return `${where}: ${parts.join(", ")}`;
    }
    default:
      return `${where}: ${brief(change.before, 30)} → ${brief(change.after, 30)}`;
  }
}
