-- Ground truth: table.sort with a Lua comparator. "run" sorts once;
-- spyon's exact bracket clock times table.sort's own time (without its
-- callbacks), against which the sampled split is checked. "truth" times,
-- under plain lua5.4, a sort with the default order (table.sort's own
-- work) and the comparator called as often from a Lua loop.
local N = tonumber(arg[2]) or 40000
local function data()
  local t, x = {}, 12345
  for i = 1, N do x = (x * 1103515245 + 12345) % 2147483648; t[i] = x end
  return t
end
local function cmp(a, b)
  local s = 0
  for i = 1, 60 do s = s + i end
  return a < b
end
local function timed_sort(t)
  table.sort(t, cmp)
end
if arg[1] == "truth" then
  local calls = 0
  table.sort(data(), function(a, b) calls = calls + 1 return a < b end)
  local t = data()
  local c0 = os.clock()
  table.sort(t)
  local c1 = os.clock()
  local a, b = 1, 2
  for i = 1, calls do cmp(a, b) end
  local c2 = os.clock()
  print(string.format("%.6f %.6f %d", c1 - c0, c2 - c1, calls))
else
  local t = data()
  timed_sort(t)
  print(t[1] <= t[2])
end
