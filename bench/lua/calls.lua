-- bench/lua/calls.lua: N calls of a cheap wrapped C function (string.upper
-- on two bytes), what a bracketed call costs the Lua host by itself.
--   lua5.4 calls.lua [N]
local up, s = string.upper, "ab"
local n = 0
for i = 1, tonumber(arg[1]) or 5000000 do n = n + #up(s) end
print(n)
