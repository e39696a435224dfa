-- fib.lua: send-heavy: naive recursive Fibonacci (same algorithm as fib.st).
local function fib(n)
  if n < 2 then return n end
  return fib(n - 1) + fib(n - 2)
end
local n = tonumber(arg[1]) or 32
local t = os.clock()
local r = fib(n)
print("result " .. r)
print(string.format("cpu_ms %d", math.floor((os.clock() - t) * 1000)))
