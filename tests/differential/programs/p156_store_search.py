from langgraph.store.memory import InMemoryStore


def embed(texts):
    vocabulary = ["cat", "dog", "tea", "code"]
    return [[float(word in text) for word in vocabulary] for text in texts]


store = InMemoryStore(index={"embed": embed, "dims": 4, "fields": ["text"]})
facts = {
    "f1": {"text": "has a cat", "kind": "pet"},
    "f2": {"text": "drinks tea", "kind": "food"},
    "f3": {"text": "has a dog", "kind": "pet"},
    "f4": {"text": "writes code", "kind": "work"},
}
for key, value in facts.items():
    store.put(("user", "u1"), key, value)
store.put(("user", "u2"), "g1", {"text": "has a cat and a dog", "kind": "pet"})

print(sorted(item.key for item in store.search(("user",))))
print(sorted(item.key for item in store.search(("user", "u1"), filter={"kind": "pet"})))
print([item.key for item in store.search(("user", "u1"), query="cat", limit=1)])
print([item.key for item in store.search(("user", "u1"), query="a dog", limit=1)])
page = store.search(("user", "u1"), limit=2, offset=1)
print(len(page), [item.namespace for item in page][:1])
print([item.key for item in store.search(("user",), query="cat", filter={"kind": "pet"}, limit=2)])
hits = store.search(("user", "u1"), query="code", limit=1)
print(hits[0].key, hits[0].value, hits[0].score is not None)
