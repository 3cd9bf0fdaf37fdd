"""The Lua scripts of ``RedisRecordStore`` (``redis.py`` describes the key layout they work on).

Each script is one atomic step on one tenant's keys: several keys change together or not at all.
"""

# Shared Lua helper: HMGET in chunks (unpack() has a stack limit of a few thousand values).
FETCH = """
local function fetch(hash, ids)
  local out = {}
  for s = 1, #ids, 1000 do
    local part = redis.call('HMGET', hash, unpack(ids, s, math.min(s + 999, #ids)))
    for _, v in ipairs(part) do out[#out + 1] = v end
  end
  return out
end
"""

# KEYS: m, seq, all, pend. ARGV: base, then (member, json, user_id, session_key, chat_id) per message.
PUT = """
local base = ARGV[1]
local out = {}
for i = 2, #ARGV, 5 do
  local id = ARGV[i]
  if redis.call('HEXISTS', KEYS[1], id) == 1 then
    out[#out + 1] = 0
  else
    local seq = redis.call('INCR', KEYS[2])
    redis.call('HSET', KEYS[1], id, seq .. ':' .. ARGV[i + 1])
    redis.call('ZADD', KEYS[3], seq, id)
    redis.call('ZADD', KEYS[4], seq, id)
    redis.call('ZADD', base .. 's:' .. ARGV[i + 2] .. '|' .. ARGV[i + 3], seq, id)
    redis.call('ZADD', base .. 'u:' .. ARGV[i + 2], seq, id)
    redis.call('ZADD', base .. 'c:' .. ARGV[i + 4], seq, id)
    out[#out + 1] = seq
  end
end
return out
"""

# KEYS: m, and pend to make the messages pending for the index again. ARGV: base, then (member, json,
# user_id, session_key, chat_id) per message. The chat is part of the member, so it never changes here.
UPDATE = """
local base = ARGV[1]
for i = 2, #ARGV, 5 do
  if redis.call('HEXISTS', KEYS[1], ARGV[i]) == 0 then return redis.error_reply('NOTFOUND ' .. ARGV[i]) end
end
for i = 2, #ARGV, 5 do
  local id, user, session = ARGV[i], ARGV[i + 2], ARGV[i + 3]
  local raw = redis.call('HGET', KEYS[1], id)
  local cut = string.find(raw, ':', 1, true)
  local seq = string.sub(raw, 1, cut - 1)
  local old = cjson.decode(string.sub(raw, cut + 1))
  if old.user_id ~= user or old.session_key ~= session then
    redis.call('ZREM', base .. 's:' .. old.user_id .. '|' .. old.session_key, id)
    redis.call('ZADD', base .. 's:' .. user .. '|' .. session, seq, id)
  end
  if old.user_id ~= user then
    redis.call('ZREM', base .. 'u:' .. old.user_id, id)
    redis.call('ZADD', base .. 'u:' .. user, seq, id)
  end
  redis.call('HSET', KEYS[1], id, seq .. ':' .. ARGV[i + 1])
  if KEYS[2] then redis.call('ZADD', KEYS[2], seq, id) end
end
return 1
"""

# KEYS: m, all, pend, and the source zset (a session or a user) whose messages go. ARGV: base, then, without
# a source zset, the members to delete. Returns the deleted members (the source's by seq, else in ARGV order).
DELETE = """
local base = ARGV[1]
local ids = {}
if KEYS[4] then ids = redis.call('ZRANGE', KEYS[4], 0, -1) else for i = 2, #ARGV do ids[#ids + 1] = ARGV[i] end end
local out = {}
for _, id in ipairs(ids) do
  local raw = redis.call('HGET', KEYS[1], id)
  if raw then
    local m = cjson.decode(string.sub(raw, string.find(raw, ':', 1, true) + 1))
    redis.call('ZREM', base .. 's:' .. m.user_id .. '|' .. m.session_key, id)
    redis.call('ZREM', base .. 'u:' .. m.user_id, id)
    redis.call('ZREM', base .. 'c:' .. m.chat_id, id)
    redis.call('HDEL', KEYS[1], id)
    out[#out + 1] = id
  end
  redis.call('ZREM', KEYS[2], id)
  redis.call('ZREM', KEYS[3], id)
end
return out
"""

# KEYS: m, all, pend, upgrades hash, upgrades key zset. ARGV: base, marker key, marker json.
# Layout 1 -> 2 for one tenant: hash fields and ZSET members ``message_id`` become
# ``chat_id|message_id``; every message is pending for the index again, and the marker document tells
# the Indexer to move the points to per-chat ids. Idempotent (a member with ``|`` is already moved).
MIGRATE_V2 = """
local base = ARGV[1]
local flat = redis.call('HGETALL', KEYS[1])
for i = 1, #flat, 2 do
  local id, raw = flat[i], flat[i + 1]
  if not string.find(id, '|', 1, true) then
    local cut = string.find(raw, ':', 1, true)
    local seq = string.sub(raw, 1, cut - 1)
    local m = cjson.decode(string.sub(raw, cut + 1))
    local member = m.chat_id .. '|' .. id
    for _, z in ipairs({KEYS[2], base .. 's:' .. m.user_id .. '|' .. m.session_key, base .. 'u:' .. m.user_id,
                        base .. 'c:' .. m.chat_id}) do
      redis.call('ZREM', z, id)
      redis.call('ZADD', z, seq, member)
    end
    redis.call('ZREM', KEYS[3], id)
    redis.call('HSET', KEYS[1], member, raw)
    redis.call('HDEL', KEYS[1], id)
  end
end
if #flat > 0 then
  redis.call('ZUNIONSTORE', KEYS[3], 1, KEYS[2])
  redis.call('HSET', KEYS[4], ARGV[2], ARGV[3])
  redis.call('ZADD', KEYS[5], 0, ARGV[2])
end
return #flat / 2
"""

# KEYS: zset, m. ARGV: limit. The last ``limit`` stored values, newest first.
WINDOW = FETCH + """
return fetch(KEYS[2], redis.call('ZREVRANGE', KEYS[1], 0, tonumber(ARGV[1]) - 1))
"""

# KEYS: zset, m. ARGV: after_seq, count. Stored values with seq > after_seq, oldest first.
RANGE = FETCH + """
return fetch(KEYS[2], redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. ARGV[1], '+inf', 'LIMIT', 0, tonumber(ARGV[2])))
"""

# KEYS: dk, d. ARGV: min, max, limit. Flat [key, json, key, json, ...] in key order.
LIST_DOCS = FETCH + """
local keys = redis.call('ZRANGEBYLEX', KEYS[1], ARGV[1], ARGV[2], 'LIMIT', 0, tonumber(ARGV[3]))
local docs = fetch(KEYS[2], keys)
local out = {}
for i = 1, #keys do out[#out + 1] = keys[i]; out[#out + 1] = docs[i] end
return out
"""
