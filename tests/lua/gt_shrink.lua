-- Deep stacks whose CallInfo list the collector shrinks in between:
-- work at the bottom of a 60k-deep recursion, then full collections with
-- the stack shallow (luaE_shrinkCI frees every other unused node and
-- relinks the rest), then the work under another function 30k deep, and
-- again under the first 20k deep. Each sample's root-most frames and its
-- cut count must match the recursion it was taken in.
local function work(n) local s = 0 for i = 1, n do s = s + i % 3 end return s end
local function down(n, k)
  if n == 0 then local r = work(k) return r end
  local r = down(n - 1, k)
  return r
end
local function down2(n, k)
  if n == 0 then local r = work(k) return r end
  local r = down2(n - 1, k)
  return r
end
local K = tonumber(arg[1]) or 2000000
for round = 1, 2 do
  down(60000, K)
  collectgarbage() collectgarbage()
  down2(30000, K)
  collectgarbage()
  down(20000, K)
end
