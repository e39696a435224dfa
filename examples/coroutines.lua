-- coroutines.lua: generators and a producer/consumer pipeline. Each
-- coroutine body function is one process in the report (spyon
-- --coroutine-each: one per coroutine).
--   spyon examples/coroutines.lua
local function numbers(n)
  return coroutine.wrap(function()
    for i = 1, n do coroutine.yield(i) end
  end)
end

local function squares(src)
  return coroutine.wrap(function()
    for v in src do
      local s = 0
      for k = 1, 50 do s = s + v * k % 7 end
      coroutine.yield(v * v + s)
    end
  end)
end

local total = 0
for round = 1, 200 do
  for v in squares(numbers(2000)) do total = total + v % 1000 end
end
print("total", total)
