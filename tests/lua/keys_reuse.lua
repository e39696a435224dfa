-- Frame keys survive collection: chunks are loaded, run, dropped and
-- collected in turn, so their closures' and prototypes' memory is reused
-- by the next ones. Three chunk names, each doing the same work: each must
-- be its own frame with about a third of the time.
local code = "local s = 0 for k = 1, 200000 do s = s + k % 5 end return s"
local total = 0
for i = 1, 150 do
  local f = load(code, "=chunk" .. (i % 3))
  total = total + f()
  f = nil
  collectgarbage()
end
print(total)
