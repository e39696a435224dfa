-- Ground truth: string.gsub with a heavy Lua replacement function that
-- does nearly all the work. "truth" times gsub with a string replacement
-- (its own work) and the function called as often from a Lua loop.
local N = tonumber(arg[2]) or 600
local subject = string.rep("abcdefghij", N // 10)
local function heavy(c)
  local s = 0
  for i = 1, 2000 do s = s + (i * #c) % 7 end
  return c
end
if arg[1] == "truth" then
  local t0 = os.clock()
  for r = 1, 30 do string.gsub(subject, "%a", "%0") end
  local t1 = os.clock()
  for r = 1, 30 do for i = 1, #subject do heavy("a") end end
  local t2 = os.clock()
  print(string.format("%.6f %.6f", t1 - t0, t2 - t1))
else
  local n = 0
  for r = 1, 30 do n = n + select(2, string.gsub(subject, "%a", heavy)) end
  print(n)
end
