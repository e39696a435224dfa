-- Many generators of one body function: one process by default.
local N = tonumber(arg[1]) or 100000
local W = tonumber(arg[2]) or 0
local function body(n)
  local s = 0
  for i = 1, n do
    for k = 1, W do s = s + k % 3 end
    s = s + i
    coroutine.yield(s)
  end
end
local total = 0
for i = 1, N do
  local g = coroutine.wrap(body)
  total = total + g(3) + g() + g()
end
print(total)
