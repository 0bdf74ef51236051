import { luaCommand, SHARED_LUA } from '@pw/shared/lua';
import { WORKER_LUA } from './lua/lua-files.js';

// The circuit breaker's scripts (see `CircuitBreaker`), each run atomically by Redis.

/** The admission of a job before its call (lua/circuit-enter-6.lua). */
export const ENTER = luaCommand({
  name: 'pwCircuitEnter',
  file: 'circuit-enter-6.lua',
  sources: [WORKER_LUA, SHARED_LUA],
});

/** After the call of a job, or instead of it (lua/circuit-leave-7.lua). */
export const LEAVE = luaCommand({
  name: 'pwCircuitLeave',
  file: 'circuit-leave-7.lua',
  sources: [WORKER_LUA, SHARED_LUA],
});
