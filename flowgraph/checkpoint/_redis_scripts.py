"""The Lua scripts of RedisCheckpointer: each write is one script, so it is atomic.

Every script touches only the keys it is given, all of one thread and so of
one Redis Cluster slot (they share the `{thread}` hash tag); the thread index
lives in another slot and is never touched here. The keys come in one order,
`THREAD_KEYS`:

    head      string      the thread's latest checkpoint id
    ids       sorted set  every checkpoint id, score 0: ZRANGEBYLEX walks them by time
    links     hash        id -> base id, then "\\n" and the parent id (no parent: base only)
    records   hash        id -> step and created_at (16 bytes), then the opaque payload
    messages  hash        key -> message bytes, written once (HSETNX)
    pending   hash        id -> the pending writes left against it, "<index> <length>\\n<bytes>"...

Links are kept apart from records so that a chain walk and `prune` read a
few dozen bytes per checkpoint instead of whole payloads. A write script
ends by setting every key's expiry to one deadline (or removing it), so a
thread's keys always expire together.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "ACQUIRE_LEASE",
    "CHAIN",
    "FORGET",
    "HISTORY",
    "PRUNE",
    "PURGE_INDEX",
    "PUT",
    "PUT_AND_ACQUIRE",
    "PUT_AND_RELEASE",
    "PUT_PENDING",
    "RELEASE_LEASE",
    "RENEW_LEASE",
    "THREAD_KEYS",
]

THREAD_KEYS: Final = ("head", "ids", "links", "records", "messages", "pending")

# One deadline for every key, from the server's clock: the keys expire in the same millisecond.
_REFRESH = """
local function refresh(ttl_ms)
  if ttl_ms == '0' then
    for i = 1, 6 do redis.call('PERSIST', KEYS[i]) end
  else
    local now = redis.call('TIME')
    local deadline = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
      + tonumber(ttl_ms)
    for i = 1, 6 do redis.call('PEXPIREAT', KEYS[i], string.format('%d', deadline)) end
  end
end
"""
# the six THREAD_KEYS; a lease key after them (KEYS[7]) keeps its own expiry

_PUT_STEP = (
    _REFRESH
    + """
-- ARGV: has_expected expected checkpoint link record parent ttl_ms [message_key message]...
local function put()
  local head = redis.call('GET', KEYS[1])
  if head == ARGV[3] then
    return {1, head}  -- stored already: a retried call whose first reply was lost
  end
  if ARGV[1] == '1' then
    if head ~= ARGV[2] then return {0, head} end
  elseif head then
    return {0, head}
  end
  redis.call('SET', KEYS[1], ARGV[3])
  redis.call('ZADD', KEYS[2], 0, ARGV[3])
  redis.call('HSET', KEYS[3], ARGV[3], ARGV[4])
  redis.call('HSET', KEYS[4], ARGV[3], ARGV[5])
  for i = 8, #ARGV, 2 do
    redis.call('HSETNX', KEYS[5], ARGV[i], ARGV[i + 1])
  end
  if ARGV[6] ~= '' then redis.call('HDEL', KEYS[6], ARGV[6]) end
  refresh(ARGV[7])
  return {1, ARGV[3]}
end
"""
)

PUT: Final = _PUT_STEP + "return put()\n"

# A run's first and last writes carry its lease (KEYS[7]); the lease's own arguments come
# last, after the messages, and are taken off ARGV before `put` reads it.

PUT_AND_ACQUIRE: Final = (
    _PUT_STEP
    + """
-- ARGV: PUT's, then run owner lease_ms. Another run's lease: {2, run, owner, ms left}
local lease_ms = table.remove(ARGV)
local owner = table.remove(ARGV)
local run = table.remove(ARGV)
local held = redis.call('HMGET', KEYS[7], 'run', 'owner')
if held[1] and not (held[1] == run and held[2] == owner) then
  return {2, held[1], held[2], redis.call('PTTL', KEYS[7])}
end
local stored = put()
if stored[1] == 1 then
  redis.call('HSET', KEYS[7], 'run', run, 'owner', owner)
  redis.call('PEXPIRE', KEYS[7], lease_ms)
end
return stored
"""
)

PUT_AND_RELEASE: Final = (
    _PUT_STEP
    + """
-- ARGV: PUT's, then run owner: the lease is given back if the step is stored
local owner = table.remove(ARGV)
local run = table.remove(ARGV)
local stored = put()
if stored[1] == 1 then
  local held = redis.call('HMGET', KEYS[7], 'run', 'owner')
  if held[1] == run and held[2] == owner then redis.call('DEL', KEYS[7]) end
end
return stored
"""
)

PUT_PENDING: Final = (
    _REFRESH
    + """
-- ARGV: checkpoint ttl_ms [task_index payload]...
local tasks = {}
local stored = redis.call('HGET', KEYS[6], ARGV[1])
if stored then
  local pos = 1
  while pos <= #stored do
    local nl = string.find(stored, '\\n', pos, true)
    local index, size
    if nl then index, size = string.match(string.sub(stored, pos, nl - 1), '^(%-?%d+) (%d+)$') end
    if not index or nl + tonumber(size) > #stored then
      return redis.error_reply('DAMAGED pending writes of checkpoint ' .. ARGV[1])
    end
    tasks[tonumber(index)] = string.sub(stored, nl + 1, nl + tonumber(size))
    pos = nl + 1 + tonumber(size)
  end
end
for i = 3, #ARGV, 2 do tasks[tonumber(ARGV[i])] = ARGV[i + 1] end
local order = {}
for index in pairs(tasks) do order[#order + 1] = index end
table.sort(order)
local parts = {}
for _, index in ipairs(order) do
  local payload = tasks[index]
  parts[#parts + 1] = string.format('%d %d\\n', index, #payload) .. payload
end
redis.call('HSET', KEYS[6], ARGV[1], table.concat(parts))
refresh(ARGV[2])
return 1
"""
)

PRUNE: Final = (
    _REFRESH
    + """
-- ARGV: head ttl_ms [checkpoint]...: drops them unless the head moved since they were chosen
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
for i = 3, #ARGV do
  redis.call('ZREM', KEYS[2], ARGV[i])
  redis.call('HDEL', KEYS[3], ARGV[i])
  redis.call('HDEL', KEYS[4], ARGV[i])
  redis.call('HDEL', KEYS[6], ARGV[i])
end
refresh(ARGV[2])
return #ARGV - 2
"""
)

FORGET: Final = (
    _REFRESH
    + """
-- ARGV: head ttl_ms [message_key]...: deletes them unless the head moved since they were chosen
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
local gone = 0
for i = 3, #ARGV do gone = gone + redis.call('HDEL', KEYS[5], ARGV[i]) end
refresh(ARGV[2])
return gone
"""
)

HISTORY: Final = """
-- KEYS: ids links records; ARGV: lex upper bound ('+' or '(' .. before), limit (-1: none)
local ids
if ARGV[2] == '-1' then
  ids = redis.call('ZREVRANGEBYLEX', KEYS[1], ARGV[1], '-')
else
  ids = redis.call('ZREVRANGEBYLEX', KEYS[1], ARGV[1], '-', 'LIMIT', 0, ARGV[2])
end
local out = {}
for start = 1, #ids, 500 do
  local batch = {}
  for i = start, math.min(start + 499, #ids) do batch[#batch + 1] = ids[i] end
  local links = redis.call('HMGET', KEYS[2], unpack(batch))
  local records = redis.call('HMGET', KEYS[3], unpack(batch))
  for i = 1, #batch do
    out[#out + 1] = batch[i]
    out[#out + 1] = links[i]
    out[#out + 1] = records[i]
  end
end
return out
"""

CHAIN: Final = """
-- KEYS: links records; ARGV: checkpoint. Walks parent links down to the base snapshot.
local out = {}
local id = ARGV[1]
local steps = redis.call('HLEN', KEYS[1])
for _ = 1, steps do
  local link = redis.call('HGET', KEYS[1], id)
  if not link then break end
  out[#out + 1] = id
  out[#out + 1] = link
  out[#out + 1] = redis.call('HGET', KEYS[2], id)
  local nl = string.find(link, '\\n', 1, true)
  if not nl or string.sub(link, 1, nl - 1) == id then break end
  id = string.sub(link, nl + 1)
end
return out
"""

PURGE_INDEX: Final = """
-- KEYS: the thread index; ARGV: [thread score]...: drops entries still at the score read,
-- so a thread written again since (a new score) stays listed.
local gone = 0
for i = 1, #ARGV, 2 do
  local score = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if score and tonumber(score) == tonumber(ARGV[i + 1]) then
    gone = gone + redis.call('ZREM', KEYS[1], ARGV[i])
  end
end
return gone
"""

# A thread's lease is a hash (run, owner) of its own, beside the thread's keys (same hash
# tag) but with its own expiry: the server's clock ends a lease nobody renews.

ACQUIRE_LEASE: Final = """
-- KEYS: lease; ARGV: run owner lease_ms dead_run dead_owner (the holder to take over, or '')
local held = redis.call('HMGET', KEYS[1], 'run', 'owner')
if held[1] and not (held[1] == ARGV[4] and held[2] == ARGV[5]) then
  return {0, held[1], held[2], redis.call('PTTL', KEYS[1])}
end
redis.call('HSET', KEYS[1], 'run', ARGV[1], 'owner', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {1}
"""

RENEW_LEASE: Final = """
-- KEYS: lease; ARGV: run owner lease_ms
local held = redis.call('HMGET', KEYS[1], 'run', 'owner')
if held[1] == ARGV[1] and held[2] == ARGV[2] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
return 0
"""

RELEASE_LEASE: Final = """
-- KEYS: lease; ARGV: run owner
local held = redis.call('HMGET', KEYS[1], 'run', 'owner')
if held[1] == ARGV[1] and held[2] == ARGV[2] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""
