-- sorting.lua: table.sort at many sizes, so that `spyon costs` can fit
-- its cost against n; then a sort with a Lua comparator, whose time the
-- report shows under table.sort.
--   spyon -o sort.spy examples/sorting.lua && spyon costs sort.spy
local seed = 42
local function random_table(n)
  local t = {}
  for i = 1, n do
    seed = (seed * 1103515245 + 12345) % 2147483648
    t[i] = seed
  end
  return t
end

local function by_last_digit(a, b)
  local da, db = a % 10, b % 10
  if da ~= db then return da < db end
  return a < b
end

local sorted = 0
for round = 1, 4 do
  local n = 500
  while n <= 256000 do
    local t = random_table(n)
    table.sort(t)
    sorted = sorted + (t[1] <= t[n] and 1 or 0)
    n = n * 2
  end
end
local u = random_table(100000)
table.sort(u, by_last_digit)
print("sorted", sorted + 1)
