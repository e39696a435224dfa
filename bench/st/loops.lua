-- loops.lua: loop-heavy (same as loops.st).
local function run(n)
  local sum = 0
  for i = 1, n do
    for j = 1, n do sum = sum + ((i ~ j) % 7) end
  end
  local k = 0
  while k < n * n do sum = sum - (k & 3); k = k + 1 end
  return sum
end
local n = tonumber(arg[1]) or 3000
local t = os.clock()
local r = run(n)
print("result " .. r)
print(string.format("cpu_ms %d", math.floor((os.clock() - t) * 1000)))
