-- Primitives called from a callback: a sort whose comparator calls
-- string.rep (heavy), through pcall a string.format that fails, and a
-- coroutine that calls string.rep too; then plain Lua work after it.
-- string.rep must sit under the comparator, the comparator under
-- table.sort, and the work after the sort must be the main chunk's own
-- (nothing left open by the error).
local N = tonumber(arg[1]) or 3000
local gen = coroutine.wrap(function()
  while true do coroutine.yield(#string.rep("y", 1000)) end
end)
local function cmp(a, b)
  local s = #string.rep("x", 3000) + gen()
  pcall(string.format, "%d", "not a number")
  return a + s < b + s
end
local function sort_it()
  local t, x = {}, 12345
  for i = 1, N do x = (x * 1103515245 + 12345) % 2147483648; t[i] = x end
  table.sort(t, cmp)
  return t
end
local function after()
  local s = 0
  for i = 1, 30000000 do s = s + i % 7 end
  return s
end
local c0 = os.clock()
sort_it()
local c1 = os.clock()
after()
local c2 = os.clock()
io.stderr:write(string.format("sort %.3f after %.3f\n", c1 - c0, c2 - c1))
