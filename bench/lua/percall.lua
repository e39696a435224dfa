-- bench/lua/percall.lua: what one call of a wrapped C function costs, by
-- the least time of K chunks of N calls (os.clock), so that a guest whose
-- host slows it now and then (by up to 2x: this project's on 12-07) still
-- reads its unslowed speed. Under `spyon --no-profile` and `spyon -i
-- 1000000` the difference is what bracketing a call costs.
--   spyon [options] percall.lua [K]
local up, fmt, s = string.upper, string.format, "ab"
local N, K = 20000, tonumber(arg[1]) or 300
local sink = 0

local function least(f)
  local m = math.huge
  for _ = 1, K do
    local t0 = os.clock()
    f()
    local t = os.clock() - t0
    if t < m then m = t end
  end
  return m / N * 1e9
end

local loop = least(function() for _ = 1, N do sink = sink + #s end end)
local upper = least(function() for _ = 1, N do sink = sink + #up(s) end end)
local format = least(function()
  for i = 1, N do sink = sink + #fmt("word%d", i) end
end)
print(string.format("ns a loop step %.2f, string.upper(\"ab\") %.2f, " ..
                    "string.format(\"word%%d\", i) %.2f", loop, upper, format))
