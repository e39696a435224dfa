-- Output identity: os.exit(false) and an unflushed io.write.
io.write("pending")
os.exit(false)
