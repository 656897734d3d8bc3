-- Pipelined requests, as in TechEmpower's plaintext test: `wrk ... -s pipeline.lua URL -- 16`
-- sends 16 requests back to back on a connection, then reads the 16 responses.
-- wrk counts every response, so requests/s counts requests, not batches; latency is per batch.

init = function(args)
  local depth = tonumber(args[1]) or 1
  local r = {}
  for i = 1, depth do
    r[i] = wrk.format()
  end
  req = table.concat(r)
end

request = function()
  return req
end

-- The result line for run.sh, from report.lua beside this file.
dofile(debug.getinfo(1, "S").source:match("^@?(.*/)") .. "report.lua")
