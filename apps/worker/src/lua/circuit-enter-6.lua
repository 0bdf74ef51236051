--[[
  The admission of a job before its call to a partner target, by the target's circuit: a clean
  circuit lets it call; a suspect one (failed lately, or recovering from a close) bounds the calls
  in flight; an open one holds it in its line (circuitLine), and lets the first in line through
  as the probe once per interval.

    Input:
      KEYS[1] the circuit (a hash)
      KEYS[2] the jobs it holds (a sorted set, first in line first)
      KEYS[3] the calls in flight while the target is suspect (a sorted set, score = lease end)
      KEYS[4] the set of every target
      KEYS[5] the job's webhook's failures against the target (a hash)
      KEYS[6] the jobs that failed since the target's last 2xx (a set)

      ARGV[1]  the job id
      ARGV[2]  its order (creation time, ms)
      ARGV[3]  the failure threshold
      ARGV[4]  the probe interval (ms, jittered)
      ARGV[5]  the lease of a call in flight or of the probe (ms)
      ARGV[6]  the longest hold (ms)
      ARGV[7]  the target
      ARGV[8]  '1' to hold only: a job whose call just failed on an open circuit is never the probe
               at once, and is held at the back of the line (1 ms if the circuit closed since; an
               interval for the first failure after a close, while the next call tells)
      ARGV[9]  the held jobs' key prefix, to pass over jobs removed by hand ('' for none)
      ARGV[10] the time in ms ('' for Redis's clock)

    Output:
      {kind, n, ...}:
        {'call', 1, 1} call, holding a lease in KEYS[3]; {'call', 0, report} call, untracked (a
          clean circuit; report = 1 when the job has failures to forget, so its 2xx is reported)
        {'probe', 0} call: the one probe of the interval
        {'wait', 0} the target is suspect and enough calls are in flight, or this job failed
          since its last 2xx and another did so less than an interval ago: try again in a moment
        {'hold', ms, newly[, first, inMs, tell]} the circuit is open: hold the job ms (newly = 1
          when it was not held); `first`: the job first in line when it is another (with no held
          jobs' key prefix, the caller checks that it still exists), to be woken for the next
          probe in inMs when tell = 1 (it was not told yet)
]]
--- @include "includes/circuitEnter"
return circuitEnter(KEYS, ARGV)
