-- wrk script: A2A 1.0 JSON-RPC SendMessage with a unique messageId per request.
-- BENCH_STREAM=1 sends SendStreamingMessage instead: each request is one whole SSE stream, and
-- with BENCH_VERIFY its events (`data:` lines) are counted. BENCH_METHOD=list sends ListTasks
-- (pageSize 20: the caller's newest tasks) instead, and checks each answer carries `tasks`.
--
--   BENCH_RUN_ID=<unique tag> wrk -t2 -c32 -d10s -s bench/send_message.lua <JSON-RPC URL>
--
-- The URL's path is the JSON-RPC endpoint (e.g. /api/v1/agents/echo/a2a for Sextant, / for
-- the Python peer). Every request carries `A2A-Version: 1.0` and Content-Type application/json.
-- messageIds are "<BENCH_RUN_ID>-t<thread>-<n>", so they never repeat within or across runs as
-- long as the caller passes a fresh BENCH_RUN_ID per phase (a server MAY dedupe by messageId,
-- which would turn a repeat into a cheaper lookup).
--
-- BENCH_VERIFY (default 1): check every response is HTTP 200 containing TASK_STATE_COMPLETED;
-- the count of responses that are not is reported as "bad". BENCH_VERIFY=0 skips the check
-- (wrk then does not hand response bodies to Lua at all).
--
-- BENCH_BINDING=rest speaks the HTTP+JSON binding instead (spec §11): the URL is then the
-- Agent's HTTP+JSON base (e.g. /api/v1/agents/echo for Sextant), and requests go to
-- <base>/message:send (or :stream) with the bare SendMessageRequest as body, or GET
-- <base>/tasks?pageSize=20 for BENCH_METHOD=list; the checks are the same.
--
-- done() prints one machine-readable line:  WRK_RESULT {json}

local threads = {}
local run_id = os.getenv("BENCH_RUN_ID") or ("run" .. os.time())
local text = os.getenv("BENCH_TEXT") or "hello from wrk"
local verify = os.getenv("BENCH_VERIFY") ~= "0"
local stream = os.getenv("BENCH_STREAM") == "1"
local list = os.getenv("BENCH_METHOD") == "list"
local rest = os.getenv("BENCH_BINDING") == "rest"

function setup(thread)
  table.insert(threads, thread)
  thread:set("tid", #threads)
  thread:set("run_id", run_id)
end

local counter = 0
local prefix
local body_head
local body_tail
local path

function init(args)
  prefix = run_id .. "-t" .. tostring(tid) .. "-"
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["A2A-Version"] = "1.0"
  local method = "SendMessage"
  if stream then
    method = "SendStreamingMessage"
    wrk.headers["Accept"] = "text/event-stream"
  end
  body_head = '{"jsonrpc":"2.0","method":"' .. method .. '","id":'
  body_tail = ',"role":"ROLE_USER","parts":[{"text":"' .. text .. '"}]}}}'
  if rest then
    local base = string.gsub(wrk.path, "/+$", "")
    path = base .. (stream and "/message:stream" or "/message:send")
    body_tail = ',"role":"ROLE_USER","parts":[{"text":"' .. text .. '"}]}}'
    if list then
      path = base .. "/tasks?pageSize=20"
      wrk.method = "GET"
      wrk.headers["Content-Type"] = nil
    end
  end
  bad = 0
  events = 0
end

function request()
  counter = counter + 1
  if rest then
    if list then
      return wrk.format(nil, path, nil, nil)
    end
    return wrk.format(nil, path, nil,
      '{"message":{"messageId":"' .. prefix .. counter .. '"' .. body_tail)
  end
  if list then
    return wrk.format(nil, nil, nil,
      '{"jsonrpc":"2.0","method":"ListTasks","id":' .. counter .. ',"params":{"pageSize":20}}')
  end
  local body = body_head .. counter
    .. ',"params":{"message":{"messageId":"' .. prefix .. counter .. '"'
    .. body_tail
  return wrk.format(nil, nil, nil, body)
end

if verify then
  function response(status, headers, body)
    local want = "TASK_STATE_COMPLETED"
    if list then want = '"tasks"' end
    if status ~= 200 or not string.find(body, want, 1, true) then
      bad = bad + 1
    end
    if stream then
      local at = 1
      while true do
        local i = string.find(body, "data:", at, true)
        if not i then break end
        events = events + 1
        at = i + 5
      end
    end
  end
end

function done(summary, latency, requests)
  local nbad, nevents = 0, 0
  for _, t in ipairs(threads) do
    nbad = nbad + (t:get("bad") or 0)
    nevents = nevents + (t:get("events") or 0)
  end
  local e = summary.errors
  io.write(string.format(
    'WRK_RESULT {"requests":%d,"duration_us":%d,"bytes":%d,'
      .. '"errors_connect":%d,"errors_read":%d,"errors_write":%d,"errors_status":%d,"errors_timeout":%d,'
      .. '"p50_us":%d,"p90_us":%d,"p99_us":%d,"mean_us":%.1f,"max_us":%d,"verified":%s,"bad":%d,'
      .. '"events":%d}\n',
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency.mean, latency.max, verify and "true" or "false", nbad, nevents))
end
