-- collections.lua: the same collection work as collections.st.
local function run(n)
  local oc = {}
  for i = 1, n do oc[#oc + 1] = i * 2 end
  local sum = 0
  for _, v in ipairs(oc) do sum = sum + v end
  local sel = {}
  for _, v in ipairs(oc) do if v % 3 == 0 then sel[#sel + 1] = v end end
  sum = sum + #sel
  local d = {}
  for i = 1, n // 4 do d[i] = i * i end
  for i = 1, n // 4 do sum = sum + d[i] end
  local flags = {}
  for i = 1, n do flags[i] = true end
  local primes = 0
  for i = 2, n do
    if flags[i] then
      primes = primes + 1
      for k = i * i, n, i do flags[k] = false end
    end
  end
  return sum + primes
end
local n = tonumber(arg[1]) or 1000000
local t = os.clock()
local r = run(n)
print("result " .. r)
print(string.format("cpu_ms %d", math.floor((os.clock() - t) * 1000)))
