-- Output identity: a normal run, sorting, gsub, coroutines, utf8, io.
local t = {}
for i = 1, 50 do t[i] = (i * 37) % 101 end
table.sort(t, function(a, b) return a > b end)
print(table.concat(t, ","))
print(("hello world"):gsub("o", function(c) return c:upper() end))
for w in ("one two three"):gmatch("%a+") do io.write(w, ";") end
print()
print(utf8.len("héllo"), utf8.char(72, 233))
local gen = coroutine.create(function() for i = 1, 3 do coroutine.yield(i) end end)
while true do
  local ok, v = coroutine.resume(gen)
  if not v then break end
  print(ok, v, coroutine.status(gen))
end
print(coroutine.resume(gen))
print(collectgarbage("count") > 0, collectgarbage())
print(math.type(1), math.type(1.0), 7 // 2, 2^10, math.maxinteger)
print(load("return 1 + ...")(41))
local parts = {"ret", "urn ", "'read'"}
local i = 0
print(load(function() i = i + 1 return parts[i] end)())
return 5
