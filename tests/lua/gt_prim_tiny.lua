-- Ground truth: a long C call followed by a tiny Lua function, in a loop.
-- "truth" prints the CPU seconds of each part timed alone (plain lua5.4);
-- "run" runs them interleaved for spyon.
local N = tonumber(arg[2]) or 1500
local function tiny(x) return x + 1 end
local function rep() return string.rep("abcd", 250000) end
if arg[1] == "truth" then
  local t0 = os.clock()
  for i = 1, N do rep() end
  local t1 = os.clock()
  local x = 0
  for i = 1, N do x = tiny(x) end
  local t2 = os.clock()
  print(string.format("%.6f %.6f", t1 - t0, t2 - t1))
else
  local x = 0
  for i = 1, N do
    local s = string.rep("abcd", 250000)
    x = tiny(x)
  end
  print(x)
end
