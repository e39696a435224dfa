-- deep.lua: work at the bottom of a 100k-deep recursion (bench/lua).
local DEPTH = tonumber(arg[1]) or 100000
local function bottom_work()
  local s = 0
  for i = 1, 40000000 do s = s + i % 3 end
  return s
end
local function down(n)
  if n == 0 then local r = bottom_work() return r end
  local r = down(n - 1)
  return r
end
print(down(DEPTH))
