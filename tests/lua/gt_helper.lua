-- Ground truth: short C calls (string.byte) with a small Lua function
-- between them, in a loop: the brackets come every microsecond or so, and
-- the Lua function in between must keep its own share (not be charged to
-- the loop that calls both). "truth" prints the CPU seconds of each part
-- timed alone (plain lua5.4); "run" runs them interleaved for spyon.
local N = tonumber(arg[2]) or 1000000
local byte = string.byte
local function helper(x)
  local s = x
  for i = 1, 40 do s = s + i % 7 end
  return s
end
local function calls(n)
  local x = 0
  for i = 1, n do x = x + byte("abc", 2) + byte("abc", 3) end
  return x
end
local function helpers(n)
  local x = 0
  for i = 1, n do x = x + helper(i) end
  return x
end
local function loop(n)
  local x = 0
  for i = 1, n do x = x + byte("abc", 2) + byte("abc", 3) + helper(i) end
  return x
end
if arg[1] == "truth" then
  local t0 = os.clock()
  calls(N)
  local t1 = os.clock()
  helpers(N)
  local t2 = os.clock()
  print(string.format("%.6f %.6f", t1 - t0, t2 - t1))
else
  print(loop(N))
end
