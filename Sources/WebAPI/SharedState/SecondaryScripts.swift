/// The secondary-limit pace shared by every apimacro process through Redis
/// (`APIMACRO_SHARED_STATE`): the gap between writes, one write in flight at a time, the
/// content-creating windows, and the wait an answer asked for, per (host, credential).
///
/// Keys (the governor's hash tag, so one Redis Cluster slot): `KEYS[1]`, a hash: `write` (the
/// earliest next write, Redis ms), `writer` and `writer:until` (the write in flight, its lease
/// lapsing if its process dies), `hold` (nothing before it, Redis ms); `KEYS[2]`, a sorted set
/// of content-creating sends by time. Times come from Redis (`TIME`).
enum SecondaryScripts {
    /// Before a send.
    ///
    /// ARGV: mutating (1/0), creates (1/0), lease id, lease ms, the number of windows, then each
    /// window's requests and ms.
    ///
    /// Returns `{0}` go (booked) or `{1, ms}` try again in ms.
    static let reserve = RedisScript(
        """
        local t = redis.call('TIME')
        local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        local state, created = KEYS[1], KEYS[2]
        local wait = 0
        local hold = tonumber(redis.call('HGET', state, 'hold')) or 0
        if hold > now then wait = hold - now end
        if ARGV[1] == '1' then
          local nextw = tonumber(redis.call('HGET', state, 'write')) or 0
          if nextw - now > wait then wait = nextw - now end
          local busy = tonumber(redis.call('HGET', state, 'writer:until')) or 0
          if busy > now and wait < 20 then wait = 20 end
        end
        local n = tonumber(ARGV[5]) or 0
        local longest = 0
        if ARGV[2] == '1' and n > 0 then
          for i = 0, n - 1 do
            local ms = tonumber(ARGV[7 + 2 * i])
            if ms > longest then longest = ms end
          end
          redis.call('ZREMRANGEBYSCORE', created, '-inf', now - longest)
          for i = 0, n - 1 do
            local count, ms = tonumber(ARGV[6 + 2 * i]), tonumber(ARGV[7 + 2 * i])
            local inside = redis.call('ZRANGEBYSCORE', created, '(' .. (now - ms), '+inf', 'WITHSCORES')
            local c = #inside / 2
            if count > 0 and c >= count then
              local frees = tonumber(inside[2 * (c - count) + 2]) + ms - now
              if frees > wait then wait = frees end
            end
          end
        end
        if wait > 0 then return {1, wait} end
        if ARGV[1] == '1' then
          redis.call('HSET', state, 'writer', ARGV[3], 'writer:until', now + tonumber(ARGV[4]))
        end
        if ARGV[2] == '1' and n > 0 then
          redis.call('ZADD', created, now, ARGV[3])
          redis.call('PEXPIRE', created, longest)
        end
        redis.call('PEXPIRE', state, 7200000)
        return {0}
        """)

    /// After a send (answered or failed).
    ///
    /// ARGV: mutating (1/0), lease id, gap ms, hold ms (0: none).
    ///
    /// Frees the write lease, sets the next write a gap after now, and holds every send until
    /// the wait an answer asked for (never shortening a longer one).
    static let record = RedisScript(
        """
        local t = redis.call('TIME')
        local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        local state = KEYS[1]
        if ARGV[1] == '1' then
          if redis.call('HGET', state, 'writer') == ARGV[2] then redis.call('HDEL', state, 'writer', 'writer:until') end
          local nextw = now + tonumber(ARGV[3])
          if nextw > (tonumber(redis.call('HGET', state, 'write')) or 0) then redis.call('HSET', state, 'write', nextw) end
        end
        local holdms = tonumber(ARGV[4]) or 0
        if holdms > 0 and now + holdms > (tonumber(redis.call('HGET', state, 'hold')) or 0) then
          redis.call('HSET', state, 'hold', now + holdms)
        end
        redis.call('PEXPIRE', state, 7200000)
        return 1
        """)
}
