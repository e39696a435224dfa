-- 100k-deep recursion: descend, work at the bottom, come back up; then
-- the same work at depth 1. "plain" skips nothing: it is what bench/lua
-- times against lua5.4.
local DEPTH = tonumber(arg[1]) or 100000
local function bottom_work()
  local s = 0
  for i = 1, 30000000 do s = s + i % 3 end
  return s
end
local function down(n)
  if n == 0 then local r = bottom_work() return r end
  local r = down(n - 1)
  return r
end
print(down(DEPTH))
print(bottom_work())
