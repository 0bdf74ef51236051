// @pw/shared/lua: for the authors of an app's own Lua scripts. The loader (luaFilesIn, luaCommand,
// withCommand), @pw/shared's scripts and includes (SHARED_LUA) with the constants of
// includes/outcomeChange.lua, and the outcome change's command and arguments (outcome-change-3.lua,
// which bench:round-trips measures).
export * from './lua-script.js';
export { SHARED_LUA } from './lua-files.js';
export { withCommand } from '../redis.js';
export type { LuaCommand } from '../redis.js';
export {
  attemptOf,
  OUTCOME_CHANGE_COMMAND,
  OUTCOME_CHANGE_CONSTANTS,
  outcomeChangeCall,
} from '../outcomes/outcome-change.js';
export type {
  ChangeCall,
  ChangeOptions,
  OutcomeChangeCommand,
} from '../outcomes/outcome-change.js';
