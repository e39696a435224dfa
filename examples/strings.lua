-- strings.lua: string and table work done by the standard library's C
-- functions (string.rep, gsub, format, find, table.concat), with a little
-- Lua around them.
--   spyon examples/strings.lua [rounds]
local rounds = tonumber(arg[1]) or 40

local function make_text(words)
  local parts = {}
  for i = 1, words do
    parts[#parts + 1] = string.format("word%d", i % 997)
  end
  return table.concat(parts, " ")
end

local function count_words(text)
  local n = 0
  for _ in text:gmatch("%a+%d*") do n = n + 1 end
  return n
end

local function shout(text)
  return (text:gsub("word(%d+)", function(d) return "W" .. d end))
end

local total = 0
for r = 1, rounds do
  local text = make_text(20000)
  total = total + count_words(text)
  local loud = shout(text)
  total = total + #loud:upper() + #string.rep(loud, 3)
  if text:find("word996", 1, true) then total = total + 1 end
end
print("total", total)
