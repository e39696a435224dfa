-- sends.lua: method calls on objects with fields (same as sends.st).
local Vec = {}
Vec.__index = Vec
function Vec.new(x, y) return setmetatable({x = x, y = y}, Vec) end
function Vec:getx() return self.x end
function Vec:gety() return self.y end
function Vec:add(dx, dy) self.x = self.x + dx; self.y = self.y + dy end
function Vec:dot(v) return self.x * v:getx() + self.y * v:gety() end
local Vec2 = setmetatable({}, {__index = Vec})
Vec2.__index = Vec2
function Vec2.new(x, y) return setmetatable({x = x, y = y}, Vec2) end
function Vec2:dot(v) return self.x * v:gety() - self.y * v:getx() end
local function run(n)
  local a, b, acc = Vec.new(1, 2), Vec2.new(3, 4), Vec.new(0, 0)
  for i = 1, n do
    acc:add(a:dot(b), b:dot(a))
    acc:add(i % 3, 1)
  end
  return acc:getx() + acc:gety()
end
local n = tonumber(arg[1]) or 3000000
local t = os.clock()
local r = run(n)
print("result " .. r)
print(string.format("cpu_ms %d", math.floor((os.clock() - t) * 1000)))
