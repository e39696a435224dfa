-- Ground truth: coroutine ping-pong. A producer (one body function) and a
-- consumer loop in the main process hand items back and forth; each side
-- does its own amount of work per item (~20 us a round trip, so that the
-- switches themselves, charged to the coroutine, weigh ~2 %). "truth"
-- times each side's work alone.
local N = tonumber(arg[2]) or 10000
local function produce_work(i)
  local s = 0
  for k = 1, 3000 do s = s + (i * k) % 13 end
  return s
end
local function consume_work(v)
  local s = 0
  for k = 1, 1000 do s = s + (v + k) % 11 end
  return s
end
if arg[1] == "truth" then
  local t0 = os.clock()
  for i = 1, N do produce_work(i) end
  local t1 = os.clock()
  for i = 1, N do consume_work(i) end
  local t2 = os.clock()
  print(string.format("%.6f %.6f", t1 - t0, t2 - t1))
else
  local producer = coroutine.create(function()
    for i = 1, N do coroutine.yield(produce_work(i)) end
  end)
  local total = 0
  while true do
    local ok, v = coroutine.resume(producer)
    if not v then break end
    total = total + consume_work(v)
  end
  print(total)
end
