import { luaCommand, SHARED_LUA } from '@pw/shared';
import { WORKER_LUA } from './lua/lua-files.js';

// The circuit breaker's scripts (see `CircuitBreaker`), each run atomically by Redis.

/**
 * Failed probes after which a held job is released: it calls as on a closed circuit and spends
 * its attempts (a poison input must not hold the circuit open).
 */
export const RELEASED_AFTER_FAILED_PROBES = 3;

/** The placeholders of the breaker's scripts. */
const constants = { RELEASED_AFTER_FAILED_PROBES };

/** The admission of a job before its call (lua/circuit-enter-5.lua). */
export const ENTER = luaCommand({
  name: 'pwCircuitEnter',
  file: 'circuit-enter-5.lua',
  sources: [WORKER_LUA, SHARED_LUA],
  constants,
});

/** After the call of a job, or instead of it (lua/circuit-leave-5.lua). */
export const LEAVE = luaCommand({
  name: 'pwCircuitLeave',
  file: 'circuit-leave-5.lua',
  sources: [WORKER_LUA, SHARED_LUA],
  constants,
});
