/**
 * `Store.statsMeta` on Redis (src/store/meta-stats.ts): a Lua script sums
 * the metadata hashes (redis-meta.ts) of a page of keys on the server, in
 * key order from `invocache:meta:keys`, and returns only the page's groups;
 * the pages are joined here. As the listing, a value that is gone is
 * skipped and one whose hash is stale (an older writer) fails the stats.
 *
 * Sums come back as JSON (cjson prints numbers with 14 significant digits:
 * exact for the integers of one page of a thousand rows).
 */
import { StoreError } from "../../errors.js";
import { MetaStatsSum, statsKeyFromColumns } from "../meta-stats.js";
import type { MetaStats, MetaStatsQuery } from "../meta-types.js";
import { REDIS_META_KEYS, REDIS_META_PREFIX, type RedisMetaClient } from "./redis-meta.js";

/** Keys summed per script run (a script blocks the server while it runs). */
export const REDIS_STATS_PAGE = 1000;

const VALUE_PREFIX = "invocache:v:";

/**
 * KEYS[1] the key set; ARGV min (a ZRANGEBYLEX bound), count, now (epoch
 * ms), prefix, the detail models (a JSON array), the input tokens past which an entry is detailed. Returns the page as JSON:
 * `{n, last, stop, missing, runs, problems, firstProblem, problem, ids,
 * firstPair, lastPair, oldest, newest, groups, usages}`; a group is
 * `[ns, role, model, toolServer, toolName, toolVersion, usageModel, class,
 * entries, bytes, durationUs, accepted, rejected, in, out, cacheRead, cacheWrite]`
 * (`false` for an absent field), a usage the key, then entries and the four counts.
 */
const STATS_PAGE_SCRIPT = `
local members = redis.call('ZRANGEBYLEX', KEYS[1], ARGV[1], '+', 'LIMIT', 0, tonumber(ARGV[2]))
local now = tonumber(ARGV[3])
local prefix = ARGV[4]
local above = tonumber(ARGV[6])
local detail = {}
for _, name in ipairs(cjson.decode(ARGV[5])) do detail[name] = true end
local out = { n = #members, last = false, stop = false, missing = false, runs = 0, problems = 0,
  firstProblem = false, problem = false, ids = 0, firstPair = false, lastPair = false,
  oldest = false, newest = false }
local groups, gorder, usages, uorder = {}, {}, {}, {}
local prev = false
local function v(x) if x == nil then return false end return x end
-- A field of a group's id: absent and present never alike, fields never run together.
local function f(x) if x == false then return '\\0' end return 's' .. tostring(x) .. '\\0' end
for _, key in ipairs(members) do
  if string.sub(key, 1, #prefix) ~= prefix then out.stop = true break end
  out.last = key
  local h = redis.call('HMGET', '${REDIS_META_PREFIX}' .. key, 'm', 'len')
  local strlen = redis.call('STRLEN', '${VALUE_PREFIX}' .. key)
  if strlen ~= 0 then
    if not h[1] or tonumber(h[2]) ~= strlen then out.missing = key break end
    local m = cjson.decode(h[1])
    if m.mv ~= 1 then out.missing = key break end
    if m.expires == nil or now <= m.expires then
      if m.kind == 'run' then out.runs = out.runs + 1
      elseif m.kind == 'problem' then
        out.problems = out.problems + 1
        if not out.firstProblem then out.firstProblem = key; out.problem = v(m.problem) end
      elseif m.kind == 'entry' then
        local u = m.usage
        local tool = m.tool
        local cls, i, o, cr, cw = 'none', 0, 0, 0, 0
        if u then
          i, o, cr, cw = u.inputTokens, u.outputTokens, u.cacheReadTokens or 0, u.cacheWriteTokens or 0
          if cr + cw > i then cls = 'over' else cls = 'ok' end
        end
        local k = {
          m.namespace, m.role, false, false, false, false, false, cls }
        if tool then k[4] = v(tool.server); k[5] = tool.name; k[6] = tool.version
        else k[3] = v(m.model) end
        if u then k[7] = v(u.model) end
        local id = f(k[1]) .. f(k[2]) .. f(k[3]) .. f(k[4]) .. f(k[5]) .. f(k[6]) .. f(k[7]) .. k[8]
        local g = groups[id]
        if not g then
          g = { k[1], k[2], k[3], k[4], k[5], k[6], k[7], k[8], 0, 0, 0, 0, 0, 0, 0, 0, 0 }
          groups[id] = g
          gorder[#gorder + 1] = id
        end
        g[9] = g[9] + 1
        g[10] = g[10] + m.bytes
        g[11] = g[11] + math.floor(m.durationMs * 1000 + 0.5)
        if m.verdict == 'accepted' then g[12] = g[12] + 1 end
        if m.verdict == 'rejected' then g[13] = g[13] + 1 end
        g[14] = g[14] + i; g[15] = g[15] + o; g[16] = g[16] + cr; g[17] = g[17] + cw
        if u and (cls == 'over' or i > above or detail[k[3]] or detail[k[7]]) then
          local uid = id .. ':' .. i .. ':' .. o .. ':' .. cr .. ':' .. cw
          local d = usages[uid]
          if not d then
            d = { k[1], k[2], k[3], k[4], k[5], k[6], k[7], k[8], 0, i, o, cr, cw }
            usages[uid] = d
            uorder[#uorder + 1] = uid
          end
          d[9] = d[9] + 1
        end
        local pair = { m.namespace, m.id }
        if not prev or prev[1] ~= pair[1] or prev[2] ~= pair[2] then out.ids = out.ids + 1 end
        if not out.firstPair then out.firstPair = pair end
        out.lastPair = pair
        prev = pair
        local at = m.recordedAt
        if not out.oldest or at < out.oldest then out.oldest = at end
        if not out.newest or at > out.newest then out.newest = at end
      end
    end
  end
end
local glist, ulist = {}, {}
for n, id in ipairs(gorder) do glist[n] = groups[id] end
for n, id in ipairs(uorder) do ulist[n] = usages[id] end
out.groups = glist
out.usages = ulist
return cjson.encode(out)`;

interface Page {
  n: number;
  last: string | false;
  stop: boolean;
  missing: string | false;
  runs: number;
  problems: number;
  firstProblem: string | false;
  problem: string | false;
  ids: number;
  firstPair: [string, string] | false;
  lastPair: [string, string] | false;
  oldest: string | false;
  newest: string | false;
  // cjson encodes an empty table as an object.
  groups: unknown[][] | Record<string, never>;
  usages: unknown[][] | Record<string, never>;
}

function keyOf(row: unknown[]) {
  return statsKeyFromColumns({
    namespace: row[0],
    role: row[1],
    model: row[2],
    toolServer: row[3],
    toolName: row[4],
    toolVersion: row[5],
    usageModel: row[6],
    usage: row[7],
  });
}

/** Sum the stored metadata of `query` a page of keys at a time, leaving out rows expired at `now`. */
export async function statsRedisMeta(
  client: RedisMetaClient,
  query: MetaStatsQuery,
  now: number,
  pageSize = REDIS_STATS_PAGE,
  onProgress?: (rows: number) => void,
): Promise<MetaStats> {
  const prefix = query.prefix ?? "";
  const detail = JSON.stringify([...new Set(query.usageDetail ?? [])]);
  const sum = new MetaStatsSum();
  const above = Math.min(
    query.usageDetailAbove ?? Number.MAX_SAFE_INTEGER,
    Number.MAX_SAFE_INTEGER,
  );
  let min = prefix === "" ? "-" : `[${prefix}`;
  let seen = 0;
  while (true) {
    const reply = await client.eval(STATS_PAGE_SCRIPT, {
      keys: [REDIS_META_KEYS],
      arguments: [min, String(pageSize), String(now), prefix, detail, String(above)],
    });
    const page = JSON.parse(String(reply)) as Page;
    if (page.missing !== false) {
      throw new StoreError(
        "",
        "statsMeta",
        `the metadata of ${page.missing} is missing or out of date (written meanwhile by an older invocache?); run \`invocache migrate-store\``,
      );
    }
    for (const g of Array.isArray(page.groups) ? page.groups : []) {
      sum.addGroup({
        ...keyOf(g),
        entries: Number(g[8]),
        bytes: Number(g[9]),
        durationUs: Number(g[10]),
        accepted: Number(g[11]),
        rejected: Number(g[12]),
        inputTokens: Number(g[13]),
        outputTokens: Number(g[14]),
        cacheReadTokens: Number(g[15]),
        cacheWriteTokens: Number(g[16]),
      });
    }
    for (const u of Array.isArray(page.usages) ? page.usages : []) {
      sum.addUsage({
        ...keyOf(u),
        entries: Number(u[8]),
        inputTokens: Number(u[9]),
        outputTokens: Number(u[10]),
        cacheReadTokens: Number(u[11]),
        cacheWriteTokens: Number(u[12]),
      });
    }
    sum.addRuns(page.runs);
    sum.addProblems(
      page.problems,
      page.firstProblem === false
        ? undefined
        : { key: page.firstProblem, problem: page.problem || page.firstProblem },
    );
    if (page.firstPair !== false && page.lastPair !== false) {
      sum.addIds(page.ids, page.firstPair, page.lastPair);
    }
    sum.addTimes(page.oldest || undefined, page.newest || undefined);
    seen += page.n;
    onProgress?.(seen);
    if (page.stop || page.n < pageSize || page.last === false) break;
    min = `(${page.last}`;
  }
  return sum.result();
}
