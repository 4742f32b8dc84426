local i = 0
request = function()
  i = i % 64 + 1
  return wrk.format("GET", string.format("/bench/%s/%d.m4s", os.getenv("R"), i))
end
