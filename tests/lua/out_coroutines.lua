-- Output identity: coroutine edge cases (resuming a running or dead
-- coroutine, errors through wrap, a C function as a body).
local co
co = coroutine.create(function() print(coroutine.resume(co)) coroutine.yield(1) end)
print(coroutine.resume(co))
print(coroutine.resume(co))
print(coroutine.resume(co))
print(pcall(coroutine.resume, 42))
local w = coroutine.wrap(function() error("boom") end)
print(pcall(w))
local w2 = coroutine.wrap(function() error({}) end)
print(select("#", pcall(w2)))
print(coroutine.wrap(string.rep)("x", 3))
