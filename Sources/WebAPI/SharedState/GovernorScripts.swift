/// The rate-limit governor's two Lua scripts.
///
/// Redis runs each atomically, so N processes on N machines see one budget, one pace and
/// one set of leases per (host, credential).
///
/// Keys (one hash tag per host and credential, so both live on one Redis Cluster slot):
/// - `KEYS[1]`, a hash: `route:<keyed hash of the first path segment>` (never the segment,
///   which may hold a token) → the resource its answers named
///   (`core`, `search`; `-` when they carry no rate-limit headers); `<resource>:remaining`,
///   `:reset` (epoch seconds), `:limit`; `<resource>:probe` (until when, in Redis ms, one
///   request is finding out an unknown budget); `pace_us` (the earliest next send, Redis
///   microseconds: `pace` in milliseconds until 2026-11-27, a name not reused, so a process of
///   an older version never reads microseconds as milliseconds).
/// - `KEYS[2]`, a sorted set of leases: in-flight requests scored by when each lease expires
///   (so a killed process's lease lapses). `APIMACRO_MAX_CONCURRENCY` caps their number, and a
///   new window's budget is the answer's remaining less the requests still in flight.
///
/// Times come from Redis (`TIME`), so machines whose clocks differ still agree.
enum GovernorScripts {
    /// Before a send.
    ///
    /// ARGV: route (its keyed name), lease id, max concurrency (0: none), lease ms, pace interval
    /// µs (0: none), probe ms.
    ///
    /// Returns `{0, resource}` go (one unit of a known budget reserved, or no budget applies);
    /// `{3, resource}` go as the one probe of an unknown budget; `{1, µs}` try again in µs
    /// (another request is probing, every concurrency slot is taken, or the pace says later);
    /// `{2, reset, now}` the budget is spent until `reset` (epoch seconds; `now` in Redis ms).
    static let reserve = RedisScript(
        """
        local t = redis.call('TIME')
        local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        local state, leases = KEYS[1], KEYS[2]
        local maxc, leasems = tonumber(ARGV[3]), tonumber(ARGV[4])
        local interval, probems = tonumber(ARGV[5]), tonumber(ARGV[6])
        local resource = redis.call('HGET', state, 'route:' .. ARGV[1]) or ('?' .. ARGV[1])
        local mode = 0
        if resource ~= '-' then
          local f = redis.call('HMGET', state, resource .. ':remaining', resource .. ':reset', resource .. ':probe')
          local remaining, reset, probe = tonumber(f[1]), tonumber(f[2]), tonumber(f[3])
          if remaining and reset and reset * 1000 > now then
            if remaining <= 0 then return {2, reset, now} end
            mode = 1
          else
            if probe and probe > now then return {1, 20000} end
            mode = 3
          end
        end
        redis.call('ZREMRANGEBYSCORE', leases, '-inf', now)
        if maxc > 0 and redis.call('ZCARD', leases) >= maxc then return {1, 5000} end
        if interval > 0 then
          local nowus = tonumber(t[1]) * 1000000 + tonumber(t[2])
          local pace = tonumber(redis.call('HGET', state, 'pace_us')) or 0
          if pace > nowus then return {1, pace - nowus} end
          redis.call('HSET', state, 'pace_us', string.format('%.0f', nowus + interval))
        end
        redis.call('ZADD', leases, now + leasems, ARGV[2])
        redis.call('PEXPIRE', leases, leasems * 2)
        if mode == 1 then
          redis.call('HINCRBY', state, resource .. ':remaining', -1)
        elseif mode == 3 then
          redis.call('HSET', state, resource .. ':probe', now + probems)
        end
        redis.call('PEXPIRE', state, 7200000)
        if mode == 3 then return {3, resource} end
        return {0, resource}
        """)

    /// After a send (answered or failed).
    ///
    /// ARGV: route, lease id, probed (1/0), the reserved resource, answered (1/0), has
    /// headers (1/0), limit, remaining, reset, resource header.
    ///
    /// Frees the lease and the probe; with rate-limit headers, maps the route to its resource
    /// and lowers the budget: within a window the stored remaining only goes down (the
    /// smaller of it and the header, as other processes' reservations may not have reached
    /// the server yet); a window that has passed is replaced by the answer's, less the
    /// requests still in flight (reserved in the old window, they may count in the new one).
    static let record = RedisScript(
        """
        local state, leases = KEYS[1], KEYS[2]
        redis.call('ZREM', leases, ARGV[2])
        if ARGV[3] == '1' then redis.call('HDEL', state, ARGV[4] .. ':probe') end
        if ARGV[5] == '0' then return 0 end
        if ARGV[6] == '0' then
          redis.call('HSET', state, 'route:' .. ARGV[1], '-')
          redis.call('PEXPIRE', state, 7200000)
          return 0
        end
        local t = redis.call('TIME')
        local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        local resource = ARGV[10]
        if resource == '' then resource = 'default' end
        local remaining, reset = tonumber(ARGV[8]), tonumber(ARGV[9])
        redis.call('HSET', state, 'route:' .. ARGV[1], resource)
        if remaining and reset then
          local f = redis.call('HMGET', state, resource .. ':remaining', resource .. ':reset')
          local storedRemaining, storedReset = tonumber(f[1]), tonumber(f[2])
          if storedRemaining == nil or storedReset == nil or storedReset * 1000 <= now then
            -- A reset more than a day away (a millisecond epoch, a hostile header) is not believed:
            -- it would keep every process from sending until then.
            if reset * 1000 > now and reset * 1000 <= now + 86400000 then
              -- Requests still in flight may reach the server in this new window after this answer
              -- left it: count them as spent.
              local left = remaining - redis.call('ZCARD', leases)
              if left < 0 then left = 0 end
              redis.call('HSET', state, resource .. ':remaining', left, resource .. ':reset', reset, resource .. ':limit', ARGV[7])
            end
          elseif reset == storedReset and remaining < storedRemaining then
            -- Only an answer from the stored window lowers it (a slow answer from the previous
            -- window must not spend the new one).
            redis.call('HSET', state, resource .. ':remaining', remaining)
          end
        end
        redis.call('PEXPIRE', state, 7200000)
        return 1
        """)
}
