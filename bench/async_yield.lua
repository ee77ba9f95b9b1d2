-- async_yield.lua - bench/async_yield.masm in Lua 5.4 (bench/prof_cost.sh): a coroutine that
-- yields n times, resumed by the main loop until it is done, summing 0 .. n-1 inside it.
local n = tonumber(arg[1] or "1000000")
local gen = coroutine.create(function(k)
  local sum, i = 0, 0
  while i < k do
    coroutine.yield()
    sum = sum + i
    i = i + 1
  end
  return sum
end)
local ok, result = coroutine.resume(gen, n)
while coroutine.status(gen) ~= "dead" do
  ok, result = coroutine.resume(gen)
end
print(result)
