// The API as the inspector calls it: JSON requests with the token as a header, SSE streams.
//
// The token lives in this tab's sessionStorage and travels only in the x-api-key header,
// never in a URL (URLs end up in logs and histories). A 401 asks the page for the token
// (through `onUnauthorized`) and retries once.

const TOKEN_KEY = "flowgraph.inspector.token";

export class ApiError extends Error {
  constructor(status, detail) {
    super(detail);
    this.status = status;
    this.detail = detail;
  }
}

export function storedToken() {
  try {
    return sessionStorage.getItem(TOKEN_KEY) || "";
  } catch {
    return "";
  }
}

export function storeToken(token) {
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
}

export class Api {
  constructor(base, onUnauthorized) {
    this.base = base; // the server's root, e.g. "" for the page's own origin
    this.onUnauthorized = onUnauthorized; // async (detail) => token, or null to give up
  }

  headers(extra) {
    const headers = { ...extra };
    const token = storedToken();
    if (token) headers["x-api-key"] = token;
    return headers;
  }

  async fetch(method, path, body, accept = "application/json") {
    for (let attempt = 0; ; attempt++) {
      const init = { method, headers: this.headers({ accept }) };
      if (body !== undefined) {
        init.headers["content-type"] = "application/json";
        init.body = JSON.stringify(body);
      }
      const response = await fetch(this.base + path, init);
      if (response.status === 401 && attempt < 100) { // the user may mistype it
        const detail = await errorDetail(response);
        const token = await this.onUnauthorized(detail);
        if (token === null) throw new ApiError(401, detail);
        storeToken(token);
        continue;
      }
      if (!response.ok) throw new ApiError(response.status, await errorDetail(response));
      return response;
    }
  }

  async json(method, path, body) {
    const response = await this.fetch(method, path, body);
    if (response.status === 204 || response.status === 202) return null;
    const text = await response.text();
    return text.trim() ? JSON.parse(text) : null;
  }

  async text(path, accept) {
    return (await this.fetch("GET", path, undefined, accept)).text();
  }

  // -- the calls the inspector makes -------------------------------------------------

  info() {
    return this.json("GET", "/info");
  }

  assistants() {
    return this.json("POST", "/assistants/search", { limit: 1000 });
  }

  threads({ status, limit, offset }) {
    const body = { limit, offset, sort_by: "updated_at", sort_order: "desc" };
    if (status) body.status = status;
    return this.json("POST", "/threads/search", body);
  }

  thread(id) {
    return this.json("GET", `/threads/${enc(id)}`);
  }

  state(id) {
    return this.json("GET", `/threads/${enc(id)}/state`);
  }

  history(id, limit = 200) {
    return this.json("POST", `/threads/${enc(id)}/history`, { limit });
  }

  runs(id) {
    return this.json("GET", `/threads/${enc(id)}/runs?limit=100`);
  }

  run(threadId, runId) {
    return this.json("GET", `/threads/${enc(threadId)}/runs/${enc(runId)}`);
  }

  graphSvg(id) {
    return this.text(`/threads/${enc(id)}/graph?format=svg`, "image/svg+xml");
  }

  assistantSvg(assistantId) {
    return this.text(`/assistants/${enc(assistantId)}/graph?format=svg`, "image/svg+xml");
  }

  /** Start a run and read its SSE stream: yields {event, data, id}. */
  async *streamRun(threadId, body) {
    const response = await this.fetch(
      "POST", `/threads/${enc(threadId)}/runs/stream`, body, "text/event-stream",
    );
    yield* readSse(response.body);
  }

  /** Follow a run already going (from its first event on, as join_stream replays it). */
  async *joinRun(threadId, runId) {
    const response = await this.fetch(
      "GET", `/threads/${enc(threadId)}/runs/${enc(runId)}/stream`, undefined, "text/event-stream",
    );
    yield* readSse(response.body);
  }
}

function enc(part) {
  return encodeURIComponent(part);
}

async function errorDetail(response) {
  const text = await response.text();
  try {
    const parsed = JSON.parse(text);
    if (parsed && typeof parsed.detail === "string") return parsed.detail;
  } catch {
    // not JSON: the text itself says what went wrong
  }
  return text || `HTTP ${response.status}`;
}

/**
 * Server-sent events from a byte stream, as {event, data, id} (data parsed as JSON when
 * it is JSON). Lines end in CRLF, LF or CR; comments (heartbeats) are skipped. A reader
 * that stops early closes the connection.
 */
export async function* readSse(body) {
  const reader = body.getReader();
  try {
    yield* parseSse(reader);
  } finally {
    reader.cancel().catch(() => {});
  }
}

async function* parseSse(reader) {
  const decoder = new TextDecoder();
  let buffer = "";
  let event = { event: "message", data: [], id: null };
  for (;;) {
    const { value, done } = await reader.read();
    buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
    // a CR at the end may be the first half of a CRLF: hold it until the next chunk
    const carry = !done && buffer.endsWith("\r") ? "\r" : "";
    const lines = (carry ? buffer.slice(0, -1) : buffer).split(/\r\n|\r|\n/);
    buffer = done ? "" : lines.pop() + carry; // the last piece may be a line cut in two
    for (const line of lines) {
      if (line === "") {
        if (event.data.length) yield finish(event);
        event = { event: "message", data: [], id: null };
        continue;
      }
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      let text = colon < 0 ? "" : line.slice(colon + 1);
      if (text.startsWith(" ")) text = text.slice(1);
      if (field === "event") event.event = text;
      else if (field === "data") event.data.push(text);
      else if (field === "id") event.id = text;
    }
    if (done) {
      if (event.data.length) yield finish(event);
      return;
    }
  }
}

function finish(event) {
  const raw = event.data.join("\n");
  let data = raw;
  try {
    data = JSON.parse(raw);
  } catch {
    // an event whose data is not JSON keeps its text
  }
  return { event: event.event, data, id: event.id };
}
