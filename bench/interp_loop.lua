-- interp_loop.lua - the loop of examples/programs/bench_loop.masm (Examples.loop) in Lua 5.4, for
-- bench/interp_loop.sh: same integer and double arithmetic, same order of operations.
local n = tonumber(arg[1] or "1000000")
local s, d = 0, 0.0
local i = 0
while i < n do
  s = (s + i * i) % 1000003
  local j = 0
  repeat
    d = d + j * 0.5
    j = j + 1
  until j >= 10
  i = i + 1
end
print(s)
print(d)
