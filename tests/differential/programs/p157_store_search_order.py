from langgraph.store.memory import InMemoryStore

store = InMemoryStore()
for key in ("b", "a", "c"):
    store.put(("notes",), key, {"text": key})
store.put(("other",), "z", {"text": "z"})
store.put(("notes",), "b", {"text": "b again"})
print([(item.namespace, item.key) for item in store.search(())])
print([item.key for item in store.search(("notes",), limit=2, offset=1)])


def embed(texts):
    return [[float("cat" in text), float("dog" in text)] for text in texts]


indexed = InMemoryStore(index={"embed": embed, "dims": 2, "fields": ["text"]})
for key in ("first", "second", "third"):
    indexed.put(("pets",), key, {"text": "a cat"})
print([item.key for item in indexed.search(("pets",), query="cat")])
