-- Output identity: an error object that is a table with __tostring, then
-- one that is not a string at all.
local e = setmetatable({}, {__tostring = function() return "custom error" end})
print(pcall(error, e))
if arg[1] == "t" then error(e) else error({}) end
