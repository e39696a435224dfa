-- Ground truth: errors thrown from inside C functions (an argument error
-- raised in string.rep, an error from a sort comparator), caught by pcall,
-- alternating with pure Lua work. The work must keep its share: a bracket
-- left open by an error would charge it to string.rep or table.sort.
-- run_part does the work with no system call (on a loaded machine a
-- system call is where the thread gets descheduled, and the time waiting
-- is charged there); measure_part then does the same, timing each piece
-- with os.clock, and prints "times THROWING WORK" on stderr: the truth,
-- taken in the same process under the same profiler.
local ROUNDS = tonumber(arg[2]) or 600
local function throwing(n)
  for i = 1, n do
    pcall(string.rep, "x", {})
    pcall(table.sort, {3, 2, 1}, function(a, b) error("no") end)
  end
end
local function work(n)
  local s = 0
  for i = 1, n do s = s + i % 7 end
  return s
end
local function run_part()
  local s = 0
  for r = 1, ROUNDS do
    throwing(200)
    s = s + work(80000)
  end
  return s
end
local function measure_part()
  local ta, tb = 0, 0
  for r = 1, ROUNDS // 2 do
    local t0 = os.clock()
    throwing(200)
    local t1 = os.clock()
    work(80000)
    local t2 = os.clock()
    ta, tb = ta + (t1 - t0), tb + (t2 - t1)
  end
  return ta, tb
end
print(run_part())
io.stderr:write(string.format("times %.6f %.6f\n", measure_part()))
