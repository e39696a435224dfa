-- fib.lua: recursive Fibonacci, the interpreter's call path.
--   spyon examples/fib.lua [n]
local function fib(n)
  if n < 2 then return n end
  return fib(n - 1) + fib(n - 2)
end
local n = tonumber(arg[1]) or 35
print(string.format("fib(%d) = %d", n, fib(n)))
