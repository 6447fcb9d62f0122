// Drives a flowgraph server with the official JavaScript client, @langchain/langgraph-sdk.
// Usage: node js_client.mjs URL TOKEN; prints one JSON object of what it saw.
import { Client } from "@langchain/langgraph-sdk";

const [url, token] = process.argv.slice(2);
const client = new Client({ apiUrl: url, apiKey: token });
const out = {};

out.assistants = (await client.assistants.search()).map((a) => [a.graph_id, a.assistant_id]);
const thread = await client.threads.create({ metadata: { via: "js" } });
out.paused = await client.runs.wait(thread.thread_id, "agent", {
  input: { messages: [{ role: "user", content: "hi from js" }] },
});
out.status = (await client.threads.get(thread.thread_id)).status;
out.events = [];
for await (const part of client.runs.stream(thread.thread_id, "agent", {
  command: { resume: "js says yes" },
  streamMode: ["values", "updates"],
})) {
  out.events.push(part.event);
  if (part.event === "values") out.last = part.data;
}
out.tokens = [];
for await (const part of client.runs.stream(null, "chat", {
  input: { messages: [{ role: "user", content: "stream please" }] },
  streamMode: "messages-tuple",
})) {
  if (part.event === "messages") out.tokens.push(part.data[0].content);
}
out.subgraphEvents = [];
for await (const part of client.runs.stream(null, "nested", {
  input: { messages: [{ role: "user", content: "nest" }] },
  streamMode: ["updates", "custom"],
  streamSubgraphs: true,
})) {
  out.subgraphEvents.push(part.event);
}
const routed = await client.threads.create();
await client.runs.wait(routed.thread_id, "agent", {
  input: { messages: [{ role: "user", content: "first" }] },
});
out.routed = await client.runs.wait(routed.thread_id, "agent", {
  command: { resume: "ok", goto: "reply", update: { n: 40 } },
});
await client.store.putItem(["js", "notes"], "k1", { text: "from js" }, { ttl: 5 });
out.item = await client.store.getItem(["js", "notes"], "k1");
out.missing = await client.store.getItem(["js", "notes"], "nope");
out.found = (await client.store.searchItems(["js"], { filter: { text: "from js" } })).items;
out.namespaces = (await client.store.listNamespaces({ prefix: ["js"] })).namespaces;
await client.store.deleteItem(["js", "notes"], "k1");
out.afterDelete = await client.store.getItem(["js", "notes"], "k1");
const state = await client.threads.getState(thread.thread_id);
out.next = state.next;
out.history = (await client.threads.getHistory(thread.thread_id)).length;
out.runs = (await client.runs.list(thread.thread_id)).map((r) => r.status);
console.log(JSON.stringify(out));
