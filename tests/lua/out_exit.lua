-- Output identity: os.exit with a code after output on both streams.
io.stdout:write("to stdout\n")
io.stderr:write("to stderr\n")
for i = 1, 3 do print(i, i * i, ("%q"):format("a\nb")) end
os.exit(tonumber(arg[1]) or 3)
